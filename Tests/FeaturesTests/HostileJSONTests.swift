import Foundation
import Testing
import TileMath
@testable import Features

/// The JSON inputs of issue 11: nesting that would overflow Foundation's recursive parser,
/// numbers a Double cannot hold, coordinates off the map, and files too large to read.
/// Each is a FeatureError with the JSON path (or the line and column of the nesting).
@Suite struct HostileJSONTests {
    @Test(arguments: [
        ("deep-arrays.geojson", "line 1, column 257", "arrays and objects nested deeper than 256 levels (TileKit's limit for JSON), inside [0][0][0][0][0][0][0][0]…"),
        ("deep-objects.geojson", "line 1, column 1281", "arrays and objects nested deeper than 256 levels (TileKit's limit for JSON), inside a.a.a.a.a.a.a.a…"),
        ("deep-properties.geojson", "line 2, column 1546", "arrays and objects nested deeper than 256 levels (TileKit's limit for JSON), inside properties.a.a.a.a.a.a.a…"),
        ("huge-number.geojson", "geometry.coordinates[0]", "the number 1e309 is too large for a double (beyond ±1.8e308)"),
        ("tiny-number.geojson", "geometry.coordinates[1]", "the number 1e-400 is too small for a double (it rounds to zero)"),
        ("latitude-91.geojson", "geometry.coordinates", "latitude 91 is out of range [-90, 90]; coordinates are LON,LAT: did you mean 91,0?"),
        ("longitude-1e300.geojson", "geometry.coordinates", "longitude 1e+300 is out of range [-180, 180]"),
        ("one-point-ring.geojson", "coordinates[0]", "needs at least 4 positions, has 1"),
        ("zero-area-image.geojson", "properties.image-bbox", "the box has no area (west equals east or south equals north)"),
        ("infinite-dash.geojson", "properties.stroke-dash[1]", "expected a length in pixels in [0, 10000]"),
    ])
    func hostileFilesAreErrorsWithThePath(name: String, place: String, reason: String) throws {
        let url = try hostileFixture(name)
        #expect(throws: FeatureError(file: url.path, place: place, reason: reason)) { try GeoJSON.load(url) }
        // Through the extension dispatch too, as map.json layers load them.
        #expect(throws: FeatureError(file: url.path, place: place, reason: reason)) { try FeatureFiles.load(url.path) }
    }

    /// 256 levels parse (Foundation's own limit is 512); 257 are refused before Foundation
    /// sees them. map.json is read by the same `JSONValue.parse`.
    @Test func theDepthLimitIsExact() throws {
        let depth = FeatureLimits.jsonDepth
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try JSONValue.parse(Data(arrays.utf8), file: "a.json")
        for _ in 1..<depth {
            guard case .array(let items) = value, let first = items.first else { Issue.record("not \(depth) arrays deep"); return }
            value = first
        }
        #expect(value == .array([]))
        let map = "{\"name\": \"x\", \"layers\": " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        #expect(throws: FeatureError(file: "map.json", place: "line 1, column 280",
                                     reason: "arrays and objects nested deeper than 256 levels (TileKit's limit for JSON), inside layers[0][0][0][0][0][0][0]…")) {
            try JSONValue.parse(Data(map.utf8), file: "map.json")
        }
    }

    /// The preflight only refuses depth and numbers; it never turns bad syntax into a crash
    /// or a different error, and quotes, escapes and brackets inside strings do not count.
    @Test(arguments: [
        ("{\"a\": \"[[[[{{{{\\\"]]]]\", \"b\": [1, 2.5e3, -0, 4.9e-324]}", nil),
        ("{\"key with \\\" and [\": {\"deeper\": [1e999]}}", "key with \\\" and [.deeper[0]"),
        ("[1, 2, 1E+400]", "[2]"),
        ("{\"a\": [[0, 0], [1, -1e-999]]}", "a[1][1]"),
        ("{\"a\": 00012}", nil),  // bad syntax: Foundation's error
        ("[\"unterminated", nil),
        ("]]]]}}}}", nil),
        ("", nil),
    ] as [(String, String?)])
    func preflightTokenizes(json: String, badNumberAt: String?) {
        do {
            try JSONPreflight.check(Data(json.utf8), file: "p.json")
            #expect(badNumberAt == nil, "accepted \(json)")
        } catch {
            #expect(error.place == badNumberAt, "\(error)")
        }
    }

    @Test func syntaxErrorsStillNameTheLine() {
        #expect(throws: FeatureError(file: "s.json", place: "line 2, column 6", reason: "not valid JSON: Invalid value around character 11.")) {
            try JSONValue.parse(Data("{\"a\":\n [1, }".utf8), file: "s.json")
        }
    }

    /// A file over the limit is refused before it is read: a sparse file of
    /// `FeatureLimits.fileBytes + 1` bytes costs no disk and no memory.
    @Test func filesOverTheSizeLimitAreNotRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("huge.geojson")
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data("{}".utf8)))
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(FeatureLimits.fileBytes) + 1)
        try handle.close()
        let tooLarge = FeatureError(file: url.path, place: "file", reason: "larger than 268435456 bytes (TileKit's limit for a data file)")
        #expect(throws: tooLarge) { try GeoJSON.load(url) }
        #expect(throws: tooLarge) { try GPX.load(url) }

        let small = folder.appendingPathComponent("small.json")
        try Data("[1,2]".utf8).write(to: small)
        #expect(try FeatureError.read(small, limit: 5) == Data("[1,2]".utf8))
        #expect(throws: FeatureError(file: small.path, place: "file", reason: "larger than 4 bytes (TileKit's limit for a data file)")) {
            try FeatureError.read(small, limit: 4)
        }
    }
}
