import Foundation
import Testing
import Canvas
import TileMath
import TileSources
import TestSupport
@testable import TileKitCLI

/// `info`, `convert`, `snapshot --base` and `serve` given the URL of a PMTiles file that
/// nginx serves on 127.0.0.1; bad URLs exit with the documented codes and name the URL.
@Suite(.serialized) struct RemotePMTilesCommandTests {
    /// A folder holding `park.pmtiles` (z2-5 over Europe, made with `tilekit convert`) and
    /// `page.pmtiles` (an HTML page), served by nginx.
    struct Served {
        let directory: URL
        let nginx: NginxProcess

        init() async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-remote-\(UUID())")
            let writer = try FolderTileWriter(directory: directory.appendingPathComponent("tiles"), fileExtension: "png")
            for zoom in 2...5 {
                for tile in TileRange.covering(BoundingBox(west: -10, south: 40, east: 10, north: 55), zoom: zoom)[0] {
                    try writer.write(tile, bytes: RGBAImage(width: 256, height: 256, color: Color(red: Double(tile.x % 8) / 8, green: Double(tile.y % 8) / 8, blue: Double(zoom) / 5)).encoded())
                }
            }
            try writer.finish(metadata: TileSetMetadata(name: "europe", attribution: "© test"))
            let made = await CLIRun(["convert", directory.appendingPathComponent("tiles").path, directory.appendingPathComponent("park.pmtiles").path])
            guard made.exitCode == 0 else { throw CLIError.failure(made.error) }
            try Data("<html><body>Welcome</body></html>".utf8).write(to: directory.appendingPathComponent("page.pmtiles"))
            nginx = try NginxProcess(root: directory)
        }

        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func infoAndConvertReadAURLAsTheyReadTheFile() async throws {
        let served = try await Served()
        defer { served.remove() }
        let local = await CLIRun(["info", served.path("park.pmtiles")])
        let remote = await CLIRun(["info", served.nginx.url("/park.pmtiles")])
        #expect(remote.exitCode == 0, "\(remote.error)")
        #expect(remote.output == local.output && local.output.joined().contains(#""kind" : "pmtiles""#), "\(remote.output)")

        #expect(await CLIRun(["convert", served.nginx.url("/park.pmtiles"), served.path("copy.mbtiles"), "--quiet"]).exitCode == 0)
        var original = [TileID: [UInt8]](), copied = [TileID: [UInt8]]()
        try TileStore.forEachTile(in: TileStore.open(served.path("tiles"))) { original[$0] = $1 }
        try TileStore.forEachTile(in: TileStore.open(served.path("copy.mbtiles"))) { copied[$0] = $1 }
        #expect(copied == original && !original.isEmpty)

        let snapshot = await CLIRun(["snapshot", "--bbox", "-5,45,5,50", "--size", "300x200", "--base", served.nginx.url("/park.pmtiles"),
                                     "-o", served.path("snap.png")])
        #expect(snapshot.exitCode == 0, "\(snapshot.error)")
        #expect(try RGBAImage(contentsOf: URL(fileURLWithPath: served.path("snap.png"))).width == 300)
    }

    @Test func badURLsExitWithTheirCodesAndNameTheURL() async throws {
        let served = try await Served()
        defer { served.remove() }
        let missing = served.nginx.url("/missing.pmtiles"), page = served.nginx.url("/page.pmtiles")
        let down = "http://127.0.0.1:\(try RedisServerProcess.freePort())/park.pmtiles"
        let cases: [(arguments: [String], code: Int32, message: String)] = [
            (["info", missing], 74, "\(missing): cannot read: no such file on the server (HTTP 404)"),
            (["info", page], 65, "\(page): not a PMTiles file (no \"PMTiles\" magic)"),
            (["info", down], 74, "\(down): cannot read: cannot reach the server: "),
            (["info", served.nginx.url("/park.png")], 64, "only PMTiles files"),
            (["convert", missing, served.path("out.mbtiles")], 74, "\(missing): cannot read: no such file on the server (HTTP 404)"),
            (["convert", served.path("park.pmtiles"), served.nginx.url("/out.pmtiles")], 64, "not a URL"),
            (["serve", missing, "--port", "0"], 74, "\(missing): root: \(missing): cannot read: no such file on the server (HTTP 404)"),
            (["serve", page, "--port", "0"], 65, "\(page): root: \(page): not a PMTiles file"),
        ]
        for (arguments, code, message) in cases {
            let run = await CLIRun(arguments)
            #expect(run.exitCode == code && run.error.contains(message), "\(arguments): \(run.exitCode) \(run.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: served.path("out.mbtiles")))
    }
}
