import Foundation
import Testing
import TileMath
@testable import Game

/// A route read once is played at any warp: the same times as reading it at that warp.
@Suite struct RoutePlaybackWarpTests {
    let points = [Coordinate(latitude: 40.7677, longitude: -73.9719), Coordinate(latitude: 40.7686, longitude: -73.9712),
                  Coordinate(latitude: 40.7700, longitude: -73.9700)]

    @Test(arguments: [0.1, 2.0, 7.5, 1000.0])
    func aWarpedRouteHasTheTimesOfOneBuiltAtThatWarp(warp: Double) throws {
        let read = try RoutePlayback(points: points, speed: 1.4)
        let built = try RoutePlayback(points: points, speed: 1.4, timeWarp: warp)
        let warped = try read.warped(by: warp)
        #expect(warped.points == built.points && warped.secondsFromStart.count == built.secondsFromStart.count)
        for (a, b) in zip(warped.secondsFromStart, built.secondsFromStart) { #expect(abs(a - b) <= 1e-12 * max(1, abs(b)), "\(a) vs \(b)") }
    }

    @Test func aWarpOfOneIsTheSameRouteToTheBit() throws {
        let read = try RoutePlayback(points: points, speed: 1.4, noise: 3, seed: 9)
        let same = try read.warped(by: 1)
        #expect(same.secondsFromStart == read.secondsFromStart && same.noise == 3 && same.seed == 9 && same.name == read.name)
    }

    @Test func aWarpOutOfRangeIsRefusedNamingIt() throws {
        let read = try RoutePlayback(points: points)
        #expect(throws: GameDataError(file: "route", place: "time-warp", reason: "0.0 is out of range [0.001, 1000000.0]")) { try read.warped(by: 0) }
    }
}
