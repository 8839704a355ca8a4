import Foundation
public import TileMath
import Features

/// A route played back as Xcode's location simulation plays a GPX file: straight lines
/// between waypoints at a constant speed per leg. With times on every waypoint the legs
/// take the times between them; without, the walker keeps `speed` (walking, 1.4 m/s). A
/// time warp divides every duration; GPS noise (meters, seeded) is added per position, the
/// same every run.
public struct RoutePlayback: Sendable {
    public let points: [Coordinate]
    /// Seconds from the start at each point.
    public let times: [Double]
    public var noise: Double
    public var seed: UInt64

    public init(points: [Coordinate], times: [Date?] = [], speed: Double = 1.4, timeWarp: Double = 1, noise: Double = 0, seed: UInt64 = 1) throws(GameDataError) {
        guard points.count >= 2 else { throw GameDataError(file: "route", place: "points", reason: "a route needs at least 2 points") }
        guard speed > 0, timeWarp > 0 else { throw GameDataError(file: "route", place: "speed", reason: "speed and time warp must be above 0") }
        self.points = points
        self.noise = noise
        self.seed = seed
        var t = [0.0]
        let timed = times.count == points.count && times.allSatisfy { $0 != nil }
            && zip(times, times.dropFirst()).allSatisfy { $0!.timeIntervalSince($1!) < 0 }
        for i in 1..<points.count {
            let leg = timed ? times[i]!.timeIntervalSince(times[i - 1]!) : Geodesy.haversineDistance(points[i - 1], points[i]) / speed
            t.append(t[i - 1] + leg / timeWarp)
        }
        self.times = t
    }

    /// The first track, route or line string of a GPX (or any feature file), with its times.
    public static func load(_ path: String, speed: Double = 1.4, timeWarp: Double = 1, noise: Double = 0, seed: UInt64 = 1) throws -> RoutePlayback {
        let features = try FeatureFiles.load(path)
        for feature in features {
            let points: [Coordinate]
            switch feature.geometry {
            case .lineString(let cs): points = cs
            case .multiLineString(let lines) where !lines.isEmpty: points = lines.flatMap { $0 }
            default: continue
            }
            let times = feature.trackPoints?.times ?? []
            do {
                return try RoutePlayback(points: points, times: times.count == points.count ? times : [], speed: speed, timeWarp: timeWarp,
                                         noise: noise, seed: seed)
            } catch {
                throw GameDataError(file: path, place: error.place, reason: error.reason)  // name the file, not "route"
            }
        }
        throw GameDataError(file: path, place: "file", reason: "no track, route or line to play")
    }

    public var duration: Double { times.last! }

    /// Where the walker is at `time` (clamped to the route), before noise.
    public func position(at time: Double) -> Coordinate {
        if time <= 0 { return points[0] }
        if time >= duration { return points[points.count - 1] }
        // The leg containing `time` (binary search).
        var low = 0, high = times.count - 1
        while high - low > 1 {
            let mid = (low + high) / 2
            if times[mid] <= time { low = mid } else { high = mid }
        }
        let span = times[high] - times[low]
        let f = span > 0 ? (time - times[low]) / span : 1
        let a = points[low], b = points[high]
        return Coordinate(latitude: a.latitude + f * (b.latitude - a.latitude), longitude: a.longitude + f * (b.longitude - a.longitude))
    }

    /// Positions every `tick` seconds from 0 to the end (the end included), with noise.
    public func ticks(every tick: Double) -> [(time: Double, position: Coordinate)] {
        var rng = SplitMix64(seed: seed)
        var out = [(Double, Coordinate)]()
        var t = 0.0
        var step = 0
        while true {
            var p = position(at: t)
            if noise > 0 {
                // Box-Muller: a seeded Gaussian offset of `noise` meters (1 σ) per axis.
                let u1 = max(rng.nextUnit(), 1e-12), u2 = rng.nextUnit()
                let r = noise * sqrt(-2 * log(u1))
                let dx = r * cos(2 * .pi * u2), dy = r * sin(2 * .pi * u2)
                p = Coordinate(latitude: p.latitude + dy / 111_319.49,
                               longitude: p.longitude + dx / (111_319.49 * cos(p.latitude * .pi / 180)))
            }
            out.append((t, p))
            if t >= duration { break }
            step += 1
            t = min(duration, Double(step) * tick)
        }
        return out
    }
}

/// A small deterministic generator (the same numbers on every machine and run).
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// Subway stations as warp zones: from a station, the player may warp to any other
/// station that shares a line with it.
public struct WarpNetwork: Sendable {
    public let stations: [PointOfInterest]

    public init(_ pois: [PointOfInterest]) {
        stations = pois.filter { $0.kind == .warp }
    }

    /// Stations grouped by line, each list in the order given.
    public var lines: [String: [PointOfInterest]] {
        var out = [String: [PointOfInterest]]()
        for station in stations { for line in station.lines { out[line, default: []].append(station) } }
        return out
    }

    public func destinations(from id: String) -> [PointOfInterest] {
        guard let from = stations.first(where: { $0.id == id }) else { return [] }
        let shared = Set(from.lines)
        return stations.filter { $0.id != id && !shared.isDisjoint(with: $0.lines) }
    }

    /// Where a warp lands; throws when the stations share no line.
    public func warp(from: String, to: String) throws(GameDataError) -> PointOfInterest {
        guard stations.contains(where: { $0.id == from }) else { throw GameDataError(file: "warp", place: from, reason: "no such station") }
        guard let target = destinations(from: from).first(where: { $0.id == to }) else {
            throw GameDataError(file: "warp", place: to, reason: "not on a line of \(from)")
        }
        return target
    }
}
