import Foundation
import TileMath
import Game

/// `tilekit simulate`: a GPX route walked past the points of interest, as JSON lines.
enum SimulateCommand: Command {
    static let path = ["simulate"]
    static let summary = "walk a GPX route past points of interest and print the encounters"
    static let options = OptionSpec(valued: ["gpx", "pois", "speed", "tick", "time-warp", "noise", "seed", "hysteresis", "dwell"],
                                    flags: ["loop", "positions"])
    static let help = """
    Usage: tilekit simulate --gpx ROUTE.gpx --pois POIS.geojson [--speed M/S] [--tick SECONDS] [--loop]

    Plays the route as Xcode's location simulation does (straight lines between waypoints;
    the GPX times when every point has one, otherwise --speed) and prints one JSON line per
    encounter: {"event":"enter"|"exit","kind":...,"lat":...,"lon":...,"poi":id,"t":seconds}
    (keys sorted; seconds to the millisecond, degrees to 7 decimals).
    Events are placed where the path crosses the circle, not at the tick that noticed it.

    Options:
      --gpx FILE          the route: a GPX track or route, a GPX of waypoints (an Xcode location
                          file: <wpt> in order, at their <time>s), or any line in GeoJSON/KML
      --pois FILE         GeoJSON Points with id, kind (quest, monster, store, treasure, warp),
                          radius (meters, default 10) and title; or a plist of annotations
      --speed M/S         walking speed when the route has no times, 0.01-1000 (default: 1.4)
      --tick SECONDS      time between positions, 0.0001-86400 (default: 1)
      --time-warp N       play N times faster, 0.001-1000000 (default: 1)
      --noise METERS      GPS noise, 1 sigma, seeded, 0-10000 (default: 0)
      --seed N            the noise's seed (default: 1)
      --hysteresis METERS how far past the radius an exit is, 0-10000 (default: 2)
      --dwell SECONDS     time inside before an enter fires, 0-86400 (default: 0)
      --positions         also print {"event":"position","lat":...,"lon":...,"t":...} every tick
      --loop              play the route again and again, in real time (stop with Ctrl-C)

    Positions are computed as they are played, never stored. One pass of the route may make
    at most 10000000 positions (its duration over --tick): a longer route is refused with
    the tick that would fit.
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 0...0, "")
        let gpx = try required(arguments, "gpx"), poisPath = try required(arguments, "pois")
        for file in [gpx, poisPath] where !FileManager.default.fileExists(atPath: file) { throw .io("\(file): no such file") }
        func number(_ name: String, _ fallback: String, _ range: ClosedRange<Double>, _ unit: String) throws(CLIError) -> Double {
            let value = try Parse.number(arguments.values[name] ?? fallback, name)
            guard range.contains(value) else { throw .usage("\(name) \(value)\(unit) is out of range [\(range.lowerBound), \(range.upperBound)]") }
            return value
        }
        let speed = try number("speed", "1.4", RoutePlayback.speedRange, " m/s")
        let tickSeconds = try number("tick", "1", Simulation.tickSecondsRange, " s")
        let warp = try number("time-warp", "1", RoutePlayback.timeWarpRange, "")
        let noise = try number("noise", "0", RoutePlayback.noiseRange, " m")
        let hysteresis = try number("hysteresis", "2", 0...10_000, " m")
        let dwellSeconds = try number("dwell", "0", 0...86_400, " s")
        let seed = UInt64(try Parse.count(arguments.values["seed"] ?? "1", "seed", 0...Int.max))
        var simulation: Simulation
        do {
            let playback = try RoutePlayback.load(gpx, speed: speed, timeWarp: warp, noise: noise, seed: seed)
            simulation = try Simulation(playback: playback, pois: try PointsOfInterest.load(poisPath), tickSeconds: tickSeconds)
        } catch {
            throw CLIError(error)
        }
        simulation.hysteresisMeters = hysteresis
        simulation.dwellSeconds = dwellSeconds
        let positions = arguments.flag("positions")
        var lapSeconds = 0.0
        repeat {
            let started = ContinuousClock.now
            for step in simulation.steps(offsetSeconds: lapSeconds) {
                switch step {
                case .encounter(let event):
                    io.write(GameEventLine(event).text)
                case .position(let seconds, let p):
                    if positions { io.write(GameEventLine(secondsFromStart: seconds, position: p, event: "position").text) }
                    if arguments.flag("loop") {
                        let due = started + .seconds(seconds - lapSeconds)
                        if due > ContinuousClock.now { try? await Task.sleep(until: due) }
                    }
                }
            }
            lapSeconds += simulation.playback.durationSeconds + simulation.tickSeconds
        } while arguments.flag("loop")
    }
}
