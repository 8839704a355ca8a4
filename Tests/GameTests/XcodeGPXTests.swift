import Foundation
import Testing
import TileMath
@testable import Game

/// Xcode's location files (`<wpt>` elements, as the MapKit tutorial's Game Test route is):
/// played in document order, at their times, or at walking speed when they have none.
@Suite struct XcodeGPXTests {
    @Test func timedWaypointsPlayAtTheirTimes() throws {
        let playback = try RoutePlayback.load(route("xcode-timed.gpx"))
        #expect(playback.points.count == 3)
        #expect(playback.secondsFromStart == [0, 100, 110])
        // Halfway in time along the first leg is halfway along it.
        let middle = playback.position(atSeconds: 50)
        #expect(abs(middle.latitude - 40.7653) < 1e-9 && abs(middle.longitude + 73.9733) < 1e-9)
    }

    @Test func untimedWaypointsAreWalkedAtTheSpeed() throws {
        let playback = try RoutePlayback.load(route("xcode-untimed.gpx"), speed: 1.4)
        let metres = Geodesy.haversineDistance(playback.points[0], playback.points[1]) + Geodesy.haversineDistance(playback.points[1], playback.points[2])
        #expect(abs(playback.durationSeconds - metres / 1.4) < 1e-6)
        #expect(playback.points.first == Coordinate(latitude: 40.7648, longitude: -73.9733))
    }

    @Test func theBundledGameTestIsAnXcodeFileWithTimes() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/central-park/game-test.gpx").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("<wpt") && !text.contains("<trk"))
        let playback = try RoutePlayback.load(path)
        #expect(playback.points.count == 10)
        #expect(playback.durationSeconds == 493)  // 16:00:00 to 16:08:13, a walk
    }

    /// Each bad file: the error names the file, the waypoint (index and line) and what is wrong.
    @Test(arguments: [
        ("xcode-mixed-times.gpx", "wpt[2] (line 5, column", "no <time>, but wpt[0] (line 3, column"),
        ("xcode-backwards.gpx", "wpt[2] (line 5, column", "time 2014-07-10T16:01:00Z is not after the time of wpt[1] (line 4, column"),
        ("xcode-one-point.gpx", "wpt[0] (line 3, column", "a route needs at least 2 waypoints; this file has 1"),
        ("xcode-no-points.gpx", "file", "no track, route, waypoint or line to play"),
        ("xcode-no-lat.gpx", "wpt[1] (line 4, column", "a waypoint needs numeric lat and lon attributes"),
    ])
    func badFilesAreErrorsNamingTheWaypoint(file: String, place: String, reason: String) throws {
        let path = route(file)
        let error = #expect(throws: (any Error).self) { try RoutePlayback.load(path) }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.hasPrefix("\(path): \(place)"), "\(message)")
        #expect(message.contains(reason), "\(message)")
    }
}
