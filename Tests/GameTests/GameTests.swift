import Foundation
import Testing
import TileMath
@testable import Game

let centre = Coordinate(latitude: 40.767769, longitude: -73.971870)

/// A point `meters` east (negative: west) of the centre.
func east(_ meters: Double) -> Coordinate {
    Geodesy.destination(from: centre, distance: abs(meters), bearing: meters >= 0 ? 90 : 270)
}

@Suite struct EncounterTests {
    let goblin = PointOfInterest(id: "goblin", kind: .monster, coordinate: centre)  // 10 m

    /// Walking east from 50 m west to 50 m east at 1 m/s, ticks every 7 s: the enter is
    /// where the distance becomes 10 m (40 s), the exit where it passes 10 + 2 m (62 s),
    /// whatever the tick.
    @Test(arguments: [0.5, 1.0, 7.0])
    func eventsAreWhereTheCircleIsCrossed(tick: Double) throws {
        let playback = try RoutePlayback(points: [east(-50), east(50)], speed: 1)
        let events = try Simulation(playback: playback, pois: [goblin], tickSeconds: tick).events
        #expect(events.map(\.kind) == [.enter, .exit])
        #expect(abs(events[0].secondsFromStart - 40) < 0.05 && abs(events[1].secondsFromStart - 62) < 0.05, "\(events.map(\.secondsFromStart))")
        #expect(abs(Geodesy.haversineDistance(events[0].position, centre) - 10) < 0.05)
        #expect(abs(Geodesy.haversineDistance(events[1].position, centre) - 12) < 0.05)
    }

    /// Back and forth across the edge: one visit, no flicker, until 12 m out.
    @Test func hysteresisStopsFlicker() {
        var tracker = EncounterTracker(pois: [goblin])
        var kinds = [EncounterEvent.Kind]()
        for (t, d) in [(0.0, -20.0), (1, -9), (2, -11), (3, -9.5), (4, -11.5), (5, -9), (6, -13), (7, -9)] {
            kinds += tracker.update(east(d), atSeconds: t).map(\.kind)
        }
        #expect(kinds == [.enter, .exit, .enter])
    }

    @Test func dwellDelaysTheEnterAndAShortVisitFiresNothing() throws {
        let playback = try RoutePlayback(points: [east(-50), east(50)], speed: 1)
        var simulation = try Simulation(playback: playback, pois: [goblin], tickSeconds: 1)
        simulation.dwellSeconds = 5
        let events = simulation.events
        #expect(events.first?.kind == .enter && abs(events[0].secondsFromStart - 45) < 0.05)
        simulation.dwellSeconds = 30  // inside for 22 s only
        #expect(simulation.events.isEmpty)
    }

    @Test func startingInsideEntersAtOnce() {
        var tracker = EncounterTracker(pois: [goblin])
        #expect(tracker.update(east(3), atSeconds: 0).map(\.kind) == [.enter])
    }
}

@Suite struct PlaybackTests {
    @Test func timedWaypointsSetTheLegs() throws {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let playback = try RoutePlayback(points: [east(0), east(100), east(300)],
                                         times: [start, start + 10, start + 30], timeWarp: 2)
        #expect(playback.secondsFromStart == [0, 5, 15])
        #expect(abs(Geodesy.haversineDistance(playback.position(atSeconds: 2.5), east(50))) < 0.5)
        #expect(abs(Geodesy.haversineDistance(playback.position(atSeconds: 10), east(200))) < 0.5)
        // Without times: walking speed.
        let walk = try RoutePlayback(points: [east(0), east(140)])
        #expect(abs(walk.durationSeconds - 100) < 0.1)
        #expect(walk.ticks(everySeconds: 30).map(\.secondsFromStart) == [0, 30, 60, 90, walk.durationSeconds])
    }

    @Test func noiseIsSeeded() throws {
        let a = try RoutePlayback(points: [east(0), east(100)], noise: 5, seed: 7).ticks(everySeconds: 10).map(\.position)
        let b = try RoutePlayback(points: [east(0), east(100)], noise: 5, seed: 7).ticks(everySeconds: 10).map(\.position)
        let c = try RoutePlayback(points: [east(0), east(100)], noise: 5, seed: 8).ticks(everySeconds: 10).map(\.position)
        #expect(a == b && a != c)
        let offsets = a.enumerated().map { Geodesy.haversineDistance($0.element, try! RoutePlayback(points: [east(0), east(100)]).position(atSeconds: Double($0.offset) * 10)) }
        #expect(offsets.max()! < 25 && offsets.max()! > 0.1)
    }
}

@Suite struct WarpTests {
    @Test func warpsFollowLines() throws {
        let stations = [
            PointOfInterest(id: "59-lex", kind: .warp, coordinate: east(0), lines: ["4", "5", "6", "N", "R", "W"]),
            PointOfInterest(id: "5av-59", kind: .warp, coordinate: east(500), lines: ["N", "R", "W"]),
            PointOfInterest(id: "columbus", kind: .warp, coordinate: east(1500), lines: ["A", "B", "C", "D", "1"]),
            PointOfInterest(id: "goblin", kind: .monster, coordinate: east(10)),
        ]
        let network = WarpNetwork(stations)
        #expect(network.stations.count == 3 && network.lines["N"]?.map(\.id) == ["59-lex", "5av-59"])
        #expect(network.destinations(from: "5av-59").map(\.id) == ["59-lex"])
        #expect(try network.warp(from: "59-lex", to: "5av-59").id == "5av-59")
        #expect(throws: GameDataError.self) { try network.warp(from: "5av-59", to: "columbus") }
    }
}

@Suite struct PointsOfInterestTests {
    @Test func fromGeoJSONAndPlist() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-pois-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let geojson = folder.appendingPathComponent("pois.geojson")
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.97187,40.767769]},"properties":{"id":"goblin","kind":"monster","title":"Goblin"}},{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.973347,40.764811]},"properties":{"id":"R13","kind":"warp","radius":20,"lines":["N","R","W"]}}]}"#.utf8).write(to: geojson)
        let pois = try PointsOfInterest.load(geojson.path)
        #expect(pois.map(\.id) == ["goblin", "R13"] && pois[0].radius == 10 && pois[1].radius == 20 && pois[1].lines == ["N", "R", "W"])
        let plist = folder.appendingPathComponent("pois.plist")
        try Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><array>
        <dict><key>name</key><string>Goblin</string><key>type</key><string>monster</string><key>location</key><string>{40.767769,-73.97187}</string></dict>
        <dict><key>name</key><string>Store</string><key>type</key><string>store</string><key>location</key><string>{40.76643,-73.96995}</string></dict>
        </array></plist>
        """.utf8).write(to: plist)
        let fromPlist = try PointsOfInterest.load(plist.path)
        #expect(fromPlist.map(\.kind) == [.monster, .store] && fromPlist[0].id == "Goblin" && abs(fromPlist[1].coordinate.latitude - 40.76643) < 1e-9)
        let bad = folder.appendingPathComponent("bad.geojson")
        try Data(#"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"kind":"dragon"}}"#.utf8).write(to: bad)
        #expect(throws: GameDataError.self) { try PointsOfInterest.load(bad.path) }
    }

    @Test func loopsOffsetTheirTimes() throws {
        let playback = try RoutePlayback(points: [east(-50), east(50)], speed: 1)
        let simulation = try Simulation(playback: playback, pois: [PointOfInterest(id: "g", kind: .monster, coordinate: centre)], tickSeconds: 1)
        let second = simulation.steps(offsetSeconds: 101).compactMap { if case .encounter(let e) = $0 { return e.secondsFromStart } else { return nil } }
        #expect(abs(second[0] - 141) < 0.05)
    }
}

/// A title or id with a quote, a backslash or a newline still makes one valid JSON line
/// (a raw newline would end the line of `simulate --json` and the `/play` event).
@Test func eventJSONLineEscapesControlCharacters() throws {
    let poi = PointOfInterest(id: "a\"b\\c", kind: .quest, coordinate: centre, title: "line one\nline two/\u{1}")
    let event = EncounterEvent(secondsFromStart: 1.5, kind: .enter, poi: poi, position: centre)
    let line = GameEventLine(event, withTitle: true).text
    #expect(!line.contains("\n"))
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(object["title"] as? String == "line one\nline two/\u{1}" && object["poi"] as? String == "a\"b\\c")
    #expect(line == #"{"event":"enter","kind":"quest","lat":40.767769,"lon":-73.97187,"poi":"a\"b\\c","t":1.5,"title":"line one\nline two/\u0001"}"#)
}
