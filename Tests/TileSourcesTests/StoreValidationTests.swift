import Foundation
import Testing
import Canvas
import TileMath
import MBTiles
import Compression
@testable import PMTiles
@testable import TileSources

/// The checks of store files, built in memory: every header field out of range, random
/// damage to a real file, and MBTiles metadata field by field.
@Suite struct StoreValidationTests {
    /// A real file from the writer: zooms 0-3, every tile, mostly one repeated content
    /// (long runs), with leaves when `rootLimit` is small.
    static func sampleFile(rootLimit: Int = 16384 - 127) throws -> [UInt8] {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sample.pmtiles").path
        let writer = try PMTilesWriter(path: path, rootLimit: rootLimit)
        let blank = try RGBAImage(width: 4, height: 4, color: .white).encoded()
        for z in 0...3 {
            for x in 0..<(1 << z) {
                for y in 0..<(1 << z) {
                    let odd = try RGBAImage(width: 4, height: 4, color: Color(red: Double(x) / 8, green: Double(y) / 8, blue: 0)).encoded()
                    try writer.write(TileID(z: z, x: x, y: y), bytes: (x + y) % 3 == 0 ? odd : blank)
                }
            }
        }
        var header = PMTilesHeader()
        header.maxZoom = 3
        try writer.finish(header: header, metadataJSON: Array(#"{"name":"sample","tile_size":256}"#.utf8))
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Each 64-bit header field set to a huge value: refused, naming the field.
    @Test(arguments: [
        (8, "root directory"), (16, "root directory"), (24, "metadata"), (32, "metadata"),
        (40, "leaf directories"), (48, "leaf directories"), (56, "tile data"), (64, "tile data"),
    ])
    func everyHeaderSectionIsChecked(byteOffset: Int, section: String) throws {
        let valid = try Self.sampleFile()
        for value in [UInt64.max, 1 << 63, UInt64(valid.count) + 1] {
            var bytes = valid
            for i in 0..<8 { bytes[byteOffset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
            do {
                _ = try PMTilesReader(bytes: bytes, name: "sample")
                Issue.record("\(section) field at \(byteOffset) = \(value) was accepted")
            } catch {
                guard case .invalid(let file, let field, _, _) = error else { Issue.record("\(error)"); continue }
                #expect(file == "sample" && field.hasPrefix(section), "\(error)")
            }
        }
    }

    /// Random damage to a real file (a fixed seed, so a failure repeats): every outcome is a
    /// tile, an absence or a `PMTilesError`; a trap would end the test process.
    @Test(arguments: [16384 - 127, 60])
    func damagedFilesNeverTrap(rootLimit: Int) throws {
        let valid = try Self.sampleFile(rootLimit: rootLimit)
        var random = SeededRandom(seed: UInt64(rootLimit))
        var refused = 0
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                // Mostly the header and directories, where the numbers are.
                let index = Int.random(in: 0..<min(bytes.count, Bool.random(using: &random) ? 127 : 600), using: &random)
                bytes[index] = [0, 0xFF, 0x80, 0x7F, UInt8.random(in: 0...255, using: &random)].randomElement(using: &random) ?? 0
            }
            do {
                let reader = try PMTilesReader(bytes: bytes, name: "damaged")
                for z in 0...3 { _ = try? reader.tile(TileID(z: z, x: 0, y: (1 << z) - 1)) }
                var entries = 0
                try? reader.forEachEntry { _ in entries += 1 }
                _ = try? PMTilesSource(bytes: bytes)
            } catch {
                refused += 1
            }
        }
        #expect(refused > 0)
    }

    /// A decompression bomb in a leaf stops at the limit instead of inflating.
    @Test func directoryBombsStopAtTheLimit() throws {
        let bomb = Gzip.compress([UInt8](repeating: 0, count: PMTilesLimits.directoryBytes + (1 << 20)))
        let context = PMTilesDirectory.Context(file: "f", name: "leaf", gzip: true, tileDataLength: 10, leafDirectoryLength: 10, ids: 0..<100)
        #expect(throws: PMTilesError.invalid(file: "f", field: "leaf length", value: UInt64(bomb.count),
                                             reason: "does not hold a gzip directory: output larger than 33554432 bytes")) {
            try PMTilesDirectory.deserialize(bomb, context)
        }
    }

    @Test func zoomsOfIDs() {
        #expect(PMTilesID.first(ofZoom: 0) == 0 && PMTilesID.first(ofZoom: 1) == 1 && PMTilesID.first(ofZoom: 2) == 5)
        #expect(PMTilesID.first(ofZoom: 32) == 0x5555_5555_5555_5555)
        #expect(PMTilesID.zoom(of: 4) == 1 && PMTilesID.zoom(of: 5) == 2 && PMTilesID.zoom(of: 0x5555_5555_5555_5554) == 31)
        #expect(PMTilesID.zoom(of: 0x5555_5555_5555_5555) == nil && PMTilesID.zoom(of: .max) == nil)
        for z in 0...TileID.maxZoom { #expect(PMTilesID.zoom(of: TileID(z: z, x: 0, y: 0).pmtilesID) == z) }
    }

    /// MBTiles metadata, field by field: (values, expected zooms and tile size, or the error).
    @Test(arguments: [
        (["minzoom": "3", "maxzoom": "14"], "3-14 256"),
        (["minzoom": " 3 ", "maxzoom": "14.0"], "3-14 256"),
        (["minzoom": "0", "maxzoom": "30", "tile_size": "512"], "0-30 512"),
        ([:], "2-9 256"),  // from the stored tiles
        (["maxzoom": "12"], "2-12 256"),
        (["minzoom": "-0.0", "maxzoom": "3"], "0-3 256"),
        (["maxzoom": "31"], "error: metadata maxzoom \"31\" is not a whole zoom in 0-30"),
        (["maxzoom": "2.5"], "error: metadata maxzoom \"2.5\" is not a whole zoom in 0-30"),
        (["maxzoom": "nan"], "error: metadata maxzoom \"nan\" is not a whole zoom in 0-30"),
        (["maxzoom": "9223372036854775808"], "error: metadata maxzoom \"9223372036854775808\" is not a whole zoom in 0-30"),
        (["minzoom": "10"], "error: metadata minzoom 10 is above maxzoom 9"),
        (["tile_size": "-inf"], "error: metadata tile_size \"-inf\" is not a tile size in 16-4096 pixels"),
        (["tile_size": "8192"], "error: metadata tile_size \"8192\" is not a tile size in 16-4096 pixels"),
    ] as [([String: String], String)])
    func mbtilesMetadataFields(values: [String: String], expected: String) {
        do {
            let metadata = try MBTilesSource.metadata(from: MBTiles.Metadata(values), path: "m.mbtiles", storedZooms: { 2...9 })
            #expect("\(metadata.minZoom)-\(metadata.maxZoom) \(metadata.tileSize)" == expected)
        } catch {
            #expect(error == .corrupt(path: "m.mbtiles", reason: String(expected.dropFirst("error: ".count))))
        }
    }

    @Test(arguments: [
        ("10,20,5", 20.0, 5 as Int?, false), ("10,20", 20.0, nil, false), ("10,20,31", 20.0, nil, true),
        ("10,20,-1", 20.0, nil, true), ("10,20,inf", 20.0, nil, true), ("10,95,3", nil, nil, true),
        ("nan,20,3", nil, nil, true), ("10", nil, nil, true), ("10,20,3,4", nil, nil, true), ("a,b,c", nil, nil, true),
    ] as [(String, Double?, Int?, Bool)])
    func mbtilesCenter(text: String, latitude: Double?, zoom: Int?, warns: Bool) throws {
        let metadata = try MBTilesSource.metadata(from: MBTiles.Metadata(["center": text, "minzoom": "0", "maxzoom": "5"]),
                                                  path: "m", storedZooms: { nil })
        #expect(metadata.center?.latitude == latitude && metadata.centerZoom == zoom && metadata.warnings.isEmpty == !warns)
    }

    /// A layer over a source made in code with impossible zooms answers, never traps.
    @Test(arguments: [(-1, -1), (200, 200), (5, 2), (0, 40)])
    func layersWithImpossibleZoomsDoNotTrap(minZoom: Int, maxZoom: Int) async throws {
        let source = RecordingSource.solid(.white, minZoom: minZoom, maxZoom: maxZoom)
        var options = LayerOptions()
        options.maxUnderzoom = 2
        let layer = TileLayer(source: source, options: options)
        for tile in [TileID(z: 0, x: 0, y: 0), TileID(z: 3, x: 1, y: 1), TileID(z: 22, x: 5, y: 5)] {
            _ = try await layer.render(TileRequest(tile))
        }
        var inverted = LayerOptions()
        (inverted.minZoom, inverted.maxZoom) = (10, 2)
        guard case .noTile = try await TileLayer(source: source, options: inverted).render(TileRequest(TileID(z: 5, x: 0, y: 0))) else {
            Issue.record("a layer whose zooms are inverted showed a tile")
            return
        }
    }
}

