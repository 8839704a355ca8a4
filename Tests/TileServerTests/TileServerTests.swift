import Foundation
import Testing
import Canvas
import TileMath
import TileSources
import MapProjects
import HTTPServer
@testable import TileServer

/// A project in a temporary folder: a tile folder (z12-15 of debug tiles), a feature
/// layer with a titled marker, and a generated grid.
struct ProjectFixture {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-server-\(UUID())")
        let tiles = folder.appendingPathComponent("base")
        let grid = GeneratedTileSource.debugGrid()
        for z in 12...15 {
            for range in TileRange.covering(BoundingBox(west: -73.99, south: 40.76, east: -73.95, north: 40.80), zoom: z) {
                for tile in range {
                    let dir = tiles.appendingPathComponent("\(z)/\(tile.x)")
                    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                    let canvas = try Canvas(width: 256, height: 256, background: Color(hex: "#c8d8a8")!)
                    canvas.drawText("\(tile.z)/\(tile.x)/\(tile.y)", at: PixelPoint(x: 128, y: 128), style: TextStyle(font: Font(size: 20)))
                    try Data(canvas.encoded(.png())).write(to: dir.appendingPathComponent("\(tile.y).png"))
                }
            }
        }
        _ = grid
        try Data(##"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.971870,40.767769]},"properties":{"title":"Goblin","description":"Central Park Zoo","marker-symbol":"monster","marker-color":"#2e7d32"}},{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-73.9733,40.7648],[-73.9719,40.7678]]},"properties":{"stroke":"#b3261e","stroke-width":5}}]}"##.utf8)
            .write(to: folder.appendingPathComponent("pins.geojson"))
        try Data(#"""
        {"name": "park", "title": "Park", "attribution": "test data", "center": [-73.9725, 40.7712], "zoom": 15,
         "minzoom": 12, "maxzoom": 18, "bounds": [-73.99, 40.76, -73.95, 40.80],
         "layers": [
           {"id": "base", "type": "tiles", "source": "base", "native-maxzoom": 15, "max-age": 600},
           {"id": "grid", "type": "generated", "base": true, "visible": false},
           {"id": "pins", "title": "Pins", "type": "features", "files": ["pins.geojson"], "zindex": 10}]}
        """#.utf8).write(to: folder.appendingPathComponent("map.json"))
    }

    var mapFile: URL { folder.appendingPathComponent("map.json") }

    func server(_ options: ServerOptions = ServerOptions()) throws -> TileServer {
        try TileServer(maps: [try ServedMap(try MapProjectReader.load(mapFile))], options: options)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

@Suite struct RouteTests {
    @Test func parsesEveryRoute() throws {
        #expect(try Route.parse("/") == .index)
        #expect(try Route.parse("/maps/park.json") == .tileJSON(map: "park", layer: nil))
        #expect(try Route.parse("/maps/park/layers/pins.json") == .tileJSON(map: "park", layer: "pins"))
        #expect(try Route.parse("/maps/park/15/9650/12314@2x.webp") == .tile(map: "park", layer: nil, TileID(z: 15, x: 9650, y: 12314), scale: 2, format: .webp))
        #expect(try Route.parse("/maps/park/layers/pins/3/1/2.jpg") == .tile(map: "park", layer: "pins", TileID(z: 3, x: 1, y: 2), scale: 1, format: .jpeg))
        #expect(try Route.parse("/maps/park/features/pins.geojson") == .features(map: "park", layer: "pins"))
        #expect(try Route.parse("/maps/park") == .viewerRedirect(map: "park"))
        #expect(try Route.parse("/maps/park/") == .viewer(map: "park"))
        #expect(try Route.parse("/maps/park/play") == .play(map: "park"))
        #expect(try Route.parse("/maps/park/warps/station-R13.json") == .warps(map: "park", station: "station-R13"))
        guard case .staticImage(_, let s) = try Route.parse("/maps/park/static/-73.97,40.77,15.5/600x400@2x.png") else { Issue.record("not static"); return }
        #expect(s.region == .center(Coordinate(latitude: 40.77, longitude: -73.97), zoom: 15.5) && s.width == 600 && s.scale == 2 && s.format == .png)
        guard case .staticImage(_, let b) = try Route.parse("/maps/park/static/-74%2C40.7%2C-73.9%2C40.8/300x200.json") else { Issue.record("not static"); return }
        #expect(b.format == nil && b.region == .box(BoundingBox(west: -74, south: 40.7, east: -73.9, north: 40.8)))
    }

    @Test(arguments: [
        ("/maps/park/../../etc/passwd", 400), ("/maps/park/%2e%2e/x", 400), ("/maps/%2E%2E%2Fetc/1/0/0.png", 400),
        ("/maps/park/1/0/0.png%00", 400), ("/maps/park/99/0/0.png", 400), ("/maps/park/3/8/0.png", 400),
        ("/maps/park/3/-1/0.png", 400), ("/maps/park/3/0/0.gif", 404), ("//etc/passwd", 404), ("etc/passwd", 400),
        ("/maps/park/1/0/0@9x.png", 400), ("/maps/p%C3%A4rk/1/0/0.png", 400), ("/maps/park/static/1,2/10x10.png", 400),
        ("/maps/park/static/0,0,3/10by10.png", 400), ("/assets/../../etc/passwd", 400), ("/assets/secret.txt", 404),
        ("/maps/park/1/0/0.png/extra", 404),
    ])
    func refusesBadPaths(path: String, status: Int) {
        do {
            let route = try Route.parse(path)
            Issue.record("\(path) parsed as \(route)")
        } catch {
            #expect(error.status == status, "\(path): \(error.message)")
        }
    }
}

@Suite struct TileServerRoutesTests {
    @Test func tilesTileJSONAndCaching() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let server = try fixture.server()
        let tile = TileID(containing: Coordinate(latitude: 40.7678, longitude: -73.9719), zoom: 15)
        let response = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/15/\(tile.x)/\(tile.y).png"))
        #expect(response.status == 200 && response.header("Content-Type") == "image/png")
        let image = try RGBAImage(decoding: response.body)
        #expect(image.width == 256)
        // The feature layer is drawn over the base: the red line crosses this tile.
        #expect((0..<256).contains { x in (0..<256).contains { y in image[x, y].distance(to: Pixel(Color(hex: "#b3261e")!)) < 30 } })
        let etag = try #require(response.header("ETag"))
        #expect(response.header("Cache-Control") == "public, max-age=600")
        // Served again from memory, on the fast path; 304 with the ETag.
        let again = try #require(server.fast(HTTPRequest(method: "GET", path: "/maps/park/15/\(tile.x)/\(tile.y).png", headers: ["if-none-match": etag])))
        #expect(again.status == 304 && again.body.isEmpty)
        #expect(server.cache.statistics.hits >= 1)
        // @2x and other formats.
        let retina = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/layers/base/15/\(tile.x)/\(tile.y)@2x.webp"))
        let retinaImage = try RGBAImage(decoding: retina.body)
        #expect(retina.status == 200 && retina.header("Content-Type") == "image/webp" && retinaImage.width == 512)
        // Overzoom (native maximum 15) is served transparently.
        let deep = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/layers/base/17/\(tile.x * 4)/\(tile.y * 4).png"))
        #expect(deep.status == 200 && deep.header("X-Tile-Provenance")?.hasPrefix("overzoomed") == true)
        // Outside the bounds and outside the zoom range: no tile.
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/maps/park/12/0/0.png")).status == 204)  // the default
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/maps/park/5/9/12.png")).status == 404)
        // TileJSON 3.0.0.
        let tj = await server.handle(HTTPRequest(method: "GET", path: "/maps/park.json", headers: ["host": "tiles.example:8080"]))
        let json = try JSONSerialization.jsonObject(with: Data(tj.body)) as! [String: Any]
        #expect(json["tilejson"] as? String == "3.0.0" && json["minzoom"] as? Int == 12 && json["maxzoom"] as? Int == 18)
        #expect((json["tiles"] as? [String]) == ["http://tiles.example:8080/maps/park/{z}/{x}/{y}.png"])
        #expect((json["bounds"] as? [Double]) == [-73.99, 40.76, -73.95, 40.80] && json["attribution"] as? String == "test data")
        #expect((json["center"] as? [Double])?.count == 3)
        // The base layer alone: tiles exist to zoom 15, clients may overzoom from there.
        let layer = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/layers/base.json"))
        let layerJSON = try JSONSerialization.jsonObject(with: Data(layer.body)) as! [String: Any]
        #expect(layerJSON["fillzoom"] as? Int == 15 && (layerJSON["tiles"] as? [String])?.first?.hasSuffix("/maps/park/layers/base/{z}/{x}/{y}.png") == true)
    }

    @Test func featuresStaticImagesAndErrors() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        var options = ServerOptions()
        options.maxStaticSide = 1024
        options.maxMarkers = 3
        let server = try fixture.server(options)
        let geojson = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/features/pins.geojson", headers: ["accept-encoding": "gzip"]))
        #expect(geojson.status == 200 && geojson.header("Content-Type") == "application/geo+json")
        // Titles and subtitles travel to the viewer.
        let text = String(decoding: geojson.header("Content-Encoding") == "gzip" ? try gunzip(geojson.body) : geojson.body, as: UTF8.self)
        #expect(text.contains("\"title\":\"Goblin\"") && text.contains("\"description\":\"Central Park Zoo\""))

        let image = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/static/-73.9725,40.7712,15/320x200@2x.png",
                                                    query: ["markers": "-73.9725,40.7712,#0000ff"]))
        #expect(image.status == 200 && image.header("X-Snapshot-Geometry")?.contains("\"zoom\":15") == true)
        let picture = try RGBAImage(decoding: image.body)
        #expect(picture.width == 640 && picture.height == 400)
        #expect(picture[320, 200].distance(to: Pixel(red: 0, green: 0, blue: 255)) < 10)
        let geometry = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/static/auto/320x200.json",
                                                       query: ["markers": "-73.9725,40.7712|-73.96,40.78"]))
        let g = try JSONSerialization.jsonObject(with: Data(geometry.body)) as! [String: Any]
        #expect((g["markers"] as? [[String: Any]])?.count == 2)
        // A POSTed GeoJSON body.
        let posted = await server.handle(HTTPRequest(method: "POST", path: "/maps/park/static/auto/200x200.png",
                                                     body: Array(#"{"type":"Point","coordinates":[-73.97,40.77]}"#.utf8)))
        #expect(posted.status == 200)
        let broken = await server.handle(HTTPRequest(method: "POST", path: "/maps/park/static/auto/200x200.png", body: Array(#"{"type":"Point","coordinates":[1]}"#.utf8)))
        #expect(broken.status == 400 && String(decoding: broken.body, as: UTF8.self).contains("request body: coordinates"))
        // Limits, each with a message.
        let big = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/static/0,0,2/2000x100.png"))
        #expect(big.status == 400 && String(decoding: big.body, as: UTF8.self).contains("1-1024"))
        let many = await server.handle(HTTPRequest(method: "GET", path: "/maps/park/static/auto/100x100.png", query: ["markers": "1,1|2,2|3,3|4,4"]))
        #expect(many.status == 400 && String(decoding: many.body, as: UTF8.self).contains("at most 3"))
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/maps/park/static/auto/100x100.png", query: ["path": "zzz"])).status == 400)
        // Methods, unknown maps and layers.
        let delete = await server.handle(HTTPRequest(method: "DELETE", path: "/maps/park/1/0/0.png"))
        #expect(delete.status == 405 && delete.header("Allow") == "GET, HEAD, OPTIONS")
        #expect(await server.handle(HTTPRequest(method: "POST", path: "/maps/park/1/0/0.png")).status == 405)
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/maps/nowhere/1/0/0.png")).status == 404)
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/maps/park/layers/nope/1/0/0.png")).status == 404)
        #expect(await server.handle(HTTPRequest(method: "GET", path: "/maps/park/features/base.geojson")).status == 404)
        // Metrics count what happened.
        let metrics = String(decoding: await server.handle(HTTPRequest(method: "GET", path: "/metrics")).body, as: UTF8.self)
        #expect(metrics.contains("tilekit_requests_total{route=\"static\",status=\"400\"} 4"))
        #expect(metrics.contains("tilekit_request_duration_seconds_bucket{le=\"+Inf\"}"))
    }
}

func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/gzip")
    process.arguments = ["-dc"]
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data(bytes))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Array(data)
}
