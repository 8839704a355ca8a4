import Foundation
import Testing
import TileMath
import Features

/// `FeatureError` is the one "this file, at this place, is wrong because" shape; it declares
/// whether the file could not be read (I/O) or was read and found wrong (data).
@Suite struct FeatureErrorTests {
    @Test func aFileThatCannotBeReadIsIO() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-missing-\(UUID()).geojson").path
        #expect(throws: FeatureError.self) { try FeatureFiles.load(missing) }
        do {
            _ = try FeatureFiles.load(missing)
        } catch {
            #expect(error.file == missing && error.place == "file" && error.isIO, "\(error)")
            #expect(error.exitCategory == .io)
        }
    }

    /// A folder where a file should be is refused as one (it was reported as a file larger
    /// than the limit: seeking to a folder's end gives a hash offset).
    @Test func aFolderIsNotAFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-folder-\(UUID()).gpx")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: FeatureError(file: folder.path, place: "file", reason: "is a folder, not a file", isIO: true)) {
            try FeatureFiles.load(folder.path)
        }
    }

    @Test func aFileFoundWrongIsData() throws {
        do {
            _ = try GeoJSON.parse(Data(#"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [1]}}"#.utf8), file: "a.geojson")
            Issue.record("a one-number position was read")
        } catch {
            #expect(error.file == "a.geojson" && !error.isIO, "\(error)")
            #expect(error.exitCategory == .data)
        }
    }

    /// An empty place is the whole document, as a map project reports a problem at its root.
    @Test func anEmptyPlaceIsTheRoot() {
        #expect(FeatureError(file: "map.json", place: "", reason: "expected a map object, found array").description
            == "map.json: root: expected a map object, found array")
        #expect(FeatureError(file: "a.gpx", place: "line 3", reason: "malformed XML").description == "a.gpx: line 3: malformed XML")
    }
}
