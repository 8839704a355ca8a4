import Foundation
import Synchronization
import Testing
import Canvas
import TileMath
import TestSupport
@testable import TileSources

/// Cache-Control and Expires as TileKit reads them (RFC 9111), and freshness through
/// composition.
@Suite struct CacheDirectivesTests {
    @Test(arguments: [
        (["Cache-Control": "max-age=60"], 60.0, false, false),
        (["cache-control": "public, s-maxage=10, max-age=60"], 10, false, false),  // a shared cache takes s-maxage
        (["Cache-Control": "max-age=\"300\""], 300, false, false),
        (["Cache-Control": "no-store"], nil, true, false),
        (["Cache-Control": "no-cache, max-age=600"], 600, false, true),
        (["Cache-Control": "no-cache=\"Set-Cookie\", max-age=600"], 600, false, false),  // only a field is restricted
        // Invalid lifetimes are stale, never a trap or an eternity.
        (["Cache-Control": "max-age=1e999"], 0, false, false),
        (["Cache-Control": "max-age=nan"], 0, false, false),
        (["Cache-Control": "max-age=-5"], 0, false, false),
        (["Cache-Control": "max-age=99999999999999999999999"], 2_147_483_648, false, false),
        (["Expires": "0"], 0, false, false),
        (["Expires": "Sun, 06 Nov 1994 08:49:37 GMT", "Date": "Sun, 06 Nov 1994 08:48:37 GMT"], 60, false, false),
        (["Cache-Control": "max-age=100", "Age": "30"], 70, false, false),
        (["Cache-Control": "max-age=100", "Age": "3000"], 0, false, false),
        ([:], nil, false, false),
    ] as [([String: String], Double?, Bool, Bool)])
    func parsesFreshness(headers: [String: String], maxAge: Double?, noStore: Bool, noCache: Bool) {
        let directives = CacheDirectives(headers: headers)
        #expect(directives.maxAgeSeconds == maxAge && directives.noStore == noStore && directives.noCache == noCache)
    }

    @Test func retryAfterIsBoundedAndNeverTraps() {
        #expect(RemoteTileSource.retryAfter(["Retry-After": "7"]) == .seconds(7))
        #expect(RemoteTileSource.retryAfter(["Retry-After": "99999999999"]) == .seconds(86_400))
        #expect(RemoteTileSource.retryAfter(["Retry-After": "1e999"]) == nil)
        #expect(RemoteTileSource.retryAfter(["Retry-After": "nan"]) == nil)
        #expect(RemoteTileSource.retryAfter(["Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"]) == .seconds(0))
    }

    @Test func freshnessCombinesToTheStrictest() {
        let a = Freshness(expiresAt: 100), b = Freshness(expiresAt: 50, noCache: true), none = Freshness.unlimited
        #expect(a.combined(with: b) == Freshness(expiresAt: 50, noCache: true))
        #expect(a.combined(with: none) == a && none.combined(with: none) == none)
        #expect(a.combined(with: Freshness(noStore: true)) == Freshness(expiresAt: 100, noStore: true))
        #expect(a.secondsLeft(now: 40.5) == 59 && a.secondsLeft(now: 200) == 0 && none.secondsLeft(now: 0) == nil)
    }
}

/// A source whose every tile carries a given freshness.
struct FreshSource: TileSource {
    let metadata: TileSetMetadata
    let freshness: Freshness
    let color: Color

    init(_ freshness: Freshness, color: Color = .white, maxZoom: Int = 22) {
        metadata = TileSetMetadata(name: "fresh", format: .png, minZoom: 0, maxZoom: maxZoom, tileSize: 256)
        self.freshness = freshness
        self.color = color
    }

    func tile(_ request: TileRequest) async throws -> TileResult {
        .tile(TileData(bytes: try RGBAImage(width: 256, height: 256, color: color).encoded(), format: .png, freshness: freshness))
    }
}

@Suite struct ComposedFreshnessTests {
    let tile = TileRequest(TileID(z: 5, x: 3, y: 4))

    func layer(_ source: any TileSource, opacity: Double = 1) -> TileLayer {
        var options = LayerOptions()
        options.opacity = opacity
        return TileLayer(source: source, options: options)
    }

    /// A lone tile passed through keeps its freshness; a composed one takes the minimum of
    /// its parts; no-store in any part makes the whole no-store.
    @Test func composedTilesTakeTheStrictestFreshness() async throws {
        let soon = Freshness(expiresAt: 1_000), later = Freshness(expiresAt: 5_000)
        let alone = try await TileComposer(layers: [layer(FreshSource(later))]).tile(tile)
        #expect(alone.data?.freshness == later && alone.data?.provenance == .native)
        let both = try await TileComposer(layers: [layer(FreshSource(later)), layer(FreshSource(soon, color: .black), opacity: 0.5)]).tile(tile)
        #expect(both.data?.freshness == soon && both.data?.provenance == .composed)
        let withLocal = try await TileComposer(layers: [layer(FreshSource(.unlimited)), layer(FreshSource(later), opacity: 0.5)]).tile(tile)
        #expect(withLocal.data?.freshness == later)
        let noStore = try await TileComposer(layers: [layer(FreshSource(later)), layer(FreshSource(Freshness(noStore: true)), opacity: 0.5)]).tile(tile)
        #expect(noStore.data?.freshness.noStore == true && noStore.data?.freshness.expiresAt == 5_000)
    }

    /// Overzoomed and resampled tiles keep the freshness of the source tile they came from.
    @Test func overzoomKeepsTheSourceFreshness() async throws {
        let fresh = Freshness(expiresAt: 2_000, noCache: true)
        let overzoomed = try await TileComposer(layers: [layer(FreshSource(fresh, maxZoom: 3))]).tile(tile)
        #expect(overzoomed.data?.freshness == fresh)
        guard case .overzoomed? = overzoomed.data?.provenance else { Issue.record("\(String(describing: overzoomed.data?.provenance))"); return }
    }
}

/// A clock tests move by hand, seconds since 1970.
final class TestClock: Sendable {
    private let seconds: Mutex<Double>
    init(_ start: Double = Date().timeIntervalSince1970.rounded(.down)) { seconds = Mutex(start) }
    var now: Double { seconds.withLock { $0 } }
    func advance(_ by: Double) { seconds.withLock { $0 += by } }
}

/// The disk cache honours the upstream's no-store, no-cache, max-age and Expires.
@Suite(.serialized) struct CacheFreshnessTests {
    let server: TestTileServer
    let tile = TileID(z: 10, x: 301, y: 385)

    init() throws { server = try TestTileServer() }

    func cached(_ path: String, cache: String, clock: TestClock = TestClock()) throws -> CachedTileSource {
        var options = RemoteOptions(userAgent: "TileKitTests/1.0")
        options.retries = 0
        options.requestsPerSecondPerHost = nil
        let remote = try RemoteTileSource(template: URLTemplate(server.url(path)), metadata: TileSetMetadata(name: "fresh"), options: options)
        return try CachedTileSource(upstream: remote, cachePath: cache, policy: CachePolicy(), now: { clock.now })
    }

    /// no-store: nothing in the cache file, and an older copy is removed; the tile says no-store.
    @Test func noStoreIsNeverCached() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("c.mbtiles").path
        let fresh = try await cached("/tiles/{z}/{x}/{y}.png?cc=no-store", cache: path).tile(TileRequest(tile))
        #expect(fresh.data?.freshness.noStore == true)
        #expect(try TileCacheStoreProbe.tiles(path) == 0)
        // A copy kept from before the upstream said no-store goes at its next fetch.
        _ = try await cached("/tiles/{z}/{x}/{y}.png?maxage=0", cache: path).tile(TileRequest(tile))
        #expect(try TileCacheStoreProbe.tiles(path) == 1)
        _ = try await cached("/tiles/{z}/{x}/{y}.png?cc=no-store", cache: path).tile(TileRequest(tile))
        #expect(try TileCacheStoreProbe.tiles(path) == 0)
    }

    /// no-cache: kept, but revalidated before every use, and the tile says no-cache.
    @Test func noCacheIsRevalidatedEveryTime() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await server.resetStats()
        let source = try cached("/tiles/{z}/{x}/{y}.png?cc=no-cache", cache: directory.appendingPathComponent("c.mbtiles").path)
        let first = try await source.tile(TileRequest(tile))
        let second = try await source.tile(TileRequest(tile))
        #expect(first.data?.freshness.noCache == true && second.data?.freshness.noCache == true)
        #expect(second.data?.bytes == first.data?.bytes)
        let stats = try await server.stats()
        #expect(stats.count == 2 && stats.conditional == 1 && stats.statuses == [200, 304])
    }

    /// max-age=5: served from disk for 5 s, then revalidated; the tile carries its expiry.
    @Test func maxAgeSetsTheExpiry() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await server.resetStats()
        let clock = TestClock()
        let start = clock.now
        let source = try cached("/tiles/{z}/{x}/{y}.png?maxage=5", cache: directory.appendingPathComponent("c.mbtiles").path, clock: clock)
        #expect(try await source.tile(TileRequest(tile)).data?.freshness == Freshness(expiresAt: start + 5))
        clock.advance(4)
        #expect(try await source.tile(TileRequest(tile)).data?.freshness == Freshness(expiresAt: start + 5))
        #expect(try await server.stats().count == 1)
        clock.advance(2)
        #expect(try await source.tile(TileRequest(tile)).data?.freshness == Freshness(expiresAt: start + 11))
        let stats = try await server.stats()
        #expect(stats.count == 2 && stats.conditional == 1)
    }

    /// Header values that trapped on main (Duration and Int conversions of +inf) are
    /// answers: an eternal max-age is stale, an eternal Retry-After is none.
    @Test func absurdHeaderValuesDoNotTrap() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = TestClock()
        let path = directory.appendingPathComponent("c.mbtiles").path
        let result = try await cached("/tiles/{z}/{x}/{y}.png?cc=max-age%3D1e999", cache: path, clock: clock).tile(TileRequest(tile))
        #expect(result.data?.freshness == Freshness(expiresAt: clock.now))
        #expect(try TileCacheStoreProbe.store(path).entry(tile)?.expiresAt == clock.now)
        var options = RemoteOptions(userAgent: "TileKitTests/1.0")
        options.retries = 0
        let down = try RemoteTileSource(template: URLTemplate(server.url("/status/503/{z}/{x}/{y}.png?retry-after=1e999")),
                                        metadata: TileSetMetadata(name: "down"), options: options)
        #expect(try await down.tile(TileRequest(tile)) == .unavailable(retryAfter: nil))
    }

    /// Expires (without Cache-Control) sets the expiry; an invalid one ("0") means expired;
    /// with neither, the policy's default.
    @Test func expiresAndTheDefault() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = TestClock()
        for (query, lifetime) in [("cc=none&expires=120", 120.0), ("cc=none&expires-raw=0", 0), ("cc=none", CachePolicy().defaultMaxAge.seconds)] {
            let name = "\(lifetime).mbtiles"
            let result = try await cached("/tiles/{z}/{x}/{y}.png?" + query, cache: directory.appendingPathComponent(name).path, clock: clock).tile(TileRequest(tile))
            let expiresAt = try #require(result.data?.freshness.expiresAt)
            // Expires is relative to the server's Date, which may straddle a second.
            #expect(abs(expiresAt - (clock.now + lifetime)) <= 1, "\(query): \(expiresAt - clock.now)")
            let entry = try #require(try TileCacheStoreProbe.store(directory.appendingPathComponent(name).path).entry(tile))
            #expect(entry.expiresAt == expiresAt)
        }
    }
}
