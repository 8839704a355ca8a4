import Foundation
import Testing
import TileMath
import Canvas
import MapProjects
@testable import TileServer
import HTTPServer

/// The `.json` twin of a static image reports the map's labels: the text and the box (CSS
/// pixels) of each, where the image draws them.
@Suite struct StaticLabelTests {
    /// Sorted keys, no spaces, shortest numbers: the bytes `JSONSerialization` wrote before the
    /// report became a Codable type, labels and counts included.
    @Test func theJSONTwinIsSortedCompactJSON() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let server = try fixture.server(ServerOptions())
        let geometry = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/static/-73.9725,40.7680,16/320x200.json"))
        let object = try JSONSerialization.jsonObject(with: Data(geometry.body))
        let canonical = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        #expect(geometry.bodyText == String(decoding: canonical, as: UTF8.self))
        #expect(geometry.bodyText.hasPrefix(#"{"bbox":["#) && geometry.bodyText.contains(#""labels":[{"height":"#))
    }

    @Test func theJSONTwinReportsTheMapsLabels() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let server = try fixture.server(ServerOptions())
        let path = "/maps/park/static/-73.9725,40.7680,16/320x200"
        let geometry = await server.handle(HTTPRequest(method: "GET", path: path + ".json"))
        #expect(geometry.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(geometry.body)) as? [String: Any])
        let labels = try #require(object["labels"] as? [[String: Any]])
        let goblin = try #require(labels.first { $0["text"] as? String == "Goblin" })
        let x = try #require(goblin["x"] as? Double), y = try #require(goblin["y"] as? Double)
        let w = try #require(goblin["width"] as? Double), h = try #require(goblin["height"] as? Double)
        #expect(goblin["kind"] as? String == "poi" && w > 30 && h > 10)
        let counts = try #require(object["labelCounts"] as? [String: Any])
        #expect(counts["named"] as? Int == 1 && counts["labelled"] as? Int == 1)
        // The image has dark label ink inside that box and none in the same box shifted right
        // past the label (the map there is the plain base).
        let image = await server.handle(HTTPRequest(method: "GET", path: path + ".png"))
        let picture = try RGBAImage(decoding: image.body)
        func darkPixels(_ x0: Double, _ y0: Double) -> Int {
            var n = 0
            for py in Int(y0)..<Int(y0 + h) { for px in Int(x0)..<Int(x0 + w) where (0..<320).contains(px) && (0..<200).contains(py) {
                let p = picture[px, py]
                if Int(p.red) + Int(p.green) + Int(p.blue) < 200 { n += 1 }
            } }
            return n
        }
        #expect(darkPixels(x, y) > 40, "the label's ink is in its reported box")

        // A posted feature on the goblin's spot: its label avoids the map's (both reported, apart).
        let posted = await server.handle(HTTPRequest(method: "POST", path: path + ".json",
                                                     body: Array(#"{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.97187,40.767769]},"properties":{"title":"Meet here"}}"#.utf8)))
        let both = try #require(try JSONSerialization.jsonObject(with: Data(posted.body)) as? [String: Any])
        let boxes = try #require(both["labels"] as? [[String: Any]]).map { o -> (String, Double, Double, Double, Double) in
            (o["text"] as? String ?? "", o["x"] as? Double ?? 0, o["y"] as? Double ?? 0, o["width"] as? Double ?? 0, o["height"] as? Double ?? 0)
        }
        #expect(boxes.map(\.0) == ["Goblin", "Meet here"], "\(boxes)")
        if boxes.count == 2 {
            let (a, b) = (boxes[0], boxes[1])
            #expect(a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1 || a.2 + a.4 <= b.2 || b.2 + b.4 <= a.2, "\(boxes)")
        }
    }
}

/// A map whose game route is an Xcode location file loads and plays (the `/play` stream
/// plays `RoutePlayback.load`'s route); a bad one is refused when the map loads, naming the waypoint.
@Suite struct XcodeRouteMapTests {
    @Test func xcodeRoutesLoadAndBadOnesAreNamed() throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.97187,40.767769]},"properties":{"id":"goblin","kind":"monster"}}]}"#.utf8)
            .write(to: fixture.folder.appendingPathComponent("pois.geojson"))
        let header = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"Xcode\">\n"
        try Data((header + """
          <wpt lat="40.7648" lon="-73.9733"><time>2014-07-10T16:00:00Z</time></wpt>
          <wpt lat="40.7678" lon="-73.9719"><time>2014-07-10T16:04:00Z</time></wpt>
        </gpx>
        """).utf8).write(to: fixture.folder.appendingPathComponent("xcode.gpx"))
        try Data((header + """
          <wpt lat="40.7648" lon="-73.9733"><time>2014-07-10T16:04:00Z</time></wpt>
          <wpt lat="40.7678" lon="-73.9719"><time>2014-07-10T16:00:00Z</time></wpt>
        </gpx>
        """).utf8).write(to: fixture.folder.appendingPathComponent("backwards.gpx"))
        func map(_ route: String) throws -> URL {
            let file = fixture.folder.appendingPathComponent("game-\(route).json")
            try Data(#"{"name": "g", "layers": [{"id": "grid", "type": "generated"}], "game": {"pois": "pois.geojson", "routes": {"walk": "\#(route)"}}}"#.utf8).write(to: file)
            return file
        }
        let served = try ServedMap(try MapProjectReader.load(try map("xcode.gpx")))
        #expect(served.project.game?.routes["walk"]?.hasSuffix("xcode.gpx") == true)
        let backwards = try map("backwards.gpx")
        do {
            _ = try MapProjectReader.load(backwards)
            Issue.record("a route whose times go backwards was accepted")
        } catch {
            let text = error.problems.map { "\($0.place): \($0.reason)" }
            #expect(text.contains { $0.hasPrefix("game.routes.walk:") && $0.contains("wpt[1] (line 4") && $0.contains("times must go forward") }, "\(text)")
        }
    }
}

/// The `.json` twin draws nothing, so it is answered while every static render is busy (the
/// viewer's debug grid asks for one per tile); the image itself is refused with 503 then.
@Suite struct StaticTwinWithoutRenderPoolTests {
    @Test func theTwinIsAnsweredWhileThePoolIsFull() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        var options = ServerOptions()
        options.maxConcurrentStaticRenders = 1
        let server = try fixture.server(options)
        let (busy, release) = AsyncStream.makeStream(of: Void.self)
        let (started, began) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            await server.renders.run {
                began.yield()
                for await _ in busy { break }
            }
        }
        for await _ in started { break }
        let path = "/maps/park/static/-73.9725,40.7680,16/2048x2048@2x"
        let twin = await server.handle(HTTPRequest(method: "GET", path: path + ".json"))
        let image = await server.handle(HTTPRequest(method: "GET", path: path + ".png"))
        release.yield()
        release.finish()
        _ = await holder.value
        #expect(twin.status == 200)
        #expect(image.status == 503)
    }
}
