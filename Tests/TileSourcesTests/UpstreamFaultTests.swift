import Foundation
import Synchronization
import Testing
import Canvas
import TileMath
import TestSupport
@testable import TileSources

/// An upstream that misbehaves, against the fault-injecting server: poison never enters or
/// leaves the cache, stalls are cut off and stay inside their own source. Serialized: the
/// `/switch/` mode is one setting of the shared server.
@Suite(.serialized) struct UpstreamFaultTests {
    let server: TestTileServer

    init() throws { server = try TestTileServer() }

    func remote(_ path: String, _ configure: (inout RemoteOptions) -> Void = { _ in }) throws -> RemoteTileSource {
        var options = RemoteOptions(userAgent: "TileKitTests/1.0 (tests@tilekit.invalid)")
        options.retries = 1
        options.backoff = .milliseconds(10)
        options.requestsPerSecondPerHost = nil
        configure(&options)
        return try RemoteTileSource(template: URLTemplate(server.url(path)), metadata: TileSetMetadata(name: "faulty"), options: options)
    }

    func cached(_ path: String, in directory: URL, name: String = "cache.mbtiles",
                _ configure: (inout RemoteOptions) -> Void = { _ in }) throws -> CachedTileSource {
        var policy = CachePolicy()
        policy.minimumMaxAge = .zero
        return try CachedTileSource(upstream: remote(path, configure), cachePath: directory.appendingPathComponent(name).path, policy: policy)
    }

    /// True when `error` is the one `kind` of the test server must give, naming `url`.
    static func isExpected(_ error: any Error, kind: String, url: String) -> Bool {
        guard let error = error as? RemoteTileError else { return false }
        switch (kind, error) {
        case ("truncated", .undecodable(let u, .png, _)), ("pnghtml", .undecodable(let u, .png, _)):
            return u == url
        case ("html", .notAnImage(let u, let type, let bytes)):
            return u == url && type == "text/html; charset=utf-8" && bytes.hasPrefix("89 50 4e 47")
        case ("empty", .notAnImage(let u, "image/png", "nothing")), ("garbage", .notAnImage(let u, "image/png", _)):
            return u == url
        case ("huge", .tileTooLarge(let u, 50000, 50000, 4096)):
            return u == url
        case ("big", .bodyTooLarge(let u, 8 << 20)):
            return u == url
        default:
            return false
        }
    }

    static let poisons = ["truncated", "pnghtml", "html", "empty", "huge", "big", "garbage"]

    /// With no copy to fall back on, a bad answer is an error that names it, is counted, and
    /// leaves the cache empty.
    @Test(arguments: poisons)
    func aBadAnswerIsAnErrorAndIsNotCached(kind: String) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try cached("/\(kind)/{z}/{x}/{y}.png", in: directory)
        let url = server.url("/\(kind)/7/20/40.png")
        await #expect {
            try await source.tile(TileRequest(TileID(z: 7, x: 20, y: 40)))
        } throws: { error in
            Self.isExpected(error, kind: kind, url: url)
        }
        #expect(source.upstream.counters.badAnswers == 1)
        #expect(try TileCacheStoreProbe.tiles(directory.appendingPathComponent("cache.mbtiles").path) == 0)
    }

    /// A good copy stays through a bad answer: it is served (stale, for a short while) and
    /// stays in the cache file byte for byte; once the upstream recovers, the tile is asked
    /// for again and served fresh.
    @Test(arguments: poisons)
    func aBadAnswerNeverReplacesTheGoodCopy(kind: String) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tile = TileID(z: 8, x: Self.poisons.firstIndex(of: kind) ?? 0, y: 9)
        let path = "/switch/8/\(tile.x)/9.png"
        // max-age=0: every use asks the upstream, so each poison reaches the cache.
        let source = try cached("/switch/{z}/{x}/{y}.png?maxage=0", in: directory)
        let cachePath = directory.appendingPathComponent("cache.mbtiles").path
        try await server.setMode("tiles")
        let good = try #require(try await source.tile(TileRequest(tile)).data)
        #expect(good.provenance == .native)

        try await server.setMode(kind)
        let served = try await source.tile(TileRequest(tile))
        #expect(served.data?.bytes == good.bytes && served.data?.provenance == .stale)
        // Stale copies are reused for a short while only, so the caches above ask again soon.
        let left = served.data?.freshness.secondsLeft(now: Date().timeIntervalSince1970) ?? -1
        #expect((0...30).contains(left), "\(left)")
        #expect(try TileCacheStoreProbe.store(cachePath).entry(tile)?.bytes == good.bytes)
        #expect(source.upstream.counters.badAnswers == 1)

        try await server.setMode("tiles")
        let recovered = try await source.tile(TileRequest(tile))
        #expect(recovered.data?.bytes == good.bytes && recovered.data?.provenance == .native)
        #expect(try await server.stats().paths[path] == 3)
    }

    /// The declared size is refused before decoding: the error is the size, not a decoder's.
    @Test func aTileDeclaringFiftyThousandPixelsIsRefusedFromItsHeader() async throws {
        let source = try remote("/huge/{z}/{x}/{y}.png")
        await #expect(throws: RemoteTileError.tileTooLarge(url: server.url("/huge/3/1/2.png"), width: 50000, height: 50000, maxSide: 4096)) {
            try await source.tile(TileRequest(TileID(z: 3, x: 1, y: 2)))
        }
    }

    /// 9 MB bodies end at 8 MB, whether announced by Content-Length or not.
    @Test func longBodiesAreCutOff() async throws {
        for suffix in ["", "?stream=1"] {
            let source = try remote("/big/{z}/{x}/{y}.png" + suffix)
            await #expect(throws: RemoteTileError.bodyTooLarge(url: server.url("/big/3/1/2.png" + suffix), maxBytes: 8 << 20)) {
                try await source.tile(TileRequest(TileID(z: 3, x: 1, y: 2)))
            }
        }
    }

    /// The deadline covers the whole body: a server that drips a byte a second (which
    /// resets an idle timeout forever) is cut off, counted, and not asked again.
    @Test(.timeLimit(.minutes(1))) func aDrippingOrStalledUpstreamMeetsTheDeadline() async throws {
        for (kind, tile) in [("drip", TileID(z: 4, x: 1, y: 1)), ("stall", TileID(z: 4, x: 2, y: 1))] {
            let source = try remote("/\(kind)/{z}/{x}/{y}.png") { $0.timeout = .milliseconds(1500); $0.retries = 2 }
            #expect(try await source.tile(TileRequest(tile)) == .unavailable(retryAfter: nil))
            #expect(source.counters.deadlines == 1)
            #expect(try await server.stats().paths["/\(kind)/4/\(tile.x)/1.png"] == 1)
        }
    }

    /// Waits until the server has seen `count` requests on paths starting with `prefix`.
    func waitForRequests(_ prefix: String, count: Int) async throws {
        while try await server.stats().paths.filter({ $0.key.hasPrefix(prefix) }).values.reduce(0, +) < count {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stalled requests on one source hold only that source's slots: a second source's
    /// fetch completes while every stalled request is still pending. Cancelling the stalled
    /// requests ends them (a cancel path that cannot deadlock).
    @Test(.timeLimit(.minutes(1))) func aStalledUpstreamDoesNotDelayAnotherSource() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stalled = try cached("/stall/{z}/{x}/{y}.png", in: directory, name: "a.mbtiles") {
            $0.timeout = .seconds(120)
            $0.maxQueueWait = nil
        }
        let healthy = try cached("/tiles/{z}/{x}/{y}.png", in: directory, name: "b.mbtiles")
        let finished = Tally()
        let tasks = (0..<6).map { x in
            Task {
                _ = try? await stalled.tile(TileRequest(TileID(z: 11, x: x, y: 1)))
                finished.add()
            }
        }
        // The stalled upstream holds both of its slots; four more requests wait behind them.
        try await waitForRequests("/stall/11/", count: 2)
        let other = try await healthy.tile(TileRequest(TileID(z: 11, x: 0, y: 0)))
        #expect(other.data?.provenance == .native)
        #expect(finished.value == 0)
        #expect(try await server.stats().paths.filter { $0.key.hasPrefix("/stall/11/") }.count == 2)
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        #expect(finished.value == 6)
    }

    /// Beyond the bound, a request waits `maxQueueWait` at most and is then unavailable
    /// with a Retry-After, while the requests holding the slots are still pending.
    @Test(.timeLimit(.minutes(1))) func requestsBeyondTheBoundAreUnavailable() async throws {
        let stalled = try remote("/stall/{z}/{x}/{y}.png") {
            $0.timeout = .seconds(120)
            $0.maxQueueWait = .milliseconds(200)
        }
        let finished = Tally()
        let holders = (0..<2).map { x in
            Task {
                _ = try? await stalled.tile(TileRequest(TileID(z: 12, x: x, y: 1)))
                finished.add()
            }
        }
        try await waitForRequests("/stall/12/", count: 2)
        #expect(try await stalled.tile(TileRequest(TileID(z: 12, x: 5, y: 1))) == .unavailable(retryAfter: .seconds(120)))
        #expect(stalled.counters.queueTimeouts == 1)
        #expect(finished.value == 0)
        #expect(try await server.stats().paths["/stall/12/5/1.png"] == nil)
        for task in holders { task.cancel() }
        for task in holders { await task.value }
    }

    /// Many fetches cancelled while their connections fail (swift-corelibs-foundation
    /// #5412 deadlocked `URLSession.data(for:)` this way) all end.
    @Test(.timeLimit(.minutes(1))) func cancellingFetchesNeverDeadlocks() async throws {
        var options = RemoteOptions(userAgent: "TileKitTests/1.0")
        options.retries = 0
        options.requestsPerSecondPerHost = nil
        options.maxConcurrentPerHost = 64
        // Port 9 (discard) on loopback: nothing listens, so each connection is refused.
        let refused = try RemoteTileSource(template: URLTemplate("http://127.0.0.1:9/{z}/{x}/{y}.png"), metadata: TileSetMetadata(name: "refused"), options: options)
        let stalled = try remote("/stall/{z}/{x}/{y}.png") { $0.maxConcurrentPerHost = 64; $0.timeout = .seconds(120) }
        for round in 0..<5 {
            await withTaskGroup(of: Void.self) { group in
                for x in 0..<40 {
                    let source = x % 2 == 0 ? refused : stalled
                    group.addTask { _ = try? await source.tile(TileRequest(TileID(z: 13, x: x, y: round))) }
                }
                try? await Task.sleep(for: .microseconds(100 * (round + 1)))
                group.cancelAll()
            }
        }
    }
}

/// A count shared with tasks (an `Atomic` itself cannot be captured: it is not copyable).
final class Tally: Sendable {
    private let count = Atomic(0)
    func add() { count.add(1, ordering: .sequentiallyConsistent) }
    var value: Int { count.load(ordering: .sequentiallyConsistent) }
}
