import Foundation
import Testing
import TileMath
@testable import MapProjects

/// What fails while a checked map is opened for serving is reported as the reader reports its
/// own problems: the map's file, the JSON path of what failed, and whether it was I/O.
@Suite struct ServedMapProblemTests {
    @Test func aCacheThatCannotBeOpenedIsAProblemAtItsLayer() throws {
        let fixture = try ProjectFolder()
        defer { fixture.remove() }
        try Data("not an SQLite file, only text standing where the cache should be".utf8).write(to: fixture.file("cache.mbtiles"))
        let map = fixture.file("map.json")
        try Data(#"""
        {"name": "m", "layers": [{"id": "base", "source": "base"},
          {"id": "osm", "type": "remote", "source": "http://127.0.0.1:9/{z}/{x}/{y}.png", "cache": "cache.mbtiles", "user-agent": "test/1.0"}]}
        """#.utf8).write(to: map)
        let opened = try MapProjectReader.open(map)  // the check passes: the cache's folder exists
        do {
            _ = try ServedMap(opened)
            Issue.record("a cache that is not SQLite was opened")
        } catch {
            #expect(error.problems.count == 1)
            let problem = try #require(error.problems.first)
            #expect(problem.file == map.path && problem.place == "layers[1].cache", "\(problem)")
            #expect(problem.reason.contains("cache.mbtiles"), "\(problem.reason)")
            // The cache is a store TileKit could not write: I/O, as TileSourceError declares it.
            #expect(problem.isIO && error.exitCategory == .io)
        }
    }

    @Test func problemsAreIOOnlyWhenEveryOneIs() {
        let missing = ProjectProblem(file: "m.json", place: "layers[0].source", reason: "cannot be read", isIO: true)
        let wrong = ProjectProblem(file: "m.json", place: "maxzoom", reason: "zoom 40 is out of range [0, 30]")
        #expect(ProjectProblems(problems: [missing]).exitCategory == .io)
        #expect(ProjectProblems(problems: [missing, wrong]).exitCategory == .data)
        #expect(ProjectProblems(problems: [wrong]).exitCategory == .data)
    }
}
