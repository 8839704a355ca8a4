import Foundation
import Testing
import TileMath
import TileSources
import Canvas
import Features
import MapProjects
@testable import TileKitCLI

/// Domain errors declare their exit category (`CategorizedError`); `CLIError` alone turns a
/// category into an exit code, so one error means one code whichever command meets it.
@Suite struct ExitCategoryTests {
    struct Declared: CategorizedError, CustomStringConvertible {
        let exitCategory: ExitCategory
        var description: String { "declared \(exitCategory)" }
    }

    @Test(arguments: [(ExitCategory.usage, Int32(64)), (.data, 65), (.io, 74), (.software, 1)])
    func eachCategoryHasItsExitCode(category: ExitCategory, code: Int32) {
        let error = CLIError(Declared(exitCategory: category))
        #expect(error.exitCode == code)
        #expect(error.description == "declared \(category)")
        // The mapping every command uses for a failed library call agrees, reading or writing.
        #expect(CLIError(Declared(exitCategory: category), .reading, "f").exitCode == code)
        #expect(CLIError(Declared(exitCategory: category), .writing, "f").exitCode == code)
    }

    @Test(arguments: [
        (TileSourceError.notFound(path: "a.mbtiles"), Int32(74)),
        (.unreadable(path: "a.mbtiles", reason: "I/O error"), 74),
        (.unwritable(path: "a.mbtiles", reason: "no space left on device"), 74),
        (.corrupt(path: "a.mbtiles", reason: "bad header"), 65),
        (.invalid("a.txt: not a folder, .mbtiles or .pmtiles store"), 64),
    ])
    func tileSourceErrorsKeepTheirCodes(error: TileSourceError, code: Int32) {
        #expect(CLIError(error).exitCode == code)
        #expect(CLIError(error).description == error.description)
    }

    /// An upstream's answer that is no tile, or a refusal, is data (65) naming the URL, as a
    /// broken file is, in every command (snapshot exited 1 on a truncated PNG); a URL TileKit
    /// cannot ask is usage (64).
    @Test(arguments: [
        (RemoteTileError.undecodable(url: "http://t/1/0/0.png", format: .png, reason: "read beyond end of data"), Int32(65)),
        (.notAnImage(url: "http://t/1/0/0.png", contentType: "text/html", firstBytes: "<html>"), 65),
        (.tileTooLarge(url: "http://t/1/0/0.png", width: 50000, height: 50000, maxSide: 4096), 65),
        (.bodyTooLarge(url: "http://t/1/0/0.png", maxBytes: 8 << 20), 65),
        (.refused(status: 403, url: "http://t/1/0/0.png"), 65),
        (.invalidURL("http://[::1"), 64),
        (.missingUserAgent, 64),
    ])
    func upstreamAnswersAreData(error: RemoteTileError, code: Int32) {
        #expect(CLIError(error, .writing, "out.png").exitCode == code)
        #expect(CLIError(error, .writing, "out.png").description == error.description)
    }

    @Test func imageErrorsAreDataUsageOrOurs() {
        #expect(CLIError(CanvasError.decodeFailed(format: .png, reason: "bad CRC")).exitCode == 65)
        #expect(CLIError(CanvasError.file(path: "a.png", underlying: "cannot decode PNG: bad CRC")).exitCode == 65)
        #expect(CLIError(CanvasError.invalidOption("quality 200")).exitCode == 64)
        #expect(CLIError(CanvasError.encodeFailed(format: .webp, reason: "out of memory")).exitCode == 1)
    }

    /// Feature files, game data and map projects share one error shape; a file that could not
    /// be read is I/O (74), one read and found wrong is data (65), and a map's problems are I/O
    /// only when every one is.
    @Test func fileProblemsAreDataUnlessTheFileCouldNotBeRead() {
        let wrong = FeatureError(file: "a.gpx", place: "line 3, column 5", reason: "malformed XML")
        let unread = FeatureError(file: "a.gpx", place: "file", reason: "permission denied", isIO: true)
        #expect(CLIError(wrong).exitCode == 65 && CLIError(wrong).description == "a.gpx: line 3, column 5: malformed XML")
        #expect(CLIError(unread).exitCode == 74)
        #expect(CLIError(ProjectProblems(problems: [unread])).exitCode == 74)
        #expect(CLIError(ProjectProblems(problems: [unread, wrong])).exitCode == 65)
        // A command's own words keep the module's category.
        #expect(CLIError(unread, message: "--pois a.gpx: permission denied") == .io("--pois a.gpx: permission denied"))
    }

    /// `split` of an image that does not decode: the image's module says data (65), the
    /// command names the image.
    @Test func splittingAnImageThatDoesNotDecodeIsData() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-exit-split-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let image = directory.appendingPathComponent("layer.png").path
        try Data("not a PNG at all, only text".utf8).write(to: URL(fileURLWithPath: image))
        try Data(#"{"zoom": 1, "min_x": 0, "max_x": 0, "min_y": 0, "max_y": 0, "tile_size": 256, "source": "x", "crs": "EPSG:3857"}"#.utf8)
            .write(to: directory.appendingPathComponent("layer.json"))
        let run = await CLIRun(["split", image, "--out", directory.appendingPathComponent("out").path])
        #expect(run.exitCode == 65 && run.error.contains(image), "\(run.exitCode) \(run.error)")
    }

    /// The issue's case: a damaged store was 74 in `seed` and 65 in `convert`. Every command that
    /// reads it now exits 65, naming the store.
    @Test func aDamagedStoreIsDataInEveryCommand() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-exit-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = HostileStoreCommandTests.fixture("pmtiles-header/minzoom-200.pmtiles")
        let out = { (name: String) in directory.appendingPathComponent(name).path }
        let runs: [(command: String, arguments: [String])] = [
            ("info", ["info", store]),
            ("convert", ["convert", store, out("converted.mbtiles")]),
            ("seed", ["seed", "--source", store, "--bbox", "-10,-10,10,10", "--zoom", "0", "--out", out("seeded.mbtiles"), "--quiet"]),
            ("stitch", ["stitch", store, "--bbox", "-10,-10,10,10", "--zoom", "0", "-o", out("stitched.png")]),
        ]
        for (command, arguments) in runs {
            let run = await CLIRun(arguments)
            #expect(run.exitCode == 65, "\(command): \(run.exitCode) \(run.error)")
            #expect(run.error.contains(store) && run.error.contains("minzoom 200"), "\(command): \(run.error)")
        }
    }
}
