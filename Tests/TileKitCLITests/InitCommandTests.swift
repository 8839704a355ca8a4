import Foundation
import Testing
import MapProjects
import Features
import TileMath
@testable import TileKitCLI

/// `tilekit init`: each kind of project it makes opens with the reader `serve` uses, and
/// each bad input is refused with a message naming the flag or file, leaving nothing behind.
@Suite struct InitCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/Init")

    static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }

    /// A fresh folder that holds the project folder (and nothing else, so leftovers show).
    static func workspace() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-init-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func load(_ folder: URL) throws -> MapProject {
        try MapProjectReader.load(folder.appendingPathComponent("map.json"))
    }

    @Test func aScanIsCutIntoAPyramidOverPaper() async throws {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("old-town")
        let run = await CLIRun(["init", folder.path, "--scan", Self.fixture("scan.png"), "--bounds", "14.30,45.74,14.40,45.79", "--quiet"])
        #expect(run.exitCode == 0, "\(run.error)")
        let project = try Self.load(folder)
        #expect(project.name == "old-town")
        #expect(project.layers.map(\.id) == ["paper", "grid", "scan"])
        let scan = try #require(project.layers.last)
        guard case .store(let path, _) = scan.source else { Issue.record("the scan is not a tile store: \(scan.source)"); return }
        #expect(path == folder.appendingPathComponent("scan.mbtiles").path)
        #expect(!scan.isBase && scan.options.opacity == 0.8)
        let bounds = try #require(project.bounds)
        #expect(bounds.west < 14.30 && bounds.east > 14.40 && bounds.south < 45.74 && bounds.north > 45.79)
        #expect(run.output.contains("serve it: tilekit serve \(folder.path)/map.json"))
        #expect(run.output.contains("then open http://127.0.0.1:8080/maps/old-town/"))
        let readme = try String(contentsOf: folder.appendingPathComponent("README.md"), encoding: .utf8)
        for key in ["`name`", "`center`", "`zoom`", "`minzoom`", "`maxzoom`", "`bounds`", "`native-maxzoom`", "`opacity`", "`source`"] {
            #expect(readme.contains(key), "README.md does not explain \(key)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["old-town"])
    }

    @Test func artworkTakesItsCornersFromAParkPlist() async throws {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("park")
        let run = await CLIRun(["init", folder.path, "--art", Self.fixture("scan.png"), "--overlay", Self.fixture("park.plist"),
                                "--overlay", Self.fixture("rides.plist"), "--overlay", Self.fixture("route.plist")])
        #expect(run.exitCode == 0, "\(run.error)")
        let project = try Self.load(folder)
        #expect(project.layers.map(\.id) == ["paper", "grid", "art", "park", "rides", "route"])
        // The park's boundary polygon would cover the art it pins: hidden until ticked.
        #expect(project.layers.map(\.visible) == [true, false, true, false, true, true])
        // The art lies at the plist's corners (top-left first).
        let art = try #require(try FeatureFiles.load(folder.appendingPathComponent("art.geojson").path).first?.imageOverlay)
        #expect(art.image == "art.png" && art.opacity == 0.9)
        guard case .corners(let topLeft, _, _, _) = art.placement else { Issue.record("not placed by corners: \(art.placement)"); return }
        #expect(topLeft == Coordinate(latitude: 34.4313, longitude: -118.604))
        let center = try #require(project.center)
        #expect(abs(center.latitude - 34.425) < 0.01 && abs(center.longitude + 118.597) < 0.01)
    }

    @Test func artworkPinnedByCorners() async throws {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("pinned")
        let corners = "-118.604,34.4313;-118.5907,34.4311;-118.5909,34.4181;-118.6042,34.4183"
        let run = await CLIRun(["init", folder.path, "--art", Self.fixture("scan.png"), "--corners", corners])
        #expect(run.exitCode == 0, "\(run.error)")
        #expect(try Self.load(folder).layers.map(\.id) == ["paper", "grid", "art"])
    }

    @Test func aGeoJSONOfPlacesAndAGPXRouteMakeAGame() async throws {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("Lake Walk")
        let run = await CLIRun(["init", folder.path, "--pois", Self.fixture("places.geojson"), "--route", Self.fixture("walk.gpx")])
        #expect(run.exitCode == 0, "\(run.error)")
        let project = try Self.load(folder)
        #expect(project.name == "lake-walk")
        #expect(project.layers.map(\.id) == ["paper", "grid", "points", "routes"])
        let game = try #require(project.game)
        #expect(Array(game.routes.keys) == ["walk"])
        #expect(game.autoplay == "walk")
        // Points without a kind became quests, their names titles.
        // Everything else of the user's file is as it was, coordinates to their last digit.
        let written = try JSONValue.parse(Data(contentsOf: folder.appendingPathComponent("pois.geojson")), file: "pois.geojson")
        guard case .object(var expected) = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: Self.fixture("places.geojson"))), file: "places.geojson"),
              case .array(var features)? = expected["features"] else { Issue.record("the fixture is not a FeatureCollection"); return }
        for (index, name) in ["Old mill", "Bird hide"].enumerated() {
            guard case .object(var feature) = features[index] else { continue }
            feature["properties"] = .object(["name": .string(name), "title": .string(name), "kind": .string("quest")])
            features[index] = .object(feature)
        }
        expected["features"] = .array(features)
        #expect(written == .object(expected))
    }

    // MARK: - Bad input: exit code, a message naming the flag or file, nothing left behind

    static func refused(_ arguments: (URL) -> [String], preparing: (URL) throws -> Void = { _ in }) async throws -> (CLIRun, [String]) {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("map")
        try preparing(folder)
        let run = await CLIRun(["init", folder.path] + arguments(folder))
        let left = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
        return (run, left)
    }

    @Test func aFolderThatIsNotEmptyIsRefused() async throws {
        let (run, left) = try await Self.refused({ _ in ["--pois", Self.fixture("places.geojson")] }, preparing: { folder in
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("mine".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        })
        #expect(run.exitCode == 64)
        #expect(run.error.contains("/map: the folder is not empty (1 entry: \"notes.txt\")"), "\(run.error)")
        #expect(left == ["map"])
    }

    @Test func anEmptyFolderIsFilled() async throws {
        let (run, left) = try await Self.refused({ _ in ["--pois", Self.fixture("places.geojson")] }, preparing: { folder in
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        })
        #expect(run.exitCode == 0, "\(run.error)")
        #expect(left == ["map"])
    }

    @Test func anImageWithoutGeoreferenceIsRefused() async throws {
        let (run, left) = try await Self.refused { _ in ["--scan", Self.fixture("scan.png")] }
        #expect(run.exitCode == 64)
        #expect(run.error.contains("--scan \(Self.fixture("scan.png")): the image has no georeference"), "\(run.error)")
        #expect(run.error.contains("--corners") && run.error.contains("--bounds") && run.error.contains("scan.pgw"))
        #expect(left.isEmpty, "left behind: \(left)")

        let (art, _) = try await Self.refused { _ in ["--art", Self.fixture("scan.png"), "--overlay", Self.fixture("rides.plist")] }
        #expect(art.exitCode == 64)
        #expect(art.error.contains("--art \(Self.fixture("scan.png")): the image has no georeference"), "\(art.error)")
    }

    @Test(arguments: [
        // top-right and bottom-right swapped: a bow tie
        ("-118.604,34.4313;-118.5909,34.4181;-118.5907,34.4311;-118.6042,34.4183", "fold over each other"),
        // listed counter-clockwise: a mirror image
        ("-118.604,34.4313;-118.6042,34.4183;-118.5909,34.4181;-118.5907,34.4311", "counter-clockwise"),
        ("-118.60,34.43;-118.59,34.43;-118.58,34.43;-118.60,34.42", "do not span an area"),
        ("-118.60,34.43;-118.59,34.43", "expected four corners"),
    ])
    func cornersThatFoldAreRefused(corners: String, reason: String) async throws {
        let (run, left) = try await Self.refused { _ in ["--scan", Self.fixture("scan.png"), "--corners", corners] }
        #expect(run.exitCode == 64)
        #expect(run.error.contains("--corners") && run.error.contains(reason), "\(run.error)")
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test func aGeoJSONWithoutPointsIsRefused() async throws {
        let (run, left) = try await Self.refused { _ in ["--pois", Self.fixture("lines-only.geojson"), "--route", Self.fixture("walk.gpx")] }
        #expect(run.exitCode == 65)
        #expect(run.error.contains("--pois \(Self.fixture("lines-only.geojson")): no points"), "\(run.error)")
        #expect(run.error.contains("1 area, 1 line"), "\(run.error)")
        #expect(left.isEmpty, "left behind: \(left)")
    }

    @Test func flagsThatDoNotGoTogetherAreRefused() async throws {
        let (nothing, _) = try await Self.refused { _ in [] }
        #expect(nothing.exitCode == 64 && nothing.error.contains("nothing to make a map of"))
        let (route, _) = try await Self.refused { _ in ["--route", Self.fixture("walk.gpx")] }
        #expect(route.exitCode == 64 && route.error.contains("--route is a route of a game"))
        let (missing, left) = try await Self.refused { _ in ["--pois", "/nonexistent/places.geojson"] }
        #expect(missing.exitCode == 74 && missing.error.contains("--pois /nonexistent/places.geojson: no such file"))
        #expect(left.isEmpty)
    }

    @Test func urlNamesKeepWordBoundaries() {
        #expect(InitRequest.urlName("MagicMountainAttractions") == "magic-mountain-attractions")
        #expect(InitRequest.urlName("My Park (1890)") == "my-park-1890")
        #expect(InitRequest.urlName("ÜÜ") == "map")
    }
}

extension InitCommandTests {
    @Test func aKilledRunsStagingFolderIsRemovedByTheNextRun() async throws {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        // PID 2^22+1 is above Linux's pid_max: no process has it.
        let leftover = root.appendingPathComponent(".game.init-4194305")
        try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
        let run = await CLIRun(["init", root.appendingPathComponent("game").path, "--pois", Self.fixture("places.geojson")])
        #expect(run.exitCode == 0, "\(run.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["game"])
    }
}

extension InitCommandTests {
    /// Points beyond Web Mercator's ±85.05° once made bounds whose south was above their north.
    @Test func pointsNearThePoleStillMakeAValidMap() async throws {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("polar")
        let run = await CLIRun(["init", folder.path, "--pois", Self.fixture("polar.geojson")])
        #expect(run.exitCode == 0, "\(run.error)")
        let bounds = try #require(try Self.load(folder).bounds)
        #expect(bounds.south < bounds.north && bounds.north <= 85.0512)
    }
}

extension InitCommandTests {
    /// An overlay's images come with it, at the same relative path; one outside its folder
    /// cannot, and is named.
    @Test func anOverlaysImagesAreCopiedBesideIt() async throws {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("pictures")
        let run = await CLIRun(["init", folder.path, "--overlay", Self.fixture("overlay/with-image.geojson")])
        #expect(run.exitCode == 0, "\(run.error)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("pics/scan.png").path))
        let center = try #require(try Self.load(folder).center)
        #expect(abs(center.longitude - 14.35) < 1e-6 && abs(center.latitude - 45.765) < 1e-6)

        let (outside, left) = try await Self.refused { _ in ["--overlay", Self.fixture("overlay/outside.geojson")] }
        #expect(outside.exitCode == 65)
        #expect(outside.error.contains("outside.geojson: the image \"../scan.png\" is outside the file's folder"), "\(outside.error)")
        #expect(left.isEmpty)
    }
}

extension InitCommandTests {
    @Test func aScanCanLieOverATileServersMap() async throws {
        let root = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("leicester")
        let run = await CLIRun(["init", folder.path, "--scan", Self.fixture("scan.png"), "--bounds", "-1.16,52.62,-1.11,52.65", "--quiet",
                                "--base", "https://tile.openstreetmap.org/{z}/{x}/{y}.png", "--user-agent", "Visions/1.0 (me@example.com)"])
        #expect(run.exitCode == 0, "\(run.error)")
        let project = try Self.load(folder)
        #expect(project.layers.map(\.id) == ["base", "paper", "grid", "scan"])
        #expect(project.layers.map(\.visible) == [true, false, false, true])
        #expect(run.output.first?.hasSuffix("map.json: a scan cut into tiles over the base map; 4 layers, zooms 10-16") == true, "\(run.output)")
        guard case .remote(let template, let cache, let agent) = project.layers[0].source else { Issue.record("not remote"); return }
        #expect(template.description.contains("tile.openstreetmap.org"))
        #expect(cache == folder.appendingPathComponent("cache/base.mbtiles").path && agent == "Visions/1.0 (me@example.com)")

        let (noAgent, left) = try await Self.refused { _ in ["--pois", Self.fixture("places.geojson"), "--base", "https://tile.openstreetmap.org/{z}/{x}/{y}.png"] }
        #expect(noAgent.exitCode == 64 && noAgent.error.contains("give --user-agent"), "\(noAgent.error)")
        let (badKey, _) = try await Self.refused { _ in ["--pois", Self.fixture("places.geojson"), "--base", "https://x/{zoom}/{x}/{y}.png", "--user-agent", "a"] }
        #expect(badKey.exitCode == 64 && badKey.error.contains("--base \"https://x/{zoom}/{x}/{y}.png\": unknown key {zoom}"), "\(badKey.error)")
        #expect(left.isEmpty)
    }
}
