/// A polygon in degrees: one exterior ring and any number of holes (RFC 7946 §3.1.6).
/// Rings may be open or closed (first point repeated); both are read the same.
public struct Polygon: Hashable, Sendable {
    public var exterior: [Coordinate]
    public var holes: [[Coordinate]]

    public init(exterior: [Coordinate], holes: [[Coordinate]] = []) {
        self.exterior = exterior
        self.holes = holes
    }

    /// True when the point is inside the exterior ring and inside no hole (even-odd rule,
    /// treating longitude and latitude as a plane, as GeoJSON does).
    public func contains(_ point: Coordinate) -> Bool {
        guard Self.ring(exterior, contains: point) else { return false }
        return !holes.contains { Self.ring($0, contains: point) }
    }

    /// Ray casting towards +longitude: a point is inside when the ray crosses the ring an odd
    /// number of times. Each edge counts its lower end and not its upper one, so a ray
    /// through a vertex is counted once.
    static func ring(_ ring: [Coordinate], contains point: Coordinate) -> Bool {
        guard ring.count >= 3 else { return false }
        var inside = false
        var j = ring.count - 1
        for i in 0..<ring.count {
            let a = ring[i], b = ring[j]
            if (a.latitude > point.latitude) != (b.latitude > point.latitude) {
                let crossing = (b.longitude - a.longitude) * (point.latitude - a.latitude) / (b.latitude - a.latitude) + a.longitude
                if point.longitude < crossing { inside.toggle() }
            }
            j = i
        }
        return inside
    }
}
