import Foundation
import Testing
@testable import TileKitCLI

/// The inputs of issue 11 through the commands: an exit code and a message, never a trap.
@Suite struct HostileInputCommandTests {
    static func fixture(_ path: String, filePath: String = #filePath) -> String {
        URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(path).path
    }

    static let gpx = fixture("GameTests/Fixtures/year-1-to-9999.gpx")
    static let line = fixture("GameTests/Fixtures/line-to-85E-and-back.geojson")
    static let pois = fixture("GameTests/Fixtures/pois.geojson")

    @Test(arguments: [
        (["--tick", "4.9e-324"], "tick 5e-324 s is out of range [0.0001, 86400.0]"),
        (["--tick", "1e9"], "tick 1000000000.0 s is out of range [0.0001, 86400.0]"),
        (["--speed", "1e-300"], "speed 1e-300 m/s is out of range [0.01, 1000.0]"),
        (["--time-warp", "0.0000001"], "time-warp 1e-07 is out of range [0.001, 1000000.0]"),
        (["--time-warp", "nan"], "time-warp \"nan\" is not a number"),
        (["--noise", "-1"], "noise -1.0 m is out of range [0.0, 10000.0]"),
        (["--dwell", "-5"], "dwell -5.0 s is out of range [0.0, 86400.0]"),
    ])
    func simulateOptionsAreUsageErrorsNamingTheFlag(extra: [String], message: String) async {
        let run = await CLIRun(["simulate", "--gpx", Self.line, "--pois", Self.pois] + extra)
        #expect(run.exitCode == 64)
        #expect(run.error.contains(message), "\(run.error)")
    }

    /// Ten millennia at a tick of a second: refused at once as data (65), with the tick that fits.
    @Test(.timeLimit(.minutes(1))) func simulateRefusesARouteOfTooManyTicks() async {
        // The refusal counts the ticks before walking any (the message gives the count); the
        // test's time limit only guards a hang.
        let run = await CLIRun(["simulate", "--gpx", Self.gpx, "--pois", Self.pois])
        #expect(run.exitCode == 65)
        #expect(run.error.contains("\(Self.gpx): tick: the route lasts 315538070399.0 s: a tick of 1.0 s makes more than 10000000 positions"), "\(run.error)")
        let fits = await CLIRun(["simulate", "--gpx", Self.gpx, "--pois", Self.pois, "--tick", "86400", "--time-warp", "100", "--positions"])
        #expect(fits.exitCode == 0, "\(fits.error)")
        #expect(fits.output.filter { $0.contains("\"position\"") }.count == 36_522)
    }

    @Test func pyramidRefusesHostileWorldFilesAndBombs() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-hostile-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = folder.appendingPathComponent("scan.png").path
        #expect(await CLIRun(["sample", "-o", image, "--size", "256x256"]).exitCode == 0)
        try FileManager.default.copyItem(atPath: Self.fixture("PyramidsTests/Fixtures/latitude-91.pgw"), toPath: folder.appendingPathComponent("scan.pgw").path)
        let out = folder.appendingPathComponent("out.mbtiles").path
        let georeferenced = await CLIRun(["pyramid", image, "-o", out, "--quiet"])
        #expect(georeferenced.exitCode == 65)
        #expect(georeferenced.error.contains("scan.pgw: line 6: the top-left latitude 91 is outside ±90°"), "\(georeferenced.error)")
        // The 50000 x 50000 PNG: within what a pyramid streams, unless --max-pixels says less.
        let bomb = Self.fixture("CanvasTests/Fixtures/png-bomb-50000x50000.png")
        let refused = await CLIRun(["pyramid", bomb, "--bounds", "-10,-10,10,10", "-o", out, "--quiet", "--max-pixels", "268435456"])
        #expect(refused.exitCode == 65)
        #expect(refused.error.contains("the image declares 50000x50000 pixels, more than allowed (at most 131072 px a side and 268435456 pixels)"), "\(refused.error)")
        #expect(await CLIRun(["pyramid", bomb, "--bounds", "-10,-10,10,10", "-o", out, "--max-pixels", "-3"]).exitCode == 64)
        // Nothing was left behind by the refusals.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["scan.pgw", "scan.png"])
    }
}

/// Xcode location files through `tilekit simulate`: played, or refused as data (65) naming the waypoint.
@Suite struct XcodeGPXCommandTests {
    @Test func anXcodeFilePlaysAndABadOneIsRefusedAsData() async {
        let good = await CLIRun(["simulate", "--gpx", HostileInputCommandTests.fixture("GameTests/Fixtures/xcode-timed.gpx"),
                                 "--pois", HostileInputCommandTests.pois, "--positions", "--tick", "10"])
        #expect(good.exitCode == 0, "\(good.error)")
        #expect(good.output.filter { $0.contains("\"position\"") }.count == 12)  // 0, 10, ..., 110
        let mixed = HostileInputCommandTests.fixture("GameTests/Fixtures/xcode-mixed-times.gpx")
        let bad = await CLIRun(["simulate", "--gpx", mixed, "--pois", HostileInputCommandTests.pois])
        #expect(bad.exitCode == 65)
        #expect(bad.error.contains("\(mixed): wpt[2] (line 5, column"), "\(bad.error)")
    }
}
