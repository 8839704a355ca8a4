import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Canvas
import TileMath
import TileSources
import MapProjects
import HTTPServer
import TestSupport
@testable import TileServer

@Suite struct ServerBehaviourTests {
    /// Remote layers against the fault-injecting test server: one fetch for many concurrent
    /// requests of a tile, 503 with Retry-After when the upstream is down, 502 for garbage.
    @Test func upstreamsCoalescedAndTheirFailuresMapped() async throws {
        let upstream = try TestTileServer()
        defer { upstream.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-remote-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let layers = [("slow", "/slow/0.3/{z}/{x}/{y}.png"), ("down", "/status/503/{z}/{x}/{y}.png"), ("garbage", "/garbage/{z}/{x}/{y}.png")]
            .map { #"{"id": "\#($0.0)", "type": "remote", "source": "\#(upstream.url($0.1))", "user-agent": "TileKit tests", "visible": false}"# }
        try Data(#"{"name": "remote", "layers": [\#(layers.joined(separator: ","))]}"#.utf8).write(to: folder.appendingPathComponent("map.json"))
        let server = try TileServer(maps: [try ServedMap(try MapProjectReader.load(folder.appendingPathComponent("map.json")))])

        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<20 { group.addTask { await server.handle(HTTPRequest(method: "GET", path: "/maps/remote/layers/slow/3/2/1.png")).status } }
            var all = [Int]()
            for await status in group { all.append(status) }
            return all
        }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
        #expect(try await upstream.stats().paths["/slow/0.3/3/2/1.png"] == 1)

        let down = await server.handle(HTTPRequest(method: "GET", path: "/maps/remote/layers/down/3/2/1.png"))
        #expect(down.status == 503 && down.header("Retry-After") != nil, "\(down.status) \(String(decoding: down.body, as: UTF8.self))")
        let garbage = await server.handle(HTTPRequest(method: "GET", path: "/maps/remote/layers/garbage/3/2/1.png"))
        #expect(garbage.status == 502 && String(decoding: garbage.body, as: UTF8.self).contains("3/2/1"), "\(garbage.status)")
        let metrics = String(decoding: await server.handle(HTTPRequest(method: "GET", path: "/metrics")).body, as: UTF8.self)
        #expect(metrics.contains("tilekit_upstream_errors_total 2"))
        #expect(metrics.contains(#"tilekit_upstream_bad_answers_total{map="remote",layer="garbage"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"tilekit_upstream_bad_answers_total{map="remote",layer="slow"} 0"#))
    }

    /// A static image over a base whose upstream is down is drawn with gaps, says how many
    /// tiles are missing, and is not to be kept; over a base that answers, it is cacheable.
    @Test func staticImagesSayWhichBaseTilesWereUnavailable() async throws {
        let upstream = try TestTileServer()
        defer { upstream.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-static-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var maps = [ServedMap]()
        for (name, path) in [("down", "/status/503/{z}/{x}/{y}.png"), ("up", "/slow/0.01/{z}/{x}/{y}.png")] {
            let file = folder.appendingPathComponent("\(name).json")
            try Data(#"{"name": "\#(name)", "layers": [{"id": "base", "type": "remote", "source": "\#(upstream.url(path))", "user-agent": "TileKit tests"}]}"#.utf8)
                .write(to: file)
            maps.append(try ServedMap(try MapProjectReader.load(file)))
        }
        let server = try TileServer(maps: maps)
        let down = await server.handle(HTTPRequest(method: "GET", path: "/maps/down/static/0,0,2/300x200.png"))
        #expect(down.status == 200 && down.header("Cache-Control") == "no-store", "\(down.status) \(down.headers)")
        let missing = try #require(down.header("X-Snapshot-Unavailable-Tiles"))
        let counts = missing.split(separator: " ").compactMap { Int($0) }
        #expect(counts.count == 2 && counts[0] > 0 && counts[0] == counts[1], "\(missing)")
        #expect(down.header("ETag") == nil && !down.body.isEmpty)
        #expect(down.header("Access-Control-Expose-Headers") == "X-Snapshot-Geometry, X-Snapshot-Unavailable-Tiles")
        let up = await server.handle(HTTPRequest(method: "GET", path: "/maps/up/static/0,0,2/300x200.png"))
        #expect(up.status == 200 && up.header("Cache-Control") == "public, max-age=60" && up.header("X-Snapshot-Unavailable-Tiles") == nil,
                "\(up.status) \(up.headers)")
    }

    /// Plain stores serve as one-layer maps named after their files, beside each other.
    @Test func plainStoresAreMapsNamedAfterTheirFiles() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let mbtiles = fixture.folder.appendingPathComponent("world.mbtiles").path
        let writer = try TileStore.writer(mbtiles)
        try writer.write(TileID(z: 0, x: 0, y: 0), bytes: try Canvas(width: 256, height: 256, background: .white).encoded(.png()))
        try writer.finish(metadata: TileSetMetadata(name: "World", format: .png, minZoom: 0, maxZoom: 1))
        let maps = try [fixture.folder.appendingPathComponent("base").path, mbtiles].map { try ServedMap(try MapProjectReader.store($0)) }
        let server = try TileServer(maps: maps)
        #expect(server.order == ["base", "world"])
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/maps/world/0/0/0.png")).status == 200)
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/maps/base/15/9650/12313.png")).status == 200)
        let index = await server.handle(HTTPRequest(method: "GET", path: "/", headers: ["accept": "application/json"]))
        #expect(String(decoding: index.body, as: UTF8.self).contains(#""name":"world""#))
        #expect(throws: ProjectProblems.self) { try TileServer(maps: [maps[0], maps[0]]) }
    }

    /// A real socket: keep-alive, HEAD without a body, and the request time limit (503).
    @Test func socketTimeoutsAndHead() async throws {
        // Quick answers come from the fast handler, on the connection's thread: the test does
        // not depend on the task pool, which other suites keep busy. Only /slow is a task.
        let server = try HTTPServer(host: "127.0.0.1", port: 0, threads: 2, timeout: .seconds(1),
                                    fast: { request in request.path == "/slow" ? nil : .text(200, "hello \(request.query["name"] ?? "")") }) { _ in
            try? await Task.sleep(for: .seconds(4))
            return .text(200, "late")
        }
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let (data, response) = try await URLSession.shared.data(from: URL(string: base + "/hi?name=a%20b")!)
        #expect((response as! HTTPURLResponse).statusCode == 200 && String(decoding: data, as: UTF8.self) == "hello a b\n", "\(String(decoding: data, as: UTF8.self))")
        var head = URLRequest(url: URL(string: base + "/hi")!)
        head.httpMethod = "HEAD"
        let (headData, headResponse) = try await URLSession.shared.data(for: head)
        #expect((headResponse as! HTTPURLResponse).statusCode == 200 && headData.isEmpty)
        let (slowData, slow) = try await URLSession.shared.data(from: URL(string: base + "/slow")!)
        #expect((slow as! HTTPURLResponse).statusCode == 503 && String(decoding: slowData, as: UTF8.self).contains("longer than"))
        #expect(throws: HTTPServerError.self) { try HTTPServer(host: "example.com", port: 0) { _ in .text(200, "") } }
    }
}
