import Foundation
import Testing
import Canvas
import TileMath
import TileSources
@testable import TileKitCLI

@Suite struct StoreCommandTests {
    func folderOfTiles() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-cli-\(UUID())")
        let writer = try FolderTileWriter(directory: directory.appendingPathComponent("tiles"), fileExtension: "png")
        for zoom in 2...4 {
            for tile in TileRange.covering(BoundingBox(west: -10, south: 40, east: 10, north: 55), zoom: zoom)[0] {
                try writer.write(tile, bytes: RGBAImage(width: 256, height: 256, color: Color(red: Double(tile.x % 4) / 4, green: Double(zoom) / 5, blue: 0.5)).encoded())
            }
        }
        try writer.finish(metadata: TileSetMetadata(name: "europe", attribution: "© test"))
        return directory
    }

    func tiles(of path: String) throws -> [TileID: [UInt8]] {
        var result = [TileID: [UInt8]]()
        try TileStore.forEachTile(in: TileStore.open(path)) { result[$0] = $1 }
        return result
    }

    /// Folder → MBTiles → PMTiles → TMS folder keeps every tile byte for byte.
    @Test func convertRoundTripsThroughEveryKind() async throws {
        let directory = try folderOfTiles()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        let original = try tiles(of: path("tiles"))
        #expect(original.count >= 10)
        #expect(await CLIRun(["convert", path("tiles"), path("a.mbtiles")]).output == ["\(path("a.mbtiles")): \(original.count) tiles (mbtiles)"])
        #expect(await CLIRun(["convert", path("a.mbtiles"), path("b.pmtiles")]).exitCode == 0)
        #expect(await CLIRun(["convert", path("b.pmtiles"), path("c"), "--scheme", "tms"]).exitCode == 0)
        for name in ["a.mbtiles", "b.pmtiles", "c"] { #expect(try tiles(of: path(name)) == original, "\(name)") }
        #expect(try TileStore.open(path("c")).metadata.scheme == .tms)
        #expect(FileManager.default.fileExists(atPath: path("c/4/\(original.keys.first { $0.z == 4 }!.x)")))
        // Only the stores are left: no partial files, no -wal or -shm.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == ["tiles", "a.mbtiles", "b.pmtiles", "c"])
        // Re-encoding to WebP.
        #expect(await CLIRun(["convert", path("a.mbtiles"), path("d.mbtiles"), "--format", "webp", "--quality", "90"]).exitCode == 0)
        let webp = try tiles(of: path("d.mbtiles"))
        #expect(webp.count == original.count && webp.values.allSatisfy { ImageFormat(sniffing: $0) == .webp })
        #expect(try TileStore.open(path("d.mbtiles")).metadata.format == .webp)
    }

    @Test func convertRefusesAndFailsCleanly() async throws {
        let directory = try folderOfTiles()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        _ = FileManager.default.createFile(atPath: path("exists.mbtiles"), contents: Data("keep me".utf8))
        let refused = await CLIRun(["convert", path("tiles"), path("exists.mbtiles")])
        #expect(refused.exitCode == 64 && refused.error.contains("--force"))
        #expect(try String(contentsOfFile: path("exists.mbtiles"), encoding: .utf8) == "keep me")
        // A corrupt source tile: exit 65 naming it, nothing written.
        let bad = path("tiles/3/\(try FileManager.default.contentsOfDirectory(atPath: path("tiles/3")).sorted().first!)")
        let badFile = bad + "/" + (try FileManager.default.contentsOfDirectory(atPath: bad).first!)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: badFile))
        let failed = await CLIRun(["convert", path("tiles"), path("out.pmtiles"), "--format", "jpg"])
        #expect(failed.exitCode == 65, "\(failed.error)")
        #expect(!FileManager.default.fileExists(atPath: path("out.pmtiles")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.contains("partial") })
        #expect(await CLIRun(["convert", path("missing"), path("x.mbtiles")]).exitCode == 74)
        #expect(await CLIRun(["convert", path("tiles"), path("x.gif")]).exitCode == 64)
    }

    @Test func infoDescribesAStore() async throws {
        let directory = try folderOfTiles()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mbtiles = directory.appendingPathComponent("e.mbtiles").path
        #expect(await CLIRun(["convert", directory.appendingPathComponent("tiles").path, mbtiles, "--quiet"]).output.isEmpty)
        let run = await CLIRun(["info", mbtiles])
        #expect(run.exitCode == 0)
        let json = try JSONSerialization.jsonObject(with: Data(run.output.joined(separator: "\n").utf8)) as! [String: Any]
        #expect(json["kind"] as? String == "mbtiles" && json["format"] as? String == "png" && json["scheme"] as? String == "tms")
        #expect(json["minzoom"] as? Int == 2 && json["maxzoom"] as? Int == 4 && json["attribution"] as? String == "© test")
        let zooms = try #require(json["zooms"] as? [[String: Int]])
        #expect(zooms.map { $0["zoom"] } == [2, 3, 4] && zooms.map { $0["tiles"] ?? 0 }.reduce(0, +) == json["tiles"] as? Int)
        #expect((json["bounds"] as? [Double])?.count == 4)
        let notAStore = await CLIRun(["info", "/etc/hostname"])
        #expect(notAStore.exitCode == 65 && notAStore.error.contains("/etc/hostname: not a tile store"))
    }

    @Test func urlCommand() async {
        #expect(await CLIRun(["url", "https://{s}.tile.example/{z}/{x}/{y}{r}.png", "5/9/11", "--scale", "2"]).output == ["https://c.tile.example/5/9/11@2x.png"])
        #expect(await CLIRun(["url", "https://x/{variant}/{z}/{x}/{-y}.png", "5/9/11", "--var", "variant=dark"]).output == ["https://x/dark/5/9/20.png"])
        #expect(await CLIRun(["url", "https://x/{z}/{x}/{y}", "-"], stdin: ["1/0/0", "1/1/1"]).output == ["https://x/1/0/0", "https://x/1/1/1"])
        let unknown = await CLIRun(["url", "https://x/{z}/{x}/{y}?key={apikey}", "5/9/11"])
        #expect(unknown.exitCode == 64 && unknown.error.contains("unknown key {apikey}"))
        #expect(await CLIRun(["url", "https://x/{z}/{x}/{y}", "5/99/11"]).exitCode == 64)
        #expect(await CLIRun(["url", "https://x/{z}/{x}/{y}", "5/9/11", "--var", "novalue"]).error.contains("NAME=VALUE"))
    }
}
