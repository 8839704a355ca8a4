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
    encounter: {"t":seconds,"event":"enter"|"exit","poi":id,"kind":...,"lon":...,"lat":...}.
    Events are placed where the path crosses the circle, not at the tick that noticed it.

    Options:
      --gpx FILE          the route (GPX track or route, or any line in GeoJSON/KML)
      --pois FILE         GeoJSON Points with id, kind (quest, monster, store, treasure, warp),
                          radius (meters, default 10) and title; or a plist of annotations
      --speed M/S         walking speed when the route has no times (default: 1.4)
      --tick SECONDS      time between positions (default: 1)
      --time-warp N       play N times faster (default: 1)
      --noise METERS      GPS noise, 1 sigma, seeded (default: 0)
      --seed N            the noise's seed (default: 1)
      --hysteresis METERS how far past the radius an exit is (default: 2)
      --dwell SECONDS     time inside before an enter fires (default: 0)
      --positions         also print {"t":...,"event":"position",...} every tick
      --loop              play the route again and again, in real time (stop with Ctrl-C)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 0...0, "")
        let gpx = try required(arguments, "gpx"), poisPath = try required(arguments, "pois")
        for file in [gpx, poisPath] where !FileManager.default.fileExists(atPath: file) { throw .io("\(file): no such file") }
        let speed = try Parse.number(arguments.values["speed"] ?? "1.4", "speed")
        let tick = try Parse.number(arguments.values["tick"] ?? "1", "tick")
        let warp = try Parse.number(arguments.values["time-warp"] ?? "1", "time-warp")
        let noise = try Parse.number(arguments.values["noise"] ?? "0", "noise")
        guard speed > 0, tick > 0, warp > 0, noise >= 0 else { throw .usage("speed, tick and time-warp must be above 0, noise 0 or more") }
        let seed = UInt64(try Parse.count(arguments.values["seed"] ?? "1", "seed", 0...Int.max))
        var simulation: Simulation
        do {
            let playback = try RoutePlayback.load(gpx, speed: speed, timeWarp: warp, noise: noise, seed: seed)
            simulation = Simulation(playback: playback, pois: try PointsOfInterest.load(poisPath), tick: tick)
        } catch {
            throw .data("\(error)")
        }
        simulation.hysteresis = try Parse.number(arguments.values["hysteresis"] ?? "2", "hysteresis")
        simulation.dwell = try Parse.number(arguments.values["dwell"] ?? "0", "dwell")
        let positions = arguments.flag("positions")
        var lap = 0.0
        repeat {
            let started = ContinuousClock.now
            for step in simulation.steps(offset: lap) {
                switch step {
                case .encounter(let event):
                    io.write(Simulation.jsonLine(event))
                case .position(let time, let p):
                    if positions { io.write(String(format: "{\"t\":%.3f,\"event\":\"position\",\"lon\":%.7f,\"lat\":%.7f}", time, p.longitude, p.latitude)) }
                    if arguments.flag("loop") {
                        let due = started + .milliseconds(Int((time - lap) * 1000))
                        if due > ContinuousClock.now { try? await Task.sleep(until: due) }
                    }
                }
            }
            lap += simulation.playback.duration + simulation.tick
        } while arguments.flag("loop")
    }
}
