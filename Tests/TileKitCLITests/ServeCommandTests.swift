import Foundation
import Testing
@testable import TileKitCLI

@Suite struct ServeCommandTests {
    @Test func validateAndServeFailClearly() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("grid.json"), bad = directory.appendingPathComponent("bad.json")
        try Data(#"{"name": "grid", "layers": [{"id": "grid", "type": "generated"}]}"#.utf8).write(to: good)
        try Data(#"{"layers": [{"id": "a", "type": "tiles", "source": "nope.mbtiles"}], "maxzoom": 40}"#.utf8).write(to: bad)
        let ok = await CLIRun(["validate", good.path])
        #expect(ok.exitCode == 0 && ok.output.first?.hasSuffix("grid.json: ok (1 layer, zooms 0-22)") == true, "\(ok.output) \(ok.error)")
        let problems = await CLIRun(["validate", bad.path, "--json"])
        #expect(problems.exitCode == 65)
        let report = try JSONSerialization.jsonObject(with: Data(problems.output[0].utf8)) as! [String: Any]
        let paths = (report["problems"] as! [[String: String]]).map { $0["path"]! }
        #expect(report["ok"] as? Bool == false && paths.contains("layers[0].source") && paths.contains("maxzoom"), "\(paths)")
        #expect(await CLIRun(["serve", good.path, "--host", "example.org", "--port", "0"]).exitCode == 64)
        #expect(await CLIRun(["serve", directory.appendingPathComponent("missing.json").path]).exitCode == 74)
        #expect(await CLIRun(["serve", bad.path]).exitCode == 65)
        #expect(await CLIRun(["serve"]).exitCode == 64)
    }

    /// A map whose check passes but whose remote cache cannot be opened: `serve` exits with the
    /// category of the failure (a store that cannot be written is I/O, 74) naming the map file
    /// and the layer's JSON path; `validate --labels` lists it as a problem of that path.
    @Test func aCacheThatCannotBeOpenedIsReportedAtItsLayer() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-serve-cache-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("not an SQLite file, only text standing where the cache should be".utf8).write(to: directory.appendingPathComponent("cache.mbtiles"))
        let map = directory.appendingPathComponent("map.json")
        try Data(#"""
        {"name": "m", "layers": [{"id": "osm", "type": "remote", "source": "http://127.0.0.1:9/{z}/{x}/{y}.png",
                                  "cache": "cache.mbtiles", "user-agent": "test/1.0"}]}
        """#.utf8).write(to: map)
        let served = await CLIRun(["serve", map.path, "--port", "0", "--quiet"])
        #expect(served.exitCode == 74, "\(served.error)")
        #expect(served.error.contains("\(map.path): layers[0].cache: ") && served.error.contains("cache.mbtiles"), "\(served.error)")
        let validated = await CLIRun(["validate", map.path, "--labels"])
        #expect(validated.exitCode == 65)
        #expect(validated.error.contains("\(map.path): layers[0].cache: "), "\(validated.error)")
    }
}
