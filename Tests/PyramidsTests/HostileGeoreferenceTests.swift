import Foundation
import Testing
import Canvas
import TileMath
import TileSources  // StagedStore
@testable import Pyramids

/// A hostile world file of issue 11, committed under Fixtures/.
func worldFile(_ name: String, filePath: String = #filePath) throws -> (text: String, path: String) {
    let url = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
    return (try String(contentsOf: url, encoding: .utf8), url.path)
}

@Suite struct HostileGeoreferenceTests {
    /// Each was a trap (NaN or infinity to Int) or an unbounded allocation; now an error that
    /// names the file, the line or corner, and the value.
    @Test(arguments: [
        ("latitude-91.pgw", Georeference.Space.degrees, 256, "line 6: the top-left latitude 91 is outside ±90°"),
        ("positive-y-scale.pgw", .degrees, 256, "line 4: the pixel height 0.001 must be below 0 (rows run from north to south)"),
        ("zero-y-scale.pgw", .degrees, 256, "line 4: the pixel height 0 must be below 0 (rows run from north to south)"),
        ("huge-scale.pgw", .degrees, 256,
         "the image's top-left corner is at longitude -5e+199, outside ±180°: the pixel size or position is wrong (Web Mercator meters read as degrees?)"),
        ("mercator-read-as-degrees.pgw", .degrees, 256,
         "line 5: the top-left longitude -8238310.24 is outside ±180°: Web Mercator meters read as degrees? (world files in EPSG:3857 need --crs 3857)"),
        ("pixel-2e32-meters.pgw", .meters, 256,
         "the image's top-left corner is at easting -2147483648, outside ±20037508.342789244 m: the pixel size or position is wrong"),
        ("wider-than-the-world.pgw", .degrees, 3600,
         "the image's top-right corner is at longitude 3420, outside ±180°: the pixel size or position is wrong (Web Mercator meters read as degrees?)"),
        ("nan.pgw", .degrees, 256, "line 5: \"nan\" is not a number"),
        ("beyond-mercator.pgw", .degrees, 256,
         "the image lies between latitudes 87.435 and 89.995, beyond ±85.0511° where Web Mercator tiles end: no tile can show it"),
        ("tiny-scale.pgw", .degrees, 256, "the pixel-to-world transform is not invertible"),
    ])
    func hostileWorldFilesAreNamedErrors(name: String, space: Georeference.Space, width: Int, reason: String) throws {
        let file = try worldFile(name)
        #expect(throws: GeoreferenceError.worldFile(file: file.path, reason: reason)) {
            try Georeference.worldFile(file.text, space: space, width: width, height: 256, file: file.path)
        }
    }

    @Test func boundsAndCornersOffTheEarthAreRefused() {
        #expect(throws: GeoreferenceError.badBounds("0,-91,1,1 is outside [-180, 180] x [-90, 90]")) {
            try Georeference.bounds(BoundingBox(west: 0, south: -91, east: 1, north: 1), width: 10, height: 10)
        }
        #expect(throws: GeoreferenceError.outsideWorld(corner: "bottom-right", axis: "latitude", value: -100, limit: 90, space: .degrees)) {
            try Georeference.corners([Coordinate(latitude: 10, longitude: 0), Coordinate(latitude: 10, longitude: 10),
                                      Coordinate(latitude: -100, longitude: 10), Coordinate(latitude: -100, longitude: 0)], width: 10, height: 10)
        }
        #expect(throws: GeoreferenceError.degenerate("the pixel-to-world transform has a value that is not a number")) {
            try Georeference(a: .nan, b: 0, c: 0, d: 0, e: -1, f: 0, space: .degrees, width: 10, height: 10)
        }
        #expect(throws: GeoreferenceError.degenerate("the image is 0x10 pixels")) {
            try Georeference(a: 1, b: 0, c: 0, d: 0, e: -1, f: 0, space: .degrees, width: 0, height: 10)
        }
    }

    /// A world scan reaching the poles is fine: Mercator's part of it is tiled.
    @Test func aWorldMapToThePolesHasFiniteZooms() throws {
        let world = try Georeference.bounds(BoundingBox(west: -180, south: -90, east: 180, north: 90), width: 3600, height: 1800)
        #expect(world.defaultZooms(tileSize: 256) == 0...3)
        let text = "0.1\n0\n0\n-0.1\n-179.95\n89.95\n"  // the same as a world file: edges land on ±180, ±90 within rounding
        #expect(try Georeference.worldFile(text, space: .degrees, width: 3600, height: 1800, file: "world.pgw").bounds.east == 180)
    }

    /// A pixel of a picodegree: the deepest zoom, and no trap turning far-away rows into Ints.
    @Test func aTinyPixelEndsAtTheDeepestZoom() throws {
        let g = try Georeference(a: 1e-12, b: 0, c: 10, d: 0, e: -1e-12, f: 50, space: .degrees, width: 256, height: 256)
        #expect(g.defaultZooms(tileSize: 256).upperBound == TileID.maxZoom)
        let warper = TileWarper(georeference: g, resampling: .bilinear)
        // The top row of tiles is 3.5e13 pixels above the image: held at -2^40.
        let rows = warper.sourceRows(for: TileID(z: 20, x: 0, y: 0), size: 256)
        #expect(rows == (-(1 << 40) - 2)..<(-(1 << 40) + 2))
        #expect(TileWarper.rowIndex(.infinity) == 1 << 40 && TileWarper.rowIndex(-1e300) == -(1 << 40))
    }

    /// A scan turned a quarter (its rows run west, its columns north): a tile's source rows
    /// run from its highest corner to its lowest, here on its east and west edges instead of
    /// its north and south, widened by the resampling's taps.
    @Test func theSourceRowsOfATileSpanItsFourCorners() throws {
        let g = try Georeference(a: 0, b: -0.01, c: 10, d: 0.01, e: 0, f: 40, space: .degrees, width: 4000, height: 4000)
        let warper = TileWarper(georeference: g, resampling: .bilinear)
        let tile = TileID(z: 6, x: 31, y: 20)
        let ys = [(0.0, 0.0), (256.0, 0.0), (0.0, 256.0), (256.0, 256.0)].map { warper.sourcePoint(tile: tile, size: 256, i: $0.0, j: $0.1).1 }
        let (top, bottom) = (try #require(ys.min()), try #require(ys.max()))
        #expect(ys.firstIndex(of: top) == 1 && ys.firstIndex(of: bottom) == 0)  // north-east and north-west, not north-west and south-east
        let radius = Resampling.bilinear.radius
        #expect(warper.sourceRows(for: tile, size: 256) == (Int(top.rounded(.down)) - radius - 1)..<(Int(bottom.rounded(.up)) + radius + 1))
    }

    /// `windowRows` stops at the first row of tiles that holds `mostRows`; it returns what
    /// a walk over every row returns, for plain, turned, sheared, meter and thin scans.
    @Test(arguments: [
        (0.01, 0.0, -10.0, 0.0, -0.01, 60.0, Georeference.Space.degrees, 4000, 4000),
        (0.0, -0.01, 10.0, 0.01, 0.0, 40.0, .degrees, 4000, 4000),
        (0.01, 0.004, -10.0, 0.003, -0.01, 60.0, .degrees, 3000, 5000),
        (30.0, 5.0, 1_000_000.0, -4.0, -30.0, 6_000_000.0, .meters, 5000, 3000),
        (1e-9, 0.0, 10.0, 0.0, -0.01, 40.0, .degrees, 16384, 8192),
    ])
    func theWindowOfRowsIsTheMostOfAnyRow(a: Double, b: Double, c: Double, d: Double, e: Double, f: Double,
                                           space: Georeference.Space, width: Int, height: Int) throws {
        let g = try Georeference(a: a, b: b, c: c, d: d, e: e, f: f, space: space, width: width, height: height)
        for resampling in [Resampling.bilinear, .lanczos] {
            let warper = TileWarper(georeference: g, resampling: resampling)
            for z in [0, 3, 7, 11] {
                let range = try #require(TileRange.covering(g.bounds, zoom: z).first)
                var most = 0
                for y in range.minY...range.maxY {
                    let left = warper.sourceRows(for: TileID(z: z, x: range.minX, y: y), size: 256)
                    let right = warper.sourceRows(for: TileID(z: z, x: range.maxX, y: y), size: 256)
                    most = max(most, min(height, max(left.upperBound, right.upperBound)) - max(0, min(left.lowerBound, right.lowerBound)))
                }
                #expect(PyramidBuilder.windowRows(range, warper: warper, tileSize: 256, imageHeight: height) == most, "zoom \(z)")
                #expect(most <= warper.mostRows(in: range, size: 256, imageHeight: height))
            }
        }
    }

    /// A scan 16 mm wide and 8,192 km tall (meters; the fuzzer's world file had pixels
    /// 1e-300 m wide): at zoom 20, 200,000 rows of tiles that each hold a few of its rows.
    /// The plan's walk stops at the first that holds the most any can; and the deepest zoom
    /// (its default: the pixels are that fine) has more than 50 million tiles, refused even
    /// with no store to write them to (such a plan walked 2^28 rows of tiles, 10 s and more).
    @Test func aThinTallScanIsPlannedWithoutWalkingEveryRow() throws {
        let g = try Georeference(a: 1e-6, b: 0, c: 100_000, d: 0, e: -1000, f: 4_000_000, space: .meters, width: 16384, height: 8192)
        let warper = TileWarper(georeference: g, resampling: .bilinear)
        let range = try #require(TileRange.covering(g.bounds, zoom: 20).first)
        #expect(range.maxY - range.minY > 200_000 && range.minX == range.maxX)
        #expect(warper.mostRows(in: range, size: 256, imageHeight: 8192) == 6)  // 0.04 rows of the image, 2 of rounding, 4 taps
        #expect(PyramidBuilder.windowRows(range, warper: warper, tileSize: 256, imageHeight: 8192) == 6)
        #expect(g.defaultZooms(tileSize: 256).upperBound == TileID.maxZoom)
        #expect(throws: PyramidError.self) {
            try PyramidBuilder(source: "unread.png", georeference: g, stores: [], options: PyramidOptions())
        }
        do {
            _ = try PyramidBuilder(source: "unread.png", georeference: g, stores: [], options: PyramidOptions())
        } catch {
            guard case .tooLarge(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.hasSuffix(" tiles: choose fewer zooms (--zoom)"))
        }
    }

    /// A zoom far above the image's resolution would hold the whole image as the window of
    /// rows: refused up front, with what to do, instead of allocating it.
    @Test func theWindowOfRowsHasABudget() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-window-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let g = try Georeference.bounds(BoundingBox(west: -10, south: -10, east: 10, north: 10), width: 4096, height: 4096)
        let store = try StagedStore(path: folder.appendingPathComponent("out").path, scheme: .xyz, format: .png, resume: false)
        var options = PyramidOptions()
        options.zooms = 0...2
        options.maxWindowBytes = 16 << 20
        #expect(throws: PyramidError.tooLarge("zoom 2 would hold 2050 rows of the 4096 px wide image in memory at once (32 MiB, the limit is 16 MiB): start the zooms deeper (--zoom)")) {
            try PyramidBuilder(source: folder.appendingPathComponent("unused.png").path, georeference: g, stores: [store], options: options)
        }
        options.lowerZooms = .resample
        options.zooms = 5...6
        #expect(throws: PyramidError.tooLarge("zoom 5 would hold 2050 rows of the 4096 px wide image in memory at once (32 MiB, the limit is 16 MiB): use --lower average or start the zooms deeper (--zoom)")) {
            try PyramidBuilder(source: folder.appendingPathComponent("unused.png").path, georeference: g, stores: [store], options: options)
        }
        options.zooms = -1...2
        #expect(throws: PyramidError.badZoom("zooms -1...2 are out of range [0, 30]")) {
            try PyramidBuilder(source: folder.appendingPathComponent("unused.png").path, georeference: g, stores: [store], options: options)
        }
    }

    /// Rows wholly below the image (a tile row just past its edge) are no rows, not a trap.
    @Test func rowsOutsideTheImageAreNone() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-rows-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("small.png").path
        try Data(try RGBAImage(width: 16, height: 16, color: .white).encoded()).write(to: URL(fileURLWithPath: path))
        let rows = try SourceRows(path: path)
        try rows.load(300..<400)
        try rows.load(-50 ..< -10)
        #expect(rows.holds(300..<400) && rows.clamped(20..<30) == nil && rows.clamped(-5..<3) == 0..<3)
        try rows.load(0..<16)
        #expect(rows.holds(0..<16) && rows.pixels.count == 16 * 16 * 4)
    }
}
