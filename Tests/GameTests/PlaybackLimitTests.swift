import Foundation
import Testing
import TileMath
@testable import Game

/// A route of issue 11, committed under Fixtures/.
func route(_ name: String, filePath: String = #filePath) -> String {
    URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)").path
}

/// Routes and options that made `simulate` keep billions of ticks in memory.
@Suite struct PlaybackLimitTests {
    /// 278 bytes of GPX whose times run from year 1 to year 9999: positions are made as they
    /// are asked for, so its first ticks come at once, and a simulation that would make 3e11
    /// of them is refused with the tick that would fit.
    @Test func tenMillenniaStreamAndAreRefusedAtATickOfASecond() throws {
        let path = route("year-1-to-9999.gpx")
        let playback = try RoutePlayback.load(path)
        // 3.2e11 s (Foundation counts the Julian calendar before 1582: two days more).
        #expect(playback.durationSeconds == 315_538_070_399)
        #expect(playback.tickCount(everySeconds: 1) == 315_538_070_400)
        let first = Array(playback.ticks(everySeconds: 1).prefix(3))
        #expect(first.map(\.secondsFromStart) == [0, 1, 2])
        #expect(throws: GameDataError(file: path, place: "tick", reason: "the route lasts 315538070399.0 s: a tick of 1.0 s makes more than 10000000 positions (a tick of 3.16e+04 s or more, or a larger time warp, would do)")) {
            try Simulation(playback: playback, pois: [], tickSeconds: 1)
        }
        // At a tick that fits, the whole route plays (and ends on its last point).
        #expect(try Simulation(playback: playback, pois: [], tickSeconds: 31_600).tickSeconds == 31_600)
        let warped = try RoutePlayback.load(path, timeWarp: 100)
        let fitting = try Simulation(playback: warped, pois: [], tickSeconds: 86_400)
        var count = 0, last: Double = -1
        for step in fitting.steps() { if case .position(let time, _) = step { count += 1; last = time } }
        #expect(count == 36_522 && count == warped.tickCount(everySeconds: 86_400) && last == warped.durationSeconds)
    }

    /// 127 bytes: a line to 85°E and back, walked at 1.4 m/s (15 million seconds).
    @Test func aLineAcrossAContinentIsRefusedAtOneSecondAndPlaysAtTwo() throws {
        let path = route("line-to-85E-and-back.geojson")
        let playback = try RoutePlayback.load(path)
        #expect(playback.tickCount(everySeconds: 1).map { $0 > Simulation.maxTicks } == true)
        #expect {
            try Simulation(playback: playback, pois: [], tickSeconds: 1)
        } throws: { error in
            guard let error = error as? GameDataError else { return false }
            return error.file == path && error.place == "tick" && error.reason.hasPrefix("the route lasts 1350")
        }
        let simulation = try Simulation(playback: playback, pois: [], tickSeconds: 2)
        #expect(Array(simulation.steps().prefix(2)).count == 2)
    }

    @Test func optionsOutOfRangeAreNamed() throws {
        let points = [east(0), east(100)]
        #expect(throws: GameDataError(file: "route", place: "speed", reason: "1e-300 m/s is out of range [0.01, 1000.0]")) {
            try RoutePlayback(points: points, speed: 1e-300)
        }
        #expect(throws: GameDataError(file: "route", place: "time-warp", reason: "1e-09 is out of range [0.001, 1000000.0]")) {
            try RoutePlayback(points: points, timeWarp: 1e-9)
        }
        #expect(throws: GameDataError(file: "route", place: "time-warp", reason: "nan is out of range [0.001, 1000000.0]")) {
            try RoutePlayback(points: points, timeWarp: .nan)
        }
        #expect(throws: GameDataError(file: "route", place: "noise", reason: "inf m is out of range [0.0, 10000.0]")) {
            try RoutePlayback(points: points, noise: .infinity)
        }
        #expect(throws: GameDataError(file: "route", place: "points[1]", reason: "0.0,nan is not a longitude and latitude")) {
            try RoutePlayback(points: [east(0), Coordinate(latitude: .nan, longitude: 0)])
        }
        let playback = try RoutePlayback(points: points)
        #expect(throws: GameDataError(file: "route", place: "tick", reason: "5e-324 s is out of range [0.0001, 86400.0]")) {
            try Simulation(playback: playback, pois: [], tickSeconds: .leastNonzeroMagnitude)
        }
        // The library's own sequence, given a tick that is not a number, gives the two ends.
        #expect(playback.ticks(everySeconds: .nan).map(\.secondsFromStart) == [0, playback.durationSeconds])
        #expect(playback.ticks(everySeconds: -1).map(\.secondsFromStart) == [0, playback.durationSeconds])
    }

    /// Streaming changes nothing: the ticks and events are those of the stored playback.
    @Test func stepsComeInTheOrderTheyAlwaysDid() throws {
        let playback = try RoutePlayback(points: [east(-50), east(50)], speed: 1, noise: 3, seed: 9)
        let simulation = try Simulation(playback: playback, pois: [PointOfInterest(id: "g", kind: .monster, coordinate: centre)], tickSeconds: 7)
        let steps = Array(simulation.steps())
        let positions = steps.compactMap { if case .position(let t, _) = $0 { return t } else { return nil } }
        #expect(positions.dropLast() == [0, 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98] && positions.last == playback.durationSeconds)
        #expect(positions.count == playback.tickCount(everySeconds: 7))
        // Each tick's events come before its position; two passes give the same steps.
        let index = try #require(steps.firstIndex { if case .encounter = $0 { return true } else { return false } })
        guard case .encounter(let enter) = steps[index], case .position(let after, _) = steps[index + 1] else { Issue.record("\(steps)"); return }
        #expect(enter.kind == .enter && enter.secondsFromStart <= after && after - enter.secondsFromStart < 7)
        #expect(Array(simulation.steps()).count == steps.count)
        #expect(zip(simulation.steps(), steps).allSatisfy { a, b in "\(a)" == "\(b)" })
    }
}
