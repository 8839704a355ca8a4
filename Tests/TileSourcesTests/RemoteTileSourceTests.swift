import Foundation
import Testing
import Canvas
import TileMath
import TestSupport
@testable import TileSources

/// Against a real HTTP server on 127.0.0.1 that injects faults; each fault gets its
/// documented outcome. One server per suite; each test uses its own paths.
@Suite(.serialized) struct RemoteTileSourceTests {
    let server: TestTileServer
    let tile = TileID(z: 12, x: 1205, y: 1539)

    init() throws { server = try TestTileServer() }

    func source(_ path: String, retries: Int = 2, timeout: Duration = .seconds(5), perHost: Int = 4, rate: Double? = nil) throws -> RemoteTileSource {
        var options = RemoteOptions(userAgent: "TileKitTests/1.0 (tests@tilekit.invalid)")
        options.retries = retries
        options.backoff = .milliseconds(20)
        options.timeout = timeout
        options.maxConcurrentPerHost = perHost
        options.requestsPerSecondPerHost = rate
        options.maxQueueWait = nil  // these tests queue on purpose (UpstreamFaultTests bound the wait)
        return try RemoteTileSource(template: URLTemplate(server.url(path)), metadata: TileSetMetadata(name: "test"), options: options)
    }

    func count(_ path: String) async throws -> Int { try await server.stats().paths[path] ?? 0 }

    @Test func aTileWithItsValidatorsAndUserAgent() async throws {
        let outcome = try await source("/tiles/{z}/{x}/{y}.png?maxage=120").fetch(TileRequest(tile))
        guard case .tile(let data, let directives) = outcome else { Issue.record("\(outcome)"); return }
        let decoded = try RGBAImage(decoding: data.bytes)
        #expect(data.format == .png && decoded.width == 256)
        // It comes with the pixels its check decoded: drawing it decodes nothing again.
        let image = try data.image()
        #expect(data.decoded == decoded && image == decoded)
        #expect(directives.maxAgeSeconds == 120 && directives.etag == "\"12-1205-1539\"" && directives.lastModified != nil)
        #expect(try await server.stats().user_agents.contains("TileKitTests/1.0 (tests@tilekit.invalid)"))
        // With the validators: 304.
        let again = try await source("/tiles/{z}/{x}/{y}.png").fetch(TileRequest(tile), etag: directives.etag)
        guard case .notModified = again else { Issue.record("\(again)"); return }
    }

    @Test func absenceAndFailuresMapToTheModel() async throws {
        #expect(try await source("/status/404/{z}/{x}/{y}.png").tile(TileRequest(tile)) == .noTile)
        #expect(try await source("/status/410/{z}/{x}/{y}.png").tile(TileRequest(tile)) == .noTile)
        // 5xx: retried, then unavailable.
        #expect(try await source("/status/500/{z}/{x}/{y}.png", retries: 2).tile(TileRequest(tile)) == .unavailable(retryAfter: nil))
        #expect(try await count("/status/500/12/1205/1539.png") == 3)
        #expect(try await source("/status/503/{z}/{x}/{y}.png", retries: 1).tile(TileRequest(tile)) == .unavailable(retryAfter: .seconds(7)))
        // 429: asked to slow down, so no retry.
        #expect(try await source("/status/429/{z}/{x}/{y}.png").tile(TileRequest(tile)) == .unavailable(retryAfter: .seconds(7)))
        #expect(try await count("/status/429/12/1205/1539.png") == 1)
        // Other 4xx: an error naming the URL and status, never retried.
        await #expect(throws: RemoteTileError.refused(status: 403, url: server.url("/status/403/12/1205/1539.png"))) {
            try await source("/status/403/{z}/{x}/{y}.png").tile(TileRequest(tile))
        }
        #expect(try await count("/status/403/12/1205/1539.png") == 1)
        // Garbage: an error naming the URL, not a tile.
        await #expect {
            try await source("/garbage/{z}/{x}/{y}.png").tile(TileRequest(tile))
        } throws: { error in
            guard case .notAnImage(let url, let type, _) = error as? RemoteTileError else { return false }
            return url.hasSuffix("/garbage/12/1205/1539.png") && type == "image/png"
        }
    }

    @Test func timeoutsResetsAndFlakyServers() async throws {
        // Slower than the timeout: each attempt times out; then unavailable. (The server does
        // answer with a tile after 3 s: a timeout not enforced would return it.)
        #expect(try await source("/slow/3/{z}/{x}/{y}.png", retries: 1, timeout: .milliseconds(400)).tile(TileRequest(tile)) == .unavailable(retryAfter: nil))
        // A reset connection is a network error: retried, then unavailable.
        #expect(try await source("/reset/{z}/{x}/{y}.png", retries: 1).tile(TileRequest(tile)) == .unavailable(retryAfter: nil))
        // Two failures, then the tile: the third attempt succeeds.
        #expect(try await source("/flaky/2/{z}/{x}/{y}.png", retries: 3).tile(TileRequest(tile)).data != nil)
        #expect(try await count("/flaky/2/12/1205/1539.png") == 3)
    }

    @Test func concurrencyAndRatePerHost() async throws {
        try await server.resetStats()
        let slow = try source("/slow/0.15/{z}/{x}/{y}.png", perHost: 2)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for x in 0..<12 { group.addTask { _ = try await slow.tile(TileRequest(TileID(z: 5, x: x, y: 3))) } }
            try await group.waitForAll()
        }
        let stats = try await server.stats()
        #expect(stats.count == 12 && stats.peak <= 2, "peak \(stats.peak)")
        try await server.resetStats()
        let limited = try source("/tiles/{z}/{x}/{y}.png", perHost: 8, rate: 20)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for x in 0..<11 { group.addTask { _ = try await limited.tile(TileRequest(TileID(z: 5, x: x, y: 4))) } }
            try await group.waitForAll()
        }
        // 11 requests at 20/s take at least 0.5 s. Timed here, where the requests leave: the
        // test server's own arrival times bunch up when the machine is busy (a lower bound,
        // which load can only make longer).
        let elapsed = ContinuousClock.now - started
        let rated = try await server.stats()
        #expect(rated.count == 11 && elapsed >= .milliseconds(450), "11 requests in \(elapsed)")
    }

    @Test func aUserAgentIsRequired() throws {
        #expect(throws: RemoteTileError.missingUserAgent) {
            try RemoteTileSource(template: URLTemplate("http://127.0.0.1/{z}/{x}/{y}.png"), metadata: TileSetMetadata(name: "x"),
                                 options: RemoteOptions(userAgent: "  "))
        }
    }
}

@Suite(.serialized) struct CachedTileSourceTests {
    let server: TestTileServer
    let tile = TileID(z: 14, x: 4823, y: 6160)

    init() throws { server = try TestTileServer() }

    func cached(_ path: String, cache: String, minimumMaxAge: Duration = .seconds(60)) throws -> CachedTileSource {
        var options = RemoteOptions(userAgent: "TileKitTests/1.0")
        options.retries = 1
        options.backoff = .milliseconds(10)
        var policy = CachePolicy()
        policy.minimumMaxAge = minimumMaxAge
        let remote = try RemoteTileSource(template: URLTemplate(server.url(path)), metadata: TileSetMetadata(name: "cached"), options: options)
        return try CachedTileSource(upstream: remote, cachePath: cache, policy: policy)
    }

    @Test func freshTilesComeFromDiskAndExpiredOnesAreRevalidated() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cachePath = directory.appendingPathComponent("cache.mbtiles").path
        let fresh = try cached("/tiles/{z}/{x}/{y}.png?maxage=3600", cache: cachePath)
        let first = try await fresh.tile(TileRequest(tile))
        let second = try await fresh.tile(TileRequest(tile))
        #expect(first.data != nil && first == second)
        #expect(try await server.stats().paths["/tiles/14/4823/6160.png"] == 1)
        // The cache is an MBTiles file any reader opens.
        #expect(try await MBTilesSource(path: cachePath).tile(TileRequest(tile)).data?.bytes == first.data?.bytes)

        // max-age=0 (and no minimum): every use revalidates, and a 304 reuses the copy.
        let expiring = try cached("/tiles/{z}/{x}/{y}.png?maxage=0", cache: directory.appendingPathComponent("revalidate.mbtiles").path, minimumMaxAge: .zero)
        _ = try await expiring.tile(TileRequest(tile))
        let revalidated = try await expiring.tile(TileRequest(tile))
        #expect(revalidated.data?.bytes == first.data?.bytes)
        let stats = try await server.stats()
        #expect(stats.conditional == 1 && stats.statuses.contains(304))
    }

    @Test func staleTilesAreServedWhenTheUpstreamIsDown() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cachePath = directory.appendingPathComponent("cache.mbtiles").path
        let working = try cached("/tiles/{z}/{x}/{y}.png?maxage=0", cache: cachePath, minimumMaxAge: .zero)
        let original = try await working.tile(TileRequest(tile))
        // Same cache, upstream now failing with 500.
        let down = try cached("/status/500/{z}/{x}/{y}.png", cache: cachePath, minimumMaxAge: .zero)
        let stale = try await down.tile(TileRequest(tile))
        #expect(stale.data?.bytes == original.data?.bytes && stale.data?.provenance == .stale)
        // Nothing cached, upstream down: unavailable.
        #expect(try await down.tile(TileRequest(TileID(z: 14, x: 1, y: 1))) == .unavailable(retryAfter: nil))
        // Garbage and no-store answers leave nothing in the cache.
        let garbage = try cached("/garbage/{z}/{x}/{y}.png", cache: directory.appendingPathComponent("g.mbtiles").path)
        await #expect(throws: RemoteTileError.self) { try await garbage.tile(TileRequest(tile)) }
        let noStore = try cached("/tiles/{z}/{x}/{y}.png?cc=no-store", cache: directory.appendingPathComponent("n.mbtiles").path)
        #expect(try await noStore.tile(TileRequest(tile)).data != nil)
        for name in ["g.mbtiles", "n.mbtiles"] {
            #expect(try TileCacheStoreProbe.tiles(directory.appendingPathComponent(name).path) == 0)
        }
    }

    @Test func concurrentRequestsShareOneFetch() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try cached("/slow/0.3/{z}/{x}/{y}.png", cache: directory.appendingPathComponent("c.mbtiles").path)
        let results = try await withThrowingTaskGroup(of: TileResult.self) { group in
            for _ in 0..<20 { group.addTask { try await source.tile(TileRequest(self.tile)) } }
            var all = [TileResult]()
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 20 && Set(results).count == 1 && results[0].data != nil)
        #expect(try await server.stats().paths["/slow/0.3/14/4823/6160.png"] == 1)
    }

    @Test func clearPruneAndRetinaCaches() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cachePath = directory.appendingPathComponent("cache.mbtiles").path
        let source = try cached("/tiles/{z}/{x}/{y}{r}.png", cache: cachePath)
        for x in 0..<10 { _ = try await source.tile(TileRequest(TileID(z: 6, x: x, y: 5))) }
        _ = try await source.tile(TileRequest(TileID(z: 6, x: 0, y: 5), scale: 2))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("cache@2x.mbtiles").path))
        #expect(try TileCacheStoreProbe.tiles(cachePath) == 10)
        let cap = try TileCacheStoreProbe.store(cachePath).summary().bytes * 3 / 10
        let removed = try TileCacheStoreProbe.store(cachePath).prune(maxBytes: cap)
        let left = try TileCacheStoreProbe.store(cachePath).summary()
        #expect(removed + left.tiles == 10 && left.tiles > 0 && left.tiles < 10 && left.bytes <= cap)
        try source.clear()
        #expect(try TileCacheStoreProbe.tiles(cachePath) == 0)
        #expect(try TileCacheStoreProbe.tiles(directory.appendingPathComponent("cache@2x.mbtiles").path) == 0)
    }
}

import MBTiles

@Suite struct TileCacheStoreTests {
    /// Least recently used goes first; maxAge removes by fetch time; orphan images go too.
    @Test func lruAndAgeEviction() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try TileCacheStore(path: directory.appendingPathComponent("c.mbtiles").path)
        let tiles = (0..<5).map { TileID(z: 4, x: $0, y: 2) }
        for (index, tile) in tiles.enumerated() {
            try store.store(tile, bytes: Array(repeating: UInt8(index), count: 1000), expiresAt: 5000, etag: nil, lastModified: nil, now: Double(1000 * (index + 1)))
        }
        // Tile 0 is used late, so it is the most recently used.
        _ = try store.entry(tiles[0], now: 9000)
        #expect(try store.prune(maxBytes: 3000, now: 9000) == 2)
        #expect(try store.entry(tiles[1], now: 9000) == nil && store.entry(tiles[2], now: 9000) == nil)
        #expect(try store.entry(tiles[0], now: 9000) != nil && store.entry(tiles[4], now: 9000) != nil)
        // Fetched before 9000 - 5500 = 3500: tile 0 (fetched at 1000, however recently used) goes.
        #expect(try store.prune(maxAge: .seconds(5500), now: 9000) == 1)
        let summary = try store.summary(now: 9000)
        #expect(summary.tiles == 2 && summary.bytes == 2000 && summary.expired == 2)
        #expect(summary.oldestFetch == 4000 && summary.newestFetch == 5000)
        try store.clear()
        #expect(try store.summary().tiles == 0)
    }
}

enum TileCacheStoreProbe {
    static func store(_ path: String) throws -> TileCacheStore { try TileCacheStore(path: path) }
    static func tiles(_ path: String) throws -> Int { try store(path).summary().tiles }
}
