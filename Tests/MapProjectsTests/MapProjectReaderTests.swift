import Foundation
import Testing
import Canvas
import TileMath
import Game
@testable import MapProjects

/// A project folder: a tile folder `base` (one tile), `pins.geojson`, `pois.geojson` and
/// `walk.gpx`, removed by `remove()`.
struct ProjectFolder {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-projects-\(UUID())")
        let column = folder.appendingPathComponent("base/12/1205")
        try FileManager.default.createDirectory(at: column, withIntermediateDirectories: true)
        let canvas = try Canvas(width: 256, height: 256, background: Color(red: 0.8, green: 0.85, blue: 0.66))
        try Data(canvas.encoded(.png())).write(to: column.appendingPathComponent("1539.png"))
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.97187,40.767769]},"properties":{"title":"Goblin"}}]}"#.utf8)
            .write(to: folder.appendingPathComponent("pins.geojson"))
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.97187,40.767769]},"properties":{"id":"goblin","kind":"monster"}}]}"#.utf8)
            .write(to: folder.appendingPathComponent("pois.geojson"))
        try Data("""
        <gpx version="1.1" creator="test"><trk><trkseg><trkpt lat="40.7677" lon="-73.9719"/><trkpt lat="40.7686" lon="-73.9712"/></trkseg></trk></gpx>
        """.utf8).write(to: folder.appendingPathComponent("walk.gpx"))
    }

    func file(_ name: String) -> URL { folder.appendingPathComponent(name) }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

@Suite struct MapProjectReaderTests {
    @Test func validationReportsEveryProblemWithItsPath() throws {
        let fixture = try ProjectFolder()
        defer { fixture.remove() }
        let bad = fixture.folder.appendingPathComponent("bad.json")
        try Data(#"""
        {"name": "bad", "minzoom": 14, "maxzoom": 12, "bounds": [1, 50, 2, 40],
         "layers": [{"id": "a", "type": "tiles", "source": "tiles/parchment.mbtiles"},
                    {"id": "a", "type": "features", "files": ["pins.geojson"], "opcity": 0.5},
                    {"id": "c", "source": "base", "fallback": "tiles/parchment.png", "antialias": "sharp"}]}
        """#.utf8).write(to: bad)
        do {
            _ = try MapProjectReader.load(bad)
            Issue.record("accepted")
        } catch {
            let text = error.problems.map { "\($0.place): \($0.reason)" }
            #expect(text.contains("layers[0].source: no such file \"tiles/parchment.mbtiles\""), "\(text)")
            #expect(text.contains("layers[1].opcity: unknown key (did you mean \"opacity\"?)"), "\(text)")
            #expect(text.contains("layers[2].fallback: no such file \"tiles/parchment.png\""), "\(text)")
            #expect(text.contains("layers[2].antialias: \"sharp\" is not best or fast"), "\(text)")
            #expect(text.contains("layers[1].id: \"a\" is used by another layer"), "\(text)")
            #expect(text.contains("minzoom: 14 is above maxzoom 12") && text.contains("bounds: south 50.0 is not below north 40.0"), "\(text)")
        }
        // Game settings playback would refuse are refused when the map loads, not at /play.
        let game = fixture.folder.appendingPathComponent("game.json")
        try Data(#"{"name": "g", "layers": [], "game": {"pois": "pins.geojson", "routes": {}, "tick": 1e-300, "speed": 5000}}"#.utf8).write(to: game)
        do {
            _ = try MapProjectReader.load(game)
            Issue.record("a tick of 1e-300 was accepted")
        } catch {
            let text = error.problems.map { "\($0.place): \($0.reason)" }
            #expect(text.contains { $0.hasPrefix("game.tick: 1e-300 is outside 0.0001-86400") }, "\(text)")
            #expect(text.contains { $0.hasPrefix("game.speed: 5000.0 is outside 0.01-1000") }, "\(text)")
        }
        let syntax = fixture.folder.appendingPathComponent("syntax.json")
        try Data("{\"name\": \"x\",\n \"layers\": [}".utf8).write(to: syntax)
        #expect(throws: ProjectProblems.self) { try MapProjectReader.load(syntax) }
    }

    /// What the check opened is what is served: a map opened from its file keeps its
    /// features, points of interest and routes even when the files are gone; the same project opened again
    /// from scratch reads them (and fails).
    @Test func anOpenedProjectServesWhatItsCheckOpened() throws {
        let fixture = try ProjectFolder()
        defer { fixture.remove() }
        try Data(#"""
        {"name": "game", "layers": [{"id": "base", "type": "tiles", "source": "base"}, {"id": "pins", "type": "features", "files": ["pins.geojson"]}],
         "game": {"pois": "pois.geojson", "routes": {"walk": "walk.gpx"}, "speed": 2}}
        """#.utf8).write(to: fixture.file("game.json"))
        let opened = try MapProjectReader.open(fixture.file("game.json"))
        #expect(opened.pois?.map(\.id) == ["goblin"])
        let walk = try #require(opened.routes["walk"])
        #expect(walk.points.count == 2 && walk.name == fixture.file("walk.gpx").path)
        // Read at the game's speed (2 m/s), not the default 1.4.
        #expect(abs(walk.durationSeconds - (try RoutePlayback.load(fixture.file("walk.gpx").path, speed: 2)).durationSeconds) < 1e-9)
        #expect(opened.stores.keys.contains(fixture.file("base").path))
        try FileManager.default.removeItem(at: fixture.file("pois.geojson"))
        try FileManager.default.removeItem(at: fixture.file("walk.gpx"))
        try FileManager.default.removeItem(at: fixture.file("pins.geojson"))
        let served = try ServedMap(opened)
        #expect(served.layer("pins")?.features.map(\.title) == ["Goblin"])
        #expect(served.pois.map(\.id) == ["goblin"] && served.routes["walk"]?.secondsFromStart == walk.secondsFromStart)
        #expect(throws: (any Error).self) { try ServedMap(opened.project) }
    }
}
