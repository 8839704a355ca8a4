import Foundation
import Testing
import TileMath
import TileSources
import MapProjects
import HTTPServer
import TestSupport
@testable import TileServer

/// The upstream's freshness reaches the client: `Cache-Control` follows no-store, no-cache
/// and max-age (never longer than the layer's max-age), and the memory cache keeps a tile
/// only while it is fresh.
@Suite(.serialized) struct TileFreshnessTests {
    let upstream: TestTileServer
    let folder: URL
    let server: TileServer

    init() throws {
        let upstream = try TestTileServer()
        self.upstream = upstream
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-fresh-\(UUID())")
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let layers = [("fresh5", "/tiles/{z}/{x}/{y}.png?maxage=5", ""), ("nostore", "/tiles/{z}/{x}/{y}.png?cc=no-store", ""),
                      ("nocache", "/tiles/{z}/{x}/{y}.png?cc=no-cache", ""), ("long", "/tiles/{z}/{x}/{y}.png?maxage=86400", #", "max-age": 600"#),
                      ("poisoned", "/switch/{z}/{x}/{y}.png?maxage=0", #", "cache": "cache.mbtiles""#)]
            .map { #"{"id": "\#($0.0)", "type": "remote", "source": "\#(upstream.url($0.1))", "user-agent": "TileKit tests", "visible": false\#($0.2)}"# }
        try Data(#"{"name": "remote", "layers": [\#(layers.joined(separator: ","))]}"#.utf8).write(to: folder.appendingPathComponent("remote.json"))
        // A composed map: a drawn grid (no limit) under a remote layer of max-age=5.
        try Data(#"""
            {"name": "mix", "layers": [{"id": "grid", "type": "generated"},
              {"id": "fresh5", "type": "remote", "source": "\#(upstream.url("/tiles/{z}/{x}/{y}.png?maxage=5"))", "user-agent": "TileKit tests"}]}
            """#.utf8).write(to: folder.appendingPathComponent("mix.json"))
        server = try TileServer(maps: [try ServedMap(try MapProjectReader.load(folder.appendingPathComponent("remote.json"))),
                                       try ServedMap(try MapProjectReader.load(folder.appendingPathComponent("mix.json")))])
    }

    func get(_ path: String) async -> HTTPResponse { await server.handle(HTTPRequest(method: "GET", path: path)) }

    func fetches(_ path: String) async throws -> Int { try await upstream.stats().paths[path] ?? 0 }

    @Test func maxAgeIsPassedOnAndShortensTheLayers() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let fresh = await get("/maps/remote/layers/fresh5/3/2/1.png")
        let age = fresh.header("Cache-Control").flatMap { Int($0.replacingOccurrences(of: "public, max-age=", with: "")) } ?? -1
        #expect(fresh.status == 200 && (0...5).contains(age), "\(fresh.header("Cache-Control") ?? "none")")
        // The layer's own max-age (600) bounds a longer upstream freshness.
        #expect(await get("/maps/remote/layers/long/3/2/1.png").header("Cache-Control") == "public, max-age=600")
        // A composed tile is as fresh as its least fresh part.
        let mixed = await get("/maps/mix/3/2/1.png")
        let mixedAge = mixed.header("Cache-Control").flatMap { Int($0.replacingOccurrences(of: "public, max-age=", with: "")) } ?? -1
        #expect(mixed.status == 200 && (0...5).contains(mixedAge), "\(mixed.header("Cache-Control") ?? "none")")
        // Fresh tiles come from memory: asked again (within its day), the upstream is not.
        _ = await get("/maps/remote/layers/long/3/2/1.png")
        #expect(try await fetches("/tiles/3/2/1.png") == 3)  // fresh5, long and mix; the repeat came from memory
    }

    @Test func noStoreAndNoCacheAreNeverKeptInMemory() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        for (layer, control) in [("nostore", "no-store"), ("nocache", "no-cache")] {
            for _ in 0..<2 {
                let response = await get("/maps/remote/layers/\(layer)/4/3/2.png")
                #expect(response.status == 200 && response.header("Cache-Control") == control)
            }
        }
        #expect(try await fetches("/tiles/4/3/2.png") == 4)
    }

    /// A poisoned answer behind a cached layer is served from the good copy (marked stale,
    /// briefly fresh), never as a 502.
    @Test func aPoisonedUpstreamServesTheGoodCopy() async throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        try await upstream.setMode("tiles")
        let good = await get("/maps/remote/layers/poisoned/5/4/3.png")
        #expect(good.status == 200 && good.header("X-Tile-Provenance") == "native")
        try await upstream.setMode("pnghtml")
        let stale = await get("/maps/remote/layers/poisoned/5/4/3.png")
        #expect(stale.status == 200 && stale.body == good.body && stale.header("X-Tile-Provenance") == "stale")
        let age = stale.header("Cache-Control").flatMap { Int($0.replacingOccurrences(of: "public, max-age=", with: "")) } ?? -1
        #expect((0...30).contains(age), "\(stale.header("Cache-Control") ?? "none")")
    }
}

@Suite struct MemoryCacheExpiryTests {
    @Test func expiredEntriesAreMisses() {
        let cache = MemoryCache<String, Int>(capacity: 1 << 20, shards: 1)
        cache.set("forever", 1, cost: 10)
        cache.set("later", 2, cost: 10, expiresAt: .now + .seconds(60))
        cache.set("gone", 3, cost: 10, expiresAt: .now - .milliseconds(1))
        #expect(cache.get("forever") == 1 && cache.get("later") == 2 && cache.get("gone") == nil)
        let stats = cache.statistics
        #expect(stats.entries == 2 && stats.bytes == 20 && stats.misses == 1)
        // Set again with a new expiry: the entry lives on.
        cache.set("gone", 4, cost: 10, expiresAt: .now + .seconds(60))
        #expect(cache.get("gone") == 4)
    }
}
