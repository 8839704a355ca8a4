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

    /// Runs `body` against a fresh server over a fresh project, then removes the project.
    static func withServer(_ options: ServerOptions = ServerOptions(), _ body: (TileServer) async throws -> Void) async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        try await body(try fixture.server(options))
    }
}

extension TileServer {
    /// A GET answered by the full handler (the tests' shorthand).
    func get(_ path: String, query: [String: String] = [:], headers: [String: String] = [:]) async -> HTTPResponse {
        await handle(HTTPRequest(method: "GET", path: path, query: query, headers: headers))
    }
}

extension HTTPResponse {
    var bodyText: String { String(decoding: body, as: UTF8.self) }
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

    /// A static image's centre may be anywhere on the map, up to the Mercator limit as
    /// TileJSON writes it (85.051129°, just past the exact one): a centre copied from one passes.
    @Test func aCentreAtTheMercatorLimitIsOnTheMap() throws {
        for latitude in ["85.051129", "-85.051129", "85.0511287798"] {
            guard case .staticImage(_, let s) = try Route.parse("/maps/park/static/0,\(latitude),3/10x10.png") else { Issue.record("not static"); return }
            #expect(s.region == .center(Coordinate(latitude: Double(latitude) ?? 0, longitude: 0), zoom: 3))
        }
    }

    /// The byte-level reader of plain tile paths gives the segment parser's route, or leaves
    /// the path to it: for written cases and for 50,000 seeded paths pieced from fragments of
    /// good and bad ones (a third with a fragment spliced in).
    @Test func plainTilePathsParseAsTheSegmentParserParsesThem() throws {
        for path in ["/maps/park/15/9650/12314@2x.webp", "/maps/small/16/19311/24616.png", "/maps/a-b_C9/0/0/0.JPEG",
                     "/maps/park/30/1073741823/0.png", "/maps/park/3/007/1.jpeg", "/maps/park/1/0/1@3x.jpg",
                     "/maps/\(String(repeating: "m", count: 64))/1/1/1.png"] {
            let plain = try #require(Route.plainTile(path), "\(path)")
            #expect(try plain == Route.parseSegments(path), "\(path)")
        }
        for path in ["/maps/park/layers/pins/3/1/2.jpg", "/maps/park/1/0/0@+2x.png", "/maps/park/1/0/0@02x.png", "/maps/park/99/0/0.png",
                     "/maps/park/3/8/0.png", "/maps/park/1/0/0.png%00", "/maps/p%C3%A4rk/1/0/0.png", "/maps/park/1/0/00000000000.png",
                     "/maps/\(String(repeating: "m", count: 65))/1/1/1.png", "/maps/park/1/0/0.png/extra", "/maps/park/1/0/0.tar.gz",
                     "/maps/park/1/0/0.", "/maps/park/1/0/0@2x", "/maps//1/0/0.png", "/maps/park/1/0/0.gif", "/maps/park/static/1/0/0.png",
                     "/maps/park/1/0/0.png?x=1", "/maps/park/-1/0/0.png", "/maps/park/1/0/0.pngx", "/Maps/park/1/0/0.png"] {
            #expect(Route.plainTile(path) == nil, "\(path)")
        }
        let names = ["park", "p-1_Z", "", "..", "%2e", "layers", "static", "é", "a b", String(repeating: "m", count: 65)]
        let numbers = ["0", "1", "7", "007", "15", "30", "31", "1073741823", "1073741824", "99999999999", "-1", "+1", "", "1.5", "%31"]
        let scales = ["", "", "", "@2x", "@3x", "@4x", "@+2x", "@2", "@", "x"]
        let extensions = [".png", ".PNG", ".jpg", ".jpeg", ".webp", ".json", ".gif", ".", "", ".png.png", ".png/", ".png?x=1", ".p\u{0}g"]
        let fragments = ["/", "/maps/", "maps", "park", "..", ".", "%2e", "%2C", "@2x", "x", ".png", "0", "30", "1073741824", "\\", "\u{0}", "?"]
        var random = SeededRandom(seed: 1689)
        func pick(_ items: [String]) -> String { items[Int(random.next() % UInt64(items.count))] }
        var plainCount = 0
        for _ in 0..<50_000 {
            var path = "/maps/\(pick(names))/\(pick(numbers))/\(pick(numbers))/\(pick(numbers))\(pick(scales))\(pick(extensions))"
            // Now and then a fragment spliced in anywhere.
            if random.next() % 3 == 0 {
                let at = path.index(path.startIndex, offsetBy: Int(random.next() % UInt64(path.count + 1)))
                path.insert(contentsOf: pick(fragments), at: at)
            }
            guard let plain = Route.plainTile(path) else { continue }
            plainCount += 1
            #expect(try plain == Route.parseSegments(path), "\(path)")
        }
        #expect(plainCount > 100)
    }

    @Test(arguments: [
        ("/maps/park/../../etc/passwd", 400), ("/maps/park/%2e%2e/x", 400), ("/maps/%2E%2E%2Fetc/1/0/0.png", 400),
        ("/maps/park/1/0/0.png%00", 400), ("/maps/park/99/0/0.png", 400), ("/maps/park/3/8/0.png", 400),
        ("/maps/park/3/-1/0.png", 400), ("/maps/park/3/0/0.gif", 404), ("//etc/passwd", 404), ("etc/passwd", 400),
        ("/maps/park/1/0/0@9x.png", 400), ("/maps/p%C3%A4rk/1/0/0.png", 400), ("/maps/park/static/1,2/10x10.png", 400),
        ("/maps/park/static/0,0,3/10by10.png", 400), ("/assets/../../etc/passwd", 400), ("/assets/secret.txt", 404),
        ("/maps/park/1/0/0.png/extra", 404), ("/maps/park/static/0,85.0513,3/10x10.png", 400), ("/maps/park/static/0,-85.06,3/10x10.png", 400),
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
