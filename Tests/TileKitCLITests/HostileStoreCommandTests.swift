import Foundation
import Testing
import TileMath
import TileSources
@testable import TileKitCLI

/// `info`, `convert` and `stitch` on the hostile stores of issue 11 (the fixtures of
/// TileSourcesTests/Hostile): exit 65 with a message naming the file, field and value.
@Suite struct HostileStoreCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TileSourcesTests/Hostile")
    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

    @Test(arguments: [
        ("pmtiles-header/root-length-2e63.pmtiles", "not a valid PMTiles file: root directory length 9223372036854775807 exceeds the file size 773"),
        ("pmtiles-header/metadata-length-3gb.pmtiles", "metadata length 3000000000 exceeds the limit"),
        ("pmtiles-header/minzoom-200.pmtiles", "minzoom 200 is outside the zooms 0-31"),
        ("pmtiles-directory/run-length-2e32-1.pmtiles", "root directory entry 0 run length 4294967295 from tile id 0 reaches past"),
        ("pmtiles-directory/self-referencing-leaf.pmtiles", "leaf directory at offset 0 depth 4 exceeds the 3 levels"),
        ("pmtiles-directory/fan-out-100-three-levels.pmtiles", "leaf directory at offset 67 entry 99 tile id 99 reaches past 1"),
        ("pmtiles-directory/leaf-entry-offset-overflow.pmtiles", "entry 0 offset 18446744073709551614 plus its length 100 exceeds"),
        ("mbtiles/maxzoom--1.mbtiles", "metadata maxzoom \"-1\" is not a whole zoom in 0-30"),
        ("mbtiles/tile-size-1e12.mbtiles", "metadata tile_size \"1e12\" is not a tile size"),
        ("mbtiles/tile-zoom--1.mbtiles", "tiles table row zoom_level -1, tile_column 0, tile_row 0: zoom_level -1 is outside 0-30"),
        ("mbtiles/tile-column-out-of-range.mbtiles", "tile_column 5 is outside 0-1 at zoom 1"),
    ])
    func infoRefusesHostileStores(name: String, message: String) async {
        let path = Self.fixture(name)
        let run = await CLIRun(["info", path])
        #expect(run.exitCode == 65 && run.error.contains("\(path): ") && run.error.contains(message), "\(run.error)")
    }

    @Test func infoCountsAHugeRunAtOnceAndShowsWarnings() async throws {
        let run = await CLIRun(["info", Self.fixture("pmtiles-directory/valid-run-2e32-1-z16.pmtiles")])
        #expect(run.exitCode == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.output.joined(separator: "\n").utf8)) as? [String: Any])
        #expect(json["tiles"] as? Int == 4_294_967_295 && json["maxzoom"] as? Int == 16)

        let path = Self.fixture("mbtiles/center-zoom-1e309.mbtiles")
        let warned = await CLIRun(["info", path])
        let warning = "metadata center \"0,0,1e309\": the zoom is not a whole zoom in 0-30; ignored"
        #expect(warned.exitCode == 0 && warned.error == "\(path): warning: \(warning)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(warned.output.joined(separator: "\n").utf8)) as? [String: Any])
        #expect(object["warnings"] as? [String] == [warning])
    }

    /// A tile outside the pyramid is named, and no destination or partial store is left.
    @Test(arguments: [
        ("mbtiles/tile-zoom--1.mbtiles", "out.pmtiles", "tiles table row zoom_level -1, tile_column 0, tile_row 0: zoom_level -1 is outside 0-30"),
        ("mbtiles/tile-column-out-of-range.mbtiles", "out.pmtiles", "tiles table row zoom_level 1, tile_column 5, tile_row 0: tile_column 5 is outside 0-1 at zoom 1"),
        ("mbtiles/tile-row-2e62.mbtiles", "out", "tiles table row zoom_level 2, tile_column 0, tile_row 4611686018427387904: tile_row 4611686018427387904 is outside 0-3 at zoom 2"),
        ("pmtiles-directory/leaf-entry-offset-overflow.pmtiles", "out.mbtiles",
         "not a valid PMTiles file: leaf directory at offset 0 entry 0 offset 18446744073709551614 plus its length 100 exceeds the tile data length 570"),
        ("pmtiles-header/minzoom-200.pmtiles", "out.mbtiles", "not a valid PMTiles file: minzoom 200 is outside the zooms 0-31 of the spec"),
    ])
    func convertNamesTheBadTile(name: String, destination: String, message: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-hostile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = Self.fixture(name)
        let run = await CLIRun(["convert", source, directory.appendingPathComponent(destination).path])
        #expect(run.exitCode == 65 && run.error.hasSuffix("\(source): \(message)"), "\(run.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// stitch multiplies the store's tile size into an image size: a bad one is named first.
    @Test func stitchRefusesBadTileSizes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-hostile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("layer.png").path
        for (value, name) in [("-2147483649", "tile-size--2147483649"), ("0", "tile-size-0"), ("1e12", "tile-size-1e12")] {
            let path = Self.fixture("mbtiles/\(name).mbtiles")
            let run = await CLIRun(["stitch", path, "--bbox", "-10,-10,10,10", "--zoom", "0", "-o", output])
            #expect(run.exitCode == 65 && run.error.contains("\(path): metadata tile_size \"\(value)\" is not a tile size in 16-4096 pixels"), "\(run.error)")
        }
        // A valid size that split cannot read back.
        let big = directory.appendingPathComponent("big.mbtiles").path
        let writer = try MBTilesStoreWriter(path: big)
        try writer.finish(metadata: TileSetMetadata(name: "big", format: .png, minZoom: 0, maxZoom: 0, tileSize: 1024))
        let run = await CLIRun(["stitch", big, "--bbox", "-10,-10,10,10", "--zoom", "0", "-o", output])
        #expect(run.exitCode == 65 && run.error.contains("\(big): tile size 1024 is not 256 or 512"), "\(run.error)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
