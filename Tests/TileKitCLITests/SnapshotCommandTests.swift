import Foundation
import Testing
import Canvas
@testable import TileKitCLI

@Suite struct SnapshotCommandTests {
    @Test func snapshotWithGeometry() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-snap-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let overlay = directory.appendingPathComponent("park.geojson")
        try Data(##"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-73.9730,40.7644],[-73.9819,40.7681],[-73.9582,40.8006],[-73.9493,40.7969],[-73.9730,40.7644]]]},"properties":{"fill":"#7fa65a"}}"##.utf8).write(to: overlay)
        let out = directory.appendingPathComponent("park.png").path, json = directory.appendingPathComponent("park.json").path
        let run = await CLIRun(["snapshot", "--overlay", overlay.path, "--marker", "-73.971870,40.767769,#b3261e", "--path", "enc:_{xwFb|nbMoFoFaJm@,5,#1f5fbf",
                                "--size", "320x240", "--scale", "2", "-o", out, "--geometry", json])
        #expect(run.exitCode == 0 && run.output == [out], "\(run.error)")
        let image = try RGBAImage(contentsOf: URL(fileURLWithPath: out))
        #expect(image.width == 640 && image.height == 480)
        let geometry = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as! [String: Any]
        let marker = (geometry["markers"] as! [[String: Double]])[0]
        #expect(geometry["scale"] as? Int == 2 && geometry["width"] as? Int == 320 && (geometry["bbox"] as! [Double]).count == 4)
        let pixel = image[Int(marker["x"]! * 2), Int(marker["y"]! * 2)]
        #expect(pixel.distance(to: Pixel(Color(hex: "#b3261e")!)) < 10)
    }

    @Test func badSnapshotsAreNamed() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-snap-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broken = directory.appendingPathComponent("broken.geojson")
        try Data(#"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,95]},"properties":{}}"#.utf8).write(to: broken)
        let out = directory.appendingPathComponent("x.png").path
        let bad = await CLIRun(["snapshot", "--overlay", broken.path, "-o", out])
        #expect(bad.exitCode == 65 && bad.error.contains("broken.geojson: geometry.coordinates: latitude 95"), "\(bad.error)")
        #expect(await CLIRun(["snapshot", "-o", out]).exitCode == 64)
        #expect(await CLIRun(["snapshot", "--center", "0,0", "-o", out]).error.contains("--center needs --zoom or --span"))
        #expect(await CLIRun(["snapshot", "--center", "0,0", "--zoom", "3", "--size", "5000x10", "-o", out]).exitCode == 64)
        #expect(await CLIRun(["snapshot", "--marker", "1,2", "--path", "zzz", "-o", out]).error.contains("enc:"))
        #expect(await CLIRun(["snapshot", "--overlay", directory.appendingPathComponent("missing.gpx").path, "-o", out]).exitCode == 74)
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
