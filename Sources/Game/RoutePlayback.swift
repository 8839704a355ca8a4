import Foundation
public import TileMath
import Features

/// A route played back as Xcode's location simulation plays a GPX file: straight lines
/// between waypoints at a constant speed per leg. With times on every waypoint the legs
/// take the times between them; without, the walker keeps `speed` (walking, 1.4 m/s). A
/// time warp divides every duration; GPS noise (meters, seeded) is added per position, the
/// same every run.
///
/// Only the waypoints and their times are stored: positions are computed as they are asked
/// for (`ticks(everySeconds:)` is a lazy sequence), so a route of a year at a tick of a
/// millisecond costs no memory, only the time to walk it.
public struct RoutePlayback: Sendable {
    /// Walking speeds accepted, in m/s (a snail to an airliner).
    public static let speedRange = 0.01...1000.0
    /// Time warps accepted: a thousand times slower to a million times faster.
    public static let timeWarpRange = 0.001...1_000_000.0
    /// GPS noise accepted, meters (1 σ).
    public static let noiseRange = 0.0...10_000.0

    public let points: [Coordinate]
    /// Seconds from the start at each point.
    public let secondsFromStart: [Double]
    public var noise: Double
    public var seed: UInt64
    /// The file it came from (or "route"), for messages.
    public var name = "route"

    public init(points: [Coordinate], times: [Date?] = [], speed: Double = 1.4, timeWarp: Double = 1, noise: Double = 0, seed: UInt64 = 1) throws(GameDataError) {
        guard points.count >= 2 else { throw GameDataError(file: "route", place: "points", reason: "a route needs at least 2 points") }
        guard Self.speedRange.contains(speed) else {
            throw GameDataError(file: "route", place: "speed", reason: "\(speed) m/s is out of range [\(Self.speedRange.lowerBound), \(Self.speedRange.upperBound)]")
        }
        guard Self.timeWarpRange.contains(timeWarp) else {
            throw GameDataError(file: "route", place: "time-warp", reason: "\(timeWarp) is out of range [\(Self.timeWarpRange.lowerBound), \(Self.timeWarpRange.upperBound)]")
        }
        guard Self.noiseRange.contains(noise) else {
            throw GameDataError(file: "route", place: "noise", reason: "\(noise) m is out of range [\(Self.noiseRange.lowerBound), \(Self.noiseRange.upperBound)]")
        }
        for (index, point) in points.enumerated() where !(point.latitude.isFinite && point.longitude.isFinite && abs(point.latitude) <= 90 && abs(point.longitude) <= 180) {
            throw GameDataError(file: "route", place: "points[\(index)]", reason: "\(point.longitude),\(point.latitude) is not a longitude and latitude")
        }
        self.points = points
        self.noise = noise
        self.seed = seed
        var t = [0.0]
        t.reserveCapacity(points.count)
        let stamps = times.count == points.count ? times.compactMap { $0 } : []
        let timed = stamps.count == points.count && zip(stamps, stamps.dropFirst()).allSatisfy { $0.timeIntervalSince($1) < 0 }
        for i in 1..<points.count {
            let leg = timed ? stamps[i].timeIntervalSince(stamps[i - 1]) : Geodesy.haversineDistance(points[i - 1], points[i]) / speed
            let time = t[i - 1] + leg / timeWarp
            // Year 1 to year 9999 is 3e11 s: large but finite. Anything else is not a time.
            guard time.isFinite, time >= t[i - 1] else {
                throw GameDataError(file: "route", place: "points[\(i)]", reason: "the time to reach it is not a number of seconds (\(time))")
            }
            t.append(time)
        }
        self.secondsFromStart = t
    }

    /// The first track, route or line string of a GPX (or any feature file), with its times;
    /// for a GPX with neither track nor route, its waypoints in document order, as Xcode
    /// plays a location file (see `waypointRoute`).
    public static func load(_ path: String, speed: Double = 1.4, timeWarp: Double = 1, noise: Double = 0, seed: UInt64 = 1) throws(GameDataError) -> RoutePlayback {
        // Waypoints first: their errors name the waypoint by index as well as by line.
        let waypoints = path.lowercased().hasSuffix(".gpx") ? try GPX.waypoints(URL(fileURLWithPath: path)) : []
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
                var playback = try RoutePlayback(points: points, times: times.count == points.count ? times : [], speed: speed, timeWarp: timeWarp,
                                                 noise: noise, seed: seed)
                playback.name = path
                return playback
            } catch {
                throw GameDataError(file: path, place: error.place, reason: error.reason)  // name the file, not "route"
            }
        }
        if !waypoints.isEmpty {
            let (points, times) = try waypointRoute(waypoints, file: path)
            do {
                var playback = try RoutePlayback(points: points, times: times, speed: speed, timeWarp: timeWarp, noise: noise, seed: seed)
                playback.name = path
                return playback
            } catch {
                throw GameDataError(file: path, place: error.place, reason: error.reason)
            }
        }
        throw GameDataError(file: path, place: "file", reason: "no track, route, waypoint or line to play")
    }

    /// Xcode's semantics for a location file of `<wpt>` elements: the simulator moves between
    /// them in document order, at the times given when every waypoint has a `<time>`, at the
    /// walking speed when none has. Anything else is refused, naming the waypoint: one
    /// waypoint (nowhere to go), some times missing, a time not after the one before.
    static func waypointRoute(_ waypoints: [GPX.Waypoint], file: String) throws(GameDataError) -> (points: [Coordinate], times: [Date?]) {
        guard waypoints.count >= 2 else {
            throw GameDataError(file: file, place: waypoints.first?.place ?? "file",
                                reason: "a route needs at least 2 waypoints; this file has \(waypoints.count)")
        }
        let timed = waypoints.firstIndex { $0.time != nil }
        guard let timed else { return (waypoints.map(\.coordinate), []) }
        if let missing = waypoints.first(where: { $0.time == nil }) {
            throw GameDataError(file: file, place: missing.place,
                                reason: "no <time>, but \(waypoints[timed].place) has one: give every waypoint a time, or none (then they are walked at --speed)")
        }
        for (before, point) in zip(waypoints, waypoints.dropFirst()) {
            guard let t0 = before.time, let t1 = point.time, t1 > t0 else {
                let stamp = { (d: Date?) in d.map { $0.formatted(.iso8601) } ?? "?" }
                throw GameDataError(file: file, place: point.place,
                                    reason: "time \(stamp(point.time)) is not after the time of \(before.place), \(stamp(before.time)): times must go forward")
            }
        }
        return (waypoints.map(\.coordinate), waypoints.map(\.time))
    }

    /// Seconds from the first point to the last (finite, 0 or more).
    public var durationSeconds: Double { secondsFromStart.last ?? 0 }

    /// Where the walker is `seconds` from the start (clamped to the route), before noise.
    public func position(atSeconds time: Double) -> Coordinate {
        guard let last = points.last, let first = points.first else { return Coordinate(latitude: 0, longitude: 0) }
        if !(time > 0) { return first }  // NaN too
        if time >= durationSeconds { return last }
        // The leg containing `time` (binary search).
        var low = 0, high = secondsFromStart.count - 1
        while high - low > 1 {
            let mid = (low + high) / 2
            if secondsFromStart[mid] <= time { low = mid } else { high = mid }
        }
        let span = secondsFromStart[high] - secondsFromStart[low]
        let f = span > 0 ? (time - secondsFromStart[low]) / span : 1
        let a = points[low], b = points[high]
        return Coordinate(latitude: a.latitude + f * (b.latitude - a.latitude), longitude: a.longitude + f * (b.longitude - a.longitude))
    }

    /// How many positions `ticks(everySeconds: tick)` gives: one every `tick` seconds from 0,
    /// and the end. nil when `tick` is not a number above 0, or the count is beyond `Int`.
    public func tickCount(everySeconds tick: Double) -> Int? {
        guard tick.isFinite, tick > 0 else { return nil }
        let steps = (durationSeconds / tick).rounded(.up)
        guard steps.isFinite, steps < 9e18 else { return nil }
        return Int(steps) + 1
    }

    /// Positions every `tick` seconds from 0 to the end (the end included), with noise, made
    /// one at a time. A `tick` that is not a number above 0 gives the start and the end.
    public func ticks(everySeconds tick: Double) -> Ticks { Ticks(playback: self, tick: tick) }

    /// The positions of a playback, computed as they are iterated.
    public struct Ticks: Sequence, Sendable {
        let playback: RoutePlayback
        let tick: Double

        public func makeIterator() -> Iterator { Iterator(playback: playback, tick: tick.isFinite && tick > 0 ? tick : .infinity) }

        public struct Iterator: IteratorProtocol, Sendable {
            let playback: RoutePlayback
            let tick: Double
            var rng: SeededRandom
            var step = 0
            var finished = false

            init(playback: RoutePlayback, tick: Double) {
                self.playback = playback
                self.tick = tick
                rng = SeededRandom(seed: playback.seed)
            }

            public mutating func next() -> (secondsFromStart: Double, position: Coordinate)? {
                guard !finished else { return nil }
                let duration = playback.durationSeconds
                // step * tick, not a running sum: no drift, and an infinite tick jumps to the end.
                let t = step == 0 ? 0 : Swift.min(duration, Double(step) * tick)
                if t >= duration { finished = true }
                step += 1
                return (t, playback.noisy(playback.position(atSeconds: t), &rng))
            }
        }
    }

    /// A position with its seeded Gaussian noise (Box-Muller: `noise` meters, 1 σ, per axis),
    /// kept on the Earth near the poles.
    func noisy(_ p: Coordinate, _ rng: inout SeededRandom) -> Coordinate {
        guard noise > 0 else { return p }
        let u1 = max(rng.nextUnit(), 1e-12), u2 = rng.nextUnit()
        let r = noise * sqrt(-2 * log(u1))
        let dx = r * cos(2 * .pi * u2), dy = r * sin(2 * .pi * u2)
        let metersPerDegree = 111_319.49
        let across = metersPerDegree * max(1e-6, cos(p.latitude * .pi / 180))
        return Coordinate(latitude: min(90, max(-90, p.latitude + dy / metersPerDegree)), longitude: p.longitude + dx / across)
    }
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
