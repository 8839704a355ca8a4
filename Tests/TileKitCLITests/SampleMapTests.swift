import Foundation
import Testing
import Canvas
@testable import TileKitCLI

@Suite struct SampleMapTests {
    @Test func writesARealImageAtomically() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-sample-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("map.png").path
        let run = await CLIRun(["sample", "-o", path, "--size", "320x240"])
        #expect(run.exitCode == 0 && run.output == [path])
        let image = try RGBAImage(contentsOf: URL(fileURLWithPath: path))
        #expect(image.width == 320 && image.height == 240 && image.isOpaque)
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["map.png"])
        // The goblin's zone is drawn in red at the zoo.
        let reds = image.pixels.indices.filter { $0 % 4 == 0 }.filter { i in
            image.pixels[i] > 150 && image.pixels[i + 1] < 90 && image.pixels[i + 2] < 90
        }
        #expect(reds.count > 50)
        let webp = directory.appendingPathComponent("map.webp").path
        #expect(await CLIRun(["sample", "-o", webp, "--size", "128x128"]).exitCode == 0)
        #expect(ImageFormat(sniffing: try Data(contentsOf: URL(fileURLWithPath: webp))) == .webp)
    }

    @Test func badOptionsAreUsageErrors() async {
        #expect(await CLIRun("sample --size 10x10").exitCode == 64)
        #expect(await CLIRun("sample -o map.gif").error.contains("\".gif\""))
        let unwritable = await CLIRun("sample -o /proc/nope/map.png")
        #expect(unwritable.exitCode == 74 && unwritable.error.contains("/proc/nope/map.png"))
    }
}
