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
        let pois = directory.appendingPathComponent("pois.geojson")
        try Data(##"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9712,40.7644]},"properties":{"title":"The \"Plaza\" store","description":"Fifth Avenue","marker-symbol":"store"}},{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9665,40.7829]},"properties":{"radius":120}}]}"##.utf8).write(to: pois)
        let out = directory.appendingPathComponent("park.png").path, json = directory.appendingPathComponent("park.json").path
        let run = await CLIRun(["snapshot", "--overlay", overlay.path, "--marker", "-73.971870,40.767769,#b3261e", "--path", "enc:_{xwFb|nbMoFoFaJm@,5,#1f5fbf", "--overlay", pois.path,
                                "--size", "320x240", "--scale", "2", "-o", out, "--geometry", json])
        #expect(run.exitCode == 0 && run.output == [out], "\(run.error)")
        let image = try RGBAImage(contentsOf: URL(fileURLWithPath: out))
        #expect(image.width == 640 && image.height == 480)
        let geometry = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as! [String: Any]
        let markers = geometry["markers"] as! [[String: Any]]
        // Overlay markers (with their callout text) first, then --marker ones; the circle is no marker.
        #expect(markers.count == 2)
        #expect(markers[0]["title"] as? String == #"The "Plaza" store"# && markers[0]["subtitle"] as? String == "Fifth Avenue"
                && markers[0]["symbol"] as? String == "store")
        let marker = markers[1] as! [String: Double]
        #expect(geometry["scale"] as? Int == 2 && geometry["width"] as? Int == 320 && (geometry["bbox"] as! [Double]).count == 4)
        let pixel = image[Int(marker["x"]! * 2), Int(marker["y"]! * 2)]
        #expect(pixel.distance(to: Pixel(Color(hex: "#b3261e")!)) < 10)
        // The store's label: its text and its box (CSS pixels) right of its icon; counted.
        let labels = try #require(geometry["labels"] as? [[String: Any]])
        let store = try #require(labels.first)
        #expect(labels.count == 1 && store["text"] as? String == #"The "Plaza" store"# && store["kind"] as? String == "poi")
        let storeMarker = markers[0]
        #expect((store["x"] as! Double) > (storeMarker["x"] as! Double) + 10)
        #expect(geometry["labelCounts"] as? [String: Double] == ["zoom": geometry["zoom"] as! Double, "named": 1, "labelled": 1, "drawn": 1])
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
        // Each format names its file and the place: XML formats by line and column.
        let kml = directory.appendingPathComponent("park.kml"), plist = directory.appendingPathComponent("Attractions.plist")
        try Data("<kml>\n<Placemark><Point><coordinates>1,95</coordinates></Point></Placemark></kml>".utf8).write(to: kml)
        try Data("<plist version=\"1.0\"><array>\n<string>{34.4,north}</string></array></plist>".utf8).write(to: plist)
        for (file, place) in [(kml, "park.kml: line 2"), (plist, "Attractions.plist: line 2")] {
            let run = await CLIRun(["snapshot", "--overlay", file.path, "-o", out])
            #expect(run.exitCode == 65 && run.error.contains(place), "\(run.error)")
        }
        #expect(await CLIRun(["snapshot", "-o", out]).exitCode == 64)
        #expect(await CLIRun(["snapshot", "--center", "0,0", "-o", out]).error.contains("--center needs --zoom or --span"))
        #expect(await CLIRun(["snapshot", "--center", "0,0", "--zoom", "3", "--size", "5000x10", "-o", out]).exitCode == 64)
        #expect(await CLIRun(["snapshot", "--marker", "1,2", "--path", "zzz", "-o", out]).error.contains("enc:"))
        let colour = await CLIRun(["snapshot", "--marker", "-73.97,40.77,#zzzzzz", "-o", out])
        #expect(colour.exitCode == 64 && colour.error.contains(##"colour "#zzzzzz" is not #rgb, #rrggbb or #rrggbbaa"##), "\(colour.error)")
        #expect(await CLIRun(["snapshot", "--overlay", directory.appendingPathComponent("missing.gpx").path, "-o", out]).exitCode == 74)
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

/// `validate --labels`: how many named features get a label at each zoom of the map.
@Suite struct ValidateLabelsTests {
    @Test func countsLabelledFeaturesPerZoom() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-labels-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Five names 33 m apart, one above the other: apart at zoom 17, on one spot at zoom 12
        // (where four candidates around it hold four labels at most).
        try Data(##"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9712,40.7644]},"properties":{"title":"Quest number 0"}},{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9712,40.7647]},"properties":{"title":"Quest number 1"}},{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9712,40.765]},"properties":{"title":"Quest number 2"}},{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9712,40.7653]},"properties":{"title":"Quest number 3"}},{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9712,40.7656]},"properties":{"title":"Quest number 4"}}]}"##.utf8)
            .write(to: directory.appendingPathComponent("pins.geojson"))
        let map = directory.appendingPathComponent("map.json")
        try Data(#"{"name": "m", "minzoom": 12, "maxzoom": 17, "layers": [{"id": "pins", "type": "features", "files": ["pins.geojson"]}]}"#.utf8).write(to: map)
        let run = await CLIRun(["validate", map.path, "--labels"])
        #expect(run.exitCode == 0, "\(run.error)")
        let lines = run.output.filter { $0.contains("labels z") }
        #expect(lines.count == 6, "\(run.output)")
        #expect(lines.first.map { $0.hasPrefix("  labels z12: ") && !$0.hasPrefix("  labels z12: 5") && $0.contains(" of 5 named features drawn") } == true, "\(lines)")
        #expect(lines.last?.hasPrefix("  labels z17: 5 of 5 named features drawn") == true, "\(lines)")
    }
}
