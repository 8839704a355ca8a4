import Foundation
import Testing
import TileMath
import MapProjects
import HTTPServer
import SharedCache
import TestSupport
@testable import TileServer

/// Two servers of one map share renders through Redis, say which tier answered in
/// `Cache-Status`, and keep serving when Redis is gone.
@Suite(.serialized) struct SharedCacheServerTests {
    static func map(in folder: URL) throws -> ServedMap {
        try Data(#"{"name": "grid", "maxzoom": 5, "layers": [{"id": "grid", "type": "generated"}]}"#.utf8)
            .write(to: folder.appendingPathComponent("map.json"))
        return try ServedMap(try MapProjectReader.load(folder.appendingPathComponent("map.json")))
    }

    /// Redis gets seconds, not the default 50 ms: the whole suite runs at once on two cores,
    /// and a call that times out counts Redis as down (the timeouts have tests of their own).
    static func server(_ map: ServedMap, redis: String) throws -> TileServer {
        var options = ServerOptions(), patient = RedisTileCache.Options()
        patient.timeout = .seconds(5)
        patient.connectTimeout = .seconds(5)
        options.sharedCache = try RedisTileCache(redis, options: patient)
        return try TileServer(maps: [map], options: options)
    }

    @Test func aTileRenderedByOneServerIsARedisHitForAnother() async throws {
        guard RedisServerProcess.isInstalled else { Issue.record(Comment(rawValue: RedisServerProcess.missingMessage)); return }
        let redis = try RedisServerProcess()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-shared-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let map = try Self.map(in: folder)
        let first = try Self.server(map, redis: redis.url), second = try Self.server(map, redis: redis.url)
        let request = HTTPRequest(method: "GET", path: "/maps/grid/3/2/1.png")

        let rendered = await first.handle(request)
        #expect(rendered.status == 200)
        #expect(rendered.header("Cache-Status") == "tilekit-redis; fwd=miss; stored, tilekit-memory; fwd=miss; stored")
        // The store is not awaited by the response: wait until Redis has it. It is a task on
        // Swift's pool, which the whole suite shares at once (this test takes 45-64 s there).
        #expect(try await eventually(every: .milliseconds(20)) { redis.cli("DBSIZE") == "1" })
        let shared = await second.handle(request)
        #expect(shared.status == 200 && shared.body == rendered.body)
        #expect(shared.header("ETag") == rendered.header("ETag"))
        #expect(shared.header("Cache-Status") == "tilekit-redis; hit, tilekit-memory; fwd=miss; stored")
        #expect(await second.handle(request).header("Cache-Status") == "tilekit-memory; hit")
        #expect(await second.handle(HTTPRequest(method: "GET", path: "/ready")).status == 200)
        let metrics = String(decoding: await second.handle(HTTPRequest(method: "GET", path: "/metrics")).body, as: UTF8.self)
        #expect(metrics.contains("tilekit_shared_cache_hits_total 1"), "\(metrics.suffix(600))")

        // Redis gone: tiles are still drawn and served, /ready says no.
        redis.kill()
        let alone = await second.handle(HTTPRequest(method: "GET", path: "/maps/grid/3/2/2.png"))
        #expect(alone.status == 200)
        #expect(alone.header("Cache-Status")?.hasPrefix("tilekit-redis; fwd=bypass") == true, "\(alone.header("Cache-Status") ?? "")")
        #expect(await second.handle(HTTPRequest(method: "GET", path: "/ready")).status == 503)
    }

    /// An edited map.json is another definition: its tiles never meet the old renders.
    @Test func anEditedMapHasOtherKeys() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-def-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = MapDefinition.hash(try Self.map(in: folder).project)
        #expect(MapDefinition.hash(try Self.map(in: folder).project) == before)
        try Data(#"{"name": "grid", "maxzoom": 6, "layers": [{"id": "grid", "type": "generated"}]}"#.utf8)
            .write(to: folder.appendingPathComponent("map.json"))
        let edited = try MapProjectReader.load(folder.appendingPathComponent("map.json"))
        #expect(MapDefinition.hash(edited) != before)
    }
}
