import Foundation
import Testing
import Canvas
import TileMath
import TileSources
@testable import Pyramids

/// A 512 x 256 test card: left half red, right half blue, a white 64 px square in the
/// middle, the bottom-right quarter transparent.
func testCard() throws -> RGBAImage {
    var image = RGBAImage(width: 512, height: 256)
    for y in 0..<256 {
        for x in 0..<512 {
            if x >= 256 && y >= 128 { continue }
            let white = (224..<288).contains(x) && (96..<160).contains(y)
            image[x, y] = white ? Pixel(red: 255, green: 255, blue: 255) : x < 256 ? Pixel(red: 220, green: 20, blue: 20) : Pixel(red: 20, green: 20, blue: 220)
        }
    }
    return image
}

func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-pyramid-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// A baseline TIFF (RGB, 8 bits, uncompressed) with `rowsPerStrip` rows per strip.
func tiff(_ image: RGBAImage, rowsPerStrip: Int) -> Data {
    var data = Data()
    func u16(_ v: Int) { data.append(contentsOf: [UInt8(v & 0xff), UInt8(v >> 8 & 0xff)]) }
    func u32(_ v: Int) { data.append(contentsOf: [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24 & 0xff)]) }
    let strips = (image.height + rowsPerStrip - 1) / rowsPerStrip
    let pixelStart = 8
    var pixels = [UInt8]()
    for y in 0..<image.height { for x in 0..<image.width { let p = image[x, y]; pixels += [p.red, p.green, p.blue] } }
    let offsetsAt = pixelStart + pixels.count, countsAt = offsetsAt + 4 * strips, bitsAt = countsAt + 4 * strips
    let ifdAt = bitsAt + 6
    data.append(contentsOf: [0x49, 0x49]); u16(42); u32(ifdAt)
    data.append(contentsOf: pixels)
    for s in 0..<strips { u32(pixelStart + s * rowsPerStrip * image.width * 3) }
    for s in 0..<strips { u32(min(rowsPerStrip, image.height - s * rowsPerStrip) * image.width * 3) }
    u16(8); u16(8); u16(8)
    let entries: [(Int, Int, Int, Int)] = [(256, 4, 1, image.width), (257, 4, 1, image.height), (258, 3, 3, bitsAt), (259, 3, 1, 1),
                                           (262, 3, 1, 2), (273, 4, strips, offsetsAt), (277, 3, 1, 3), (278, 4, 1, rowsPerStrip),
                                           (279, 4, strips, countsAt), (284, 3, 1, 1)]
    u16(entries.count)
    for (tag, type, count, value) in entries {
        u16(tag); u16(type); u32(count)
        if type == 3 && count == 1 { u16(value); u16(0) } else { u32(value) }
    }
    u32(0)
    return data
}

@Suite struct GeoreferenceTests {
    @Test func boundsCornersAndWorldFiles() throws {
        let box = BoundingBox(west: -73.9819, south: 40.7644, east: -73.9493, north: 40.8006)
        let g = try Georeference.bounds(box, width: 1000, height: 500)
        let (lon, lat) = g.world(x: 1000, y: 500)
        #expect(abs(lon - box.east) < 1e-12 && abs(lat - box.south) < 1e-12)
        // Corners of an unrotated image give the same transform.
        let c = try Georeference.corners([Coordinate(latitude: 40.8006, longitude: -73.9819), Coordinate(latitude: 40.8006, longitude: -73.9493),
                                          Coordinate(latitude: 40.7644, longitude: -73.9493), Coordinate(latitude: 40.7644, longitude: -73.9819)],
                                         width: 1000, height: 500)
        #expect(abs(c.a - g.a) < 1e-12 && abs(c.e - g.e) < 1e-12 && abs(c.b) < 1e-12)
        // The world file round trip (it names the centre of the top-left pixel).
        let w = try Georeference.worldFile(g.worldFileText, space: .degrees, width: 1000, height: 500, file: "x.pgw")
        #expect(abs(w.c - g.c) < 1e-9 && abs(w.f - g.f) < 1e-9)
        #expect(g.bounds == box || abs(g.bounds.north - box.north) < 1e-12)
        // The inverse maps back.
        let inv = g.inverse
        #expect(abs(inv.a * box.west + inv.b * box.north + inv.c) < 1e-9)
        // Default zooms: from one tile to the deepest zoom not finer than the image.
        // GDAL warps to square 5.77 m pixels (keeping the diagonal): z14 is 9.6 m, z15 4.8 m.
        #expect(g.defaultZooms(tileSize: 256) == 12...14)
    }

    @Test func badGeoreferencesAreNamed() {
        #expect(throws: GeoreferenceError.badBounds("south 41.0 is not below north 40.0")) {
            try Georeference.bounds(BoundingBox(west: 0, south: 41, east: 1, north: 40), width: 10, height: 10)
        }
        do {
            _ = try Georeference.worldFile("1\n0\n0\n-1\nten\n5\n", space: .degrees, width: 10, height: 10, file: "scan.jgw")
            Issue.record("accepted")
        } catch {
            #expect(error.description == "scan.jgw: line 5: \"ten\" is not a number")
        }
        #expect(throws: GeoreferenceError.self) { try Georeference.worldFile("1\n0\n0\n", space: .degrees, width: 10, height: 10, file: "a.wld") }
    }
}

@Suite struct ImageRowReaderTests {
    @Test func everyFormatStreamsTheSameRows() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var card = try testCard()
        for y in 128..<256 { for x in 256..<512 { card[x, y] = Pixel(red: 0, green: 0, blue: 0) } }  // opaque: JPEG and TIFF have no alpha
        let files: [(String, [UInt8], Int)] = [("card.png", try card.encoded(.png()), 0), ("card.jpg", try card.encoded(.jpeg(quality: 95)), 64),
                                               ("card.webp", try card.encoded(.webp(lossless: true)), 0), ("card.tif", Array(tiff(card, rowsPerStrip: 7)), 0)]
        for (name, bytes, tolerance) in files {
            let url = folder.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            let reader = try ImageRowReader(path: url.path)
            #expect(reader.width == 512 && reader.height == 256, "\(name)")
            var row = [UInt8](repeating: 0, count: 512 * 4)
            var worst = 0
            for y in 0..<256 {
                try row.withUnsafeMutableBufferPointer { try reader.readRow(into: $0) }
                for x in stride(from: 0, to: 512, by: 37) {
                    let p = card[x, y]
                    worst = max(worst, abs(Int(row[x * 4]) - Int(p.red)), abs(Int(row[x * 4 + 2]) - Int(p.blue)))
                }
            }
            #expect(worst <= tolerance, "\(name): \(worst)")
        }
        let broken = folder.appendingPathComponent("broken.png")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0]).write(to: broken)
        #expect(throws: CanvasError.self) { try ImageRowReader(path: broken.path) }
    }
}

@Suite struct PyramidBuilderTests {
    func build(_ image: URL, into out: String, zooms: ClosedRange<Int>, resume: Bool = false, commit: Bool = true, retina: Bool = false) async throws -> PyramidReport {
        let box = BoundingBox(west: -10, south: -5, east: 10, north: 5)
        let g = try Georeference.bounds(box, width: 512, height: 256)
        var options = PyramidOptions()
        options.zooms = zooms
        options.retina = retina
        var stores = [try StagedStore(path: out, format: .png, resume: resume)]
        if retina { stores.append(try StagedStore(path: out.replacingOccurrences(of: ".mbtiles", with: "@2x.mbtiles"), format: .png, resume: resume)) }
        let builder = try PyramidBuilder(source: image.path, georeference: g, stores: stores, options: options)
        let report = try await builder.run { _, _ in }
        if commit { for store in stores { try store.commit(metadata: builder.metadata(name: "card", attribution: nil)) } }
        return report
    }

    @Test func tilesLandWhereTheImageIs() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = folder.appendingPathComponent("card.png")
        try Data(try testCard().encoded(.png())).write(to: image)
        let out = folder.appendingPathComponent("card.mbtiles").path
        let report = try await build(image, into: out, zooms: 2...5, retina: true)
        let source = try TileStore.open(out)
        #expect(source.metadata.minZoom == 2 && source.metadata.maxZoom == 5)
        // The red half: a point at (-5, 2) degrees; the blue half at (5, 2); the transparent quarter at (5, -3).
        func pixel(_ lon: Double, _ lat: Double, z: Int) async throws -> Pixel? {
            let tile = TileID(containing: Coordinate(latitude: lat, longitude: lon), zoom: z)
            guard let data = try await source.tile(TileRequest(tile)).data else { return nil }
            let image = try RGBAImage(decoding: data.bytes)
            let p = MapPoint(Coordinate(latitude: lat, longitude: lon))
            let n = 256 * pow(2, Double(z))
            return image[Int(p.x * n) - tile.x * 256, Int(p.y * n) - tile.y * 256]
        }
        #expect(try await pixel(-5, 2, z: 5)?.red == 220)
        #expect(try await pixel(5, 2, z: 5)?.blue == 220)
        let centre = try await pixel(-0.3, 0.3, z: 5)
        #expect(centre == Pixel(red: 255, green: 255, blue: 255), "\(String(describing: centre))")
        #expect(try await pixel(5, -3, z: 5)?.alpha ?? 0 == 0)
        #expect(try await pixel(-5, 2, z: 2)?.red ?? 0 > 200)  // averaged parents keep the colour
        // No tile is written where the image has no pixel: z5 tiles wholly in the transparent quarter.
        #expect(report.empty > 0)
        let emptyTile = TileID(containing: Coordinate(latitude: -4, longitude: 9), zoom: 5)
        #expect(try await source.tile(TileRequest(emptyTile)).data == nil)
        // @2x tiles in the same pass, in the sibling store.
        let retina = try TileStore.open(folder.appendingPathComponent("card@2x.mbtiles").path)
        let tile = TileID(containing: Coordinate(latitude: 2, longitude: -5), zoom: 4)
        #expect(try RGBAImage(decoding: try await retina.tile(TileRequest(tile)).data!.bytes).width == 512)
        // Nothing is left beside the store.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["card.mbtiles", "card.png", "card@2x.mbtiles"])
    }

    /// A scan pinned by four rotated corners goes through the per-pixel path: each colour
    /// lands where the forward transform puts that part of the image.
    @Test func aRotatedScanLandsWhereItsCornersSay() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = folder.appendingPathComponent("card.png")
        try Data(try testCard().encoded(.png())).write(to: image)
        let angle = 30.0 * .pi / 180
        func rotated(_ x: Double, _ y: Double) -> Coordinate {  // (x, y) in degrees from the centre, y up
            Coordinate(latitude: x * sin(angle) + y * cos(angle), longitude: x * cos(angle) - y * sin(angle))
        }
        let g = try Georeference.corners([rotated(-10, 5), rotated(10, 5), rotated(10, -5), rotated(-10, -5)], width: 512, height: 256)
        #expect(g.b != 0 && g.d != 0)
        var options = PyramidOptions()
        options.zooms = 5...5
        let out = folder.appendingPathComponent("rotated.mbtiles").path
        let store = try StagedStore(path: out, format: .png, resume: false)
        let builder = try PyramidBuilder(source: image.path, georeference: g, stores: [store], options: options)
        _ = try await builder.run { _, _ in }
        try store.commit(metadata: builder.metadata(name: "rotated", attribution: nil))
        let source = try TileStore.open(out)
        func colour(atImage x: Double, _ y: Double) async throws -> Pixel? {
            let (lon, lat) = g.world(x: x, y: y)
            let c = Coordinate(latitude: lat, longitude: lon)
            let tile = TileID(containing: c, zoom: 5)
            guard let data = try await source.tile(TileRequest(tile)).data else { return nil }
            let p = MapPoint(c), n = 256 * 32.0
            return try RGBAImage(decoding: data.bytes)[Int(p.x * n) - tile.x * 256, Int(p.y * n) - tile.y * 256]
        }
        #expect(try await colour(atImage: 100, 60)?.red == 220)      // the red half
        #expect(try await colour(atImage: 400, 60)?.blue == 220)     // the blue half
        #expect(try await colour(atImage: 240, 110) == Pixel(red: 255, green: 255, blue: 255))  // the white square
        #expect(try await colour(atImage: 450, 220)?.alpha ?? 0 == 0)  // the transparent quarter
    }

    @Test func aResumedBuildGivesTheSameTiles() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = folder.appendingPathComponent("card.png")
        try Data(try testCard().encoded(.png())).write(to: image)
        let whole = folder.appendingPathComponent("whole.mbtiles").path
        _ = try await build(image, into: whole, zooms: 3...6)
        // A build that stops before it is committed (as if killed), with part of its tiles:
        // drop some of the partial store's tiles to stand for the work not yet done.
        let resumed = folder.appendingPathComponent("resumed.mbtiles").path
        _ = try await build(image, into: resumed, zooms: 3...6, commit: false)
        let partial = folder.appendingPathComponent(".resumed.partial.mbtiles").path
        #expect(FileManager.default.fileExists(atPath: partial) && !FileManager.default.fileExists(atPath: resumed))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", partial, "DELETE FROM map WHERE zoom_level IN (3, 6) AND tile_column % 2 = 0"]
        try process.run()
        process.waitUntilExit()
        let report = try await build(image, into: resumed, zooms: 3...6, resume: true)
        #expect(report.reused > 0 && report.written > 0)
        var a = [TileID: [UInt8]](), b = [TileID: [UInt8]]()
        try TileStore.forEachTile(in: try TileStore.open(whole)) { a[$0] = $1 }
        try TileStore.forEachTile(in: try TileStore.open(resumed)) { b[$0] = $1 }
        #expect(a.count == b.count && a == b)
    }
}
