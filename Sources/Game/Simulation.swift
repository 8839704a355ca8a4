import Foundation
public import TileMath

/// A route played against the board: positions every tick, and the encounters they make,
/// computed as they are iterated (nothing is stored per tick).
public struct Simulation: Sendable {
    /// Ticks accepted, in seconds: a tenth of a millisecond to a day.
    public static let tickSecondsRange = 0.0001...86_400.0
    /// The most positions one pass of a route may make: ten million (115 days at 1 s;
    /// 700 MB of `--positions` lines). More is refused, with the tick that would fit.
    public static let maxTicks = 10_000_000

    public let playback: RoutePlayback
    public let pois: [PointOfInterest]
    /// Seconds between positions.
    public let tickSeconds: Double
    public var hysteresisMeters: Double = 2
    public var dwellSeconds: Double = 0

    /// Throws when `tickSeconds` is out of `tickSecondsRange` or the route would take more than `maxTicks`.
    public init(playback: RoutePlayback, pois: [PointOfInterest], tickSeconds tick: Double = 1) throws(GameDataError) {
        guard Self.tickSecondsRange.contains(tick) else {
            throw GameDataError(file: playback.name, place: "tick", reason: "\(tick) s is out of range [\(Self.tickSecondsRange.lowerBound), \(Self.tickSecondsRange.upperBound)]")
        }
        guard let count = playback.tickCount(everySeconds: tick), count <= Self.maxTicks else {
            let fitting = playback.durationSeconds / Double(Self.maxTicks - 1)
            throw GameDataError(file: playback.name, place: "tick",
                                reason: "the route lasts \(playback.durationSeconds) s: a tick of \(tick) s makes more than \(Self.maxTicks) positions "
                                    + "(a tick of \(String(format: "%.3g", fitting * 1.001)) s or more, or a larger time warp, would do)")
        }
        self.playback = playback
        self.pois = pois
        self.tickSeconds = tick
    }

    public enum Step: Sendable {
        /// Where the walker is, `secondsFromStart` into the route.
        case position(secondsFromStart: Double, Coordinate)
        case encounter(EncounterEvent)
    }

    /// Every step in time order, made as it is iterated; `offsetSeconds` is added to every
    /// time (a looped route's laps).
    public func steps(offsetSeconds: Double = 0) -> Steps { Steps(simulation: self, offsetSeconds: offsetSeconds) }

    /// The steps of a simulation: each tick's encounters, then its position.
    public struct Steps: Sequence, Sendable {
        let simulation: Simulation
        let offsetSeconds: Double

        public func makeIterator() -> Iterator {
            Iterator(ticks: simulation.playback.ticks(everySeconds: simulation.tickSeconds).makeIterator(), offsetSeconds: offsetSeconds,
                     tracker: EncounterTracker(pois: simulation.pois, hysteresisMeters: simulation.hysteresisMeters, dwellSeconds: simulation.dwellSeconds))
        }

        public struct Iterator: IteratorProtocol, Sendable {
            var ticks: RoutePlayback.Ticks.Iterator
            let offsetSeconds: Double
            var tracker: EncounterTracker
            /// The current tick's steps not yet returned (its events, then its position).
            var pending: [Step] = []
            var index = 0

            public mutating func next() -> Step? {
                if index == pending.count {
                    guard let (seconds, position) = ticks.next() else { return nil }
                    pending.removeAll(keepingCapacity: true)
                    index = 0
                    for var event in tracker.update(position, atSeconds: seconds) {
                        event.secondsFromStart += offsetSeconds
                        pending.append(.encounter(event))
                    }
                    pending.append(.position(secondsFromStart: seconds + offsetSeconds, position))
                }
                index += 1
                return pending[index - 1]
            }
        }
    }

    public var events: [EncounterEvent] {
        steps().compactMap { if case .encounter(let e) = $0 { return e } else { return nil } }
    }
}
