import Foundation
public import TileMath

/// A route played against the board: positions every tick, and the encounters they make.
public struct Simulation: Sendable {
    public let playback: RoutePlayback
    public let pois: [PointOfInterest]
    public var tick: Double
    public var hysteresis: Double = 2
    public var dwell: Double = 0

    public init(playback: RoutePlayback, pois: [PointOfInterest], tick: Double = 1) {
        self.playback = playback
        self.pois = pois
        self.tick = tick
    }

    public enum Step: Sendable {
        case position(time: Double, Coordinate)
        case encounter(EncounterEvent)
    }

    /// Every step in time order; `offset` is added to every time (a looped route's laps).
    public func steps(offset: Double = 0) -> [Step] {
        var tracker = EncounterTracker(pois: pois, hysteresis: hysteresis, dwell: dwell)
        var out = [Step]()
        for (time, position) in playback.ticks(every: tick) {
            for var event in tracker.update(position, at: time) {
                event.time += offset
                out.append(.encounter(event))
            }
            out.append(.position(time: time + offset, position))
        }
        return out
    }

    public var events: [EncounterEvent] {
        steps().compactMap { if case .encounter(let e) = $0 { return e } else { return nil } }
    }

    /// One JSON line per event: `{"t":…,"event":"enter","poi":id,"kind":…,"lon":…,"lat":…}`,
    /// and the point's `"title"` when asked (the viewer's popups).
    public static func jsonLine(_ event: EncounterEvent, withTitle: Bool = false) -> String {
        func number(_ v: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", v) }
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var line = "{\"t\":\(number(event.time, 3)),\"event\":\"\(event.kind.rawValue)\",\"poi\":\(quoted(event.poi.id)),\"kind\":\"\(event.poi.kind.rawValue)\","
            + "\"lon\":\(number(event.position.longitude, 7)),\"lat\":\(number(event.position.latitude, 7))"
        if withTitle, let title = event.poi.title { line += ",\"title\":\(quoted(title))" }
        return line + "}"
    }
}
