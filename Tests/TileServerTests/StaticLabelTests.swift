import Foundation
import Testing
import TileMath
import Canvas
@testable import TileServer
import HTTPServer

/// The `.json` twin of a static image reports the map's labels: the text and the box (CSS
/// pixels) of each, where the image draws them.
@Suite struct StaticLabelTests {
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
    }
}
