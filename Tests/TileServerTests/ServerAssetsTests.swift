import Foundation
import Testing
import MapProjects
@testable import TileServer

/// Assets are prepared before the core is built and passed in: the core serves what it is
/// given and reads no file of its own.
@Suite struct ServerAssetsTests {
    @Test func theCoreServesTheAssetsItIsGiven() async throws {
        let fixture = try ProjectFixture()
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        let map = try ServedMap(try MapProjectReader.load(fixture.folder.appendingPathComponent("map.json")))
        let given = ServerAssets(files: ["leaflet.js": ServerAssets.Asset(bytes: Array("L = {}".utf8), type: "application/javascript")])
        let server = try TileServer(maps: [map], assets: given)
        let leaflet = await server.handle(HTTPRequest(method: "GET", path: "/assets/leaflet.js"))
        #expect(leaflet.status == 200 && leaflet.body == Array("L = {}".utf8) && leaflet.header("Content-Type") == "application/javascript")
        // Not given: not looked for on disk, whatever the options say.
        let css = await server.handle(HTTPRequest(method: "GET", path: "/assets/leaflet.css"))
        #expect(css.status == 404)
        // The viewer's own script is the core's.
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/assets/viewer.js")).status == 200)
    }

    @Test func preparedAssetsHoldLeafletAndTheHeroIcon() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-assets-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("/* leaflet */".utf8).write(to: folder.appendingPathComponent("leaflet.css"))
        let assets = ServerAssets.prepare(leafletFolder: folder.path)
        #expect(assets.files["leaflet.css"]?.bytes == Array("/* leaflet */".utf8) && assets.files["leaflet.css"]?.type == "text/css")
        #expect(assets.files["leaflet.js"] == nil)
        let hero = try #require(assets.files["hero.png"])
        #expect(hero.type == "image/png" && Array(hero.bytes.prefix(4)) == [0x89, 0x50, 0x4e, 0x47])
    }
}
