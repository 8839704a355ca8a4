import Foundation
import Testing
import HTTPServer
@testable import TileServer

/// The start page shows, under each map, the lines that put it into an app, with the map's
/// real tile URL (as the client reached the server), zooms and bounds.
@Suite struct AppSnippetsTests {
    @Test func theStartPageFillsInEachMapsTemplateZoomsAndBounds() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let server = try fixture.server()
        let response = await server.handle(HTTPRequest(method: "GET", path: "/", headers: ["host": "tiles.example:8123"]))
        #expect(response.status == 200)
        let page = String(decoding: response.body, as: UTF8.self)
        for line in [
            "MKTileOverlay(urlTemplate: &quot;http://tiles.example:8123/maps/park/{z}/{x}/{y}@{scale}x.png&quot;)",
            "overlay.canReplaceMapContent = true", "overlay.minimumZ = 12", "overlay.maximumZ = 18",
            "span: MKCoordinateSpan(latitudeDelta: 0.04, longitudeDelta: 0.04)",
            "if (zoom in 12..18) URL(&quot;http://10.0.2.2:8123/maps/park/$zoom/$x/$y@2x.png&quot;)",
            "TileOverlayOptions().tileProvider(tiles).zIndex(1f)",
            "LatLngBounds(LatLng(40.76, -73.99), LatLng(40.8, -73.95))",
            "L.tileLayer(&quot;http://tiles.example:8123/maps/park/{z}/{x}/{y}{r}.png&quot;, {minZoom: 12, maxZoom: 18})",
            "maxBounds: [[40.76, -73.99], [40.8, -73.95]]",
            "tilekit seed --source path/to/park/map.json --bbox -73.99,40.76,-73.95,40.8 --zoom 12-15",
        ] {
            #expect(page.contains(line), "the start page lacks \(line)")
        }
        // The URL the snippets give is one the server answers, at every scale MapKit asks for.
        for scale in 1...3 {
            let tile = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/15/9651/12312@\(scale)x.png"))
            #expect(tile.status == 200, "@\(scale)x")
        }
    }

    @Test func aHostileHostHeaderIsEscaped() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let page = String(decoding: await (try fixture.server()).handle(HTTPRequest(method: "GET", path: "/", headers: ["host": "x\"><script>alert(1)</script>"])).body, as: UTF8.self)
        #expect(!page.contains("<script>alert"))
    }
}
