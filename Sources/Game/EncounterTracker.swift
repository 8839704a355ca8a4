import Foundation
public import TileMath

/// Entering or leaving a point of interest's circle.
public struct EncounterEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        case enter, exit
    }
    /// Seconds since the route began.
    public var secondsFromStart: Double
    public var kind: Kind
    public var poi: PointOfInterest
    /// Where the player was: exactly on the circle for an enter (on the outer circle for an exit).
    public var position: Coordinate
}

/// Turns a stream of positions into enter and exit events.
///
/// The player moves in a straight line between two updates, so an event is placed where
/// that segment crosses the circle, not at the tick that noticed it. Exits use a wider
/// circle (`radius + hysteresisMeters`) so a player standing on the edge does not flicker in and
/// out; with `dwellSeconds`, an enter fires only after that many seconds inside. Each visit
/// fires once.
public struct EncounterTracker: Sendable {
    public let pois: [PointOfInterest]
    public var hysteresisMeters: Double
    public var dwellSeconds: Double
    private var inside: [String: Bool] = [:]
    /// When the player crossed in, for POIs whose dwell time has not yet passed.
    private var pendingSince: [String: (seconds: Double, position: Coordinate)] = [:]
    private var last: (seconds: Double, position: Coordinate)?

    public init(pois: [PointOfInterest], hysteresisMeters: Double = 2, dwellSeconds: Double = 0) {
        self.pois = pois
        self.hysteresisMeters = hysteresisMeters
        self.dwellSeconds = dwellSeconds
    }

    /// The player is at `position`, `time` seconds from the start (increasing).
    public mutating func update(_ position: Coordinate, atSeconds time: Double) -> [EncounterEvent] {
        defer { last = (time, position) }
        guard let last else {
            // The first position: already inside counts as entering now.
            var events = [EncounterEvent]()
            for poi in pois where Geodesy.haversineDistance(position, poi.coordinate) <= poi.radius {
                events += enter(poi, atSeconds: time, position: position, nowSeconds: time)
            }
            return events
        }
        var events = [EncounterEvent]()
        for poi in pois {
            let wasInside = inside[poi.id] ?? false
            let pending = pendingSince[poi.id] != nil
            if !wasInside && !pending {
                if let (f, point) = crossing(from: last.position, to: position, center: poi.coordinate, radius: poi.radius, entering: true) {
                    events += enter(poi, atSeconds: last.seconds + f * (time - last.seconds), position: point, nowSeconds: time)
                }
            } else {
                if let (f, point) = crossing(from: last.position, to: position, center: poi.coordinate, radius: poi.radius + hysteresisMeters, entering: false) {
                    let t = last.seconds + f * (time - last.seconds)
                    if wasInside {
                        events.append(EncounterEvent(secondsFromStart: t, kind: .exit, poi: poi, position: point))
                    }
                    inside[poi.id] = false
                    pendingSince[poi.id] = nil
                } else if let (since, point) = pendingSince[poi.id], time >= since + dwellSeconds {
                    pendingSince[poi.id] = nil
                    inside[poi.id] = true
                    events.append(EncounterEvent(secondsFromStart: since + dwellSeconds, kind: .enter, poi: poi, position: point))
                }
            }
        }
        return events.sorted { $0.secondsFromStart < $1.secondsFromStart }
    }

    private mutating func enter(_ poi: PointOfInterest, atSeconds t: Double, position: Coordinate, nowSeconds now: Double) -> [EncounterEvent] {
        if dwellSeconds > 0 && now < t + dwellSeconds {
            pendingSince[poi.id] = (t, position)
            return []
        }
        inside[poi.id] = true
        return [EncounterEvent(secondsFromStart: t + dwellSeconds, kind: .enter, poi: poi, position: position)]
    }

    /// Where the segment a→b first crosses the circle inward (or outward), as the fraction
    /// along the segment and the point. Solved in a local plane around the centre (meters;
    /// exact enough at game scales), then checked with the haversine distance.
    func crossing(from a: Coordinate, to b: Coordinate, center: Coordinate, radius: Double, entering: Bool) -> (Double, Coordinate)? {
        let metersPerDegree = 111_319.49
        let k = cos(center.latitude * .pi / 180)
        let ax = (a.longitude - center.longitude) * metersPerDegree * k, ay = (a.latitude - center.latitude) * metersPerDegree
        let bx = (b.longitude - center.longitude) * metersPerDegree * k, by = (b.latitude - center.latitude) * metersPerDegree
        let dx = bx - ax, dy = by - ay
        let qa = dx * dx + dy * dy, qb = 2 * (ax * dx + ay * dy), qc = ax * ax + ay * ay - radius * radius
        let startsInside = qc <= 0
        if entering && startsInside { return (0, a) }
        if !entering && !startsInside { return (0, a) }
        guard qa > 0 else { return nil }
        let disc = qb * qb - 4 * qa * qc
        guard disc >= 0 else { return nil }
        let root = sqrt(disc)
        let f = entering ? (-qb - root) / (2 * qa) : (-qb + root) / (2 * qa)
        guard f >= 0, f <= 1 else { return nil }
        return (f, Coordinate(latitude: a.latitude + f * (b.latitude - a.latitude), longitude: a.longitude + f * (b.longitude - a.longitude)))
    }
}
