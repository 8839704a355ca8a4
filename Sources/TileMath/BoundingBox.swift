import Foundation

/// A box in WGS84 degrees: `west, south, east, north` (GeoJSON's bbox order).
///
/// A box whose `west` is greater than its `east` crosses the antimeridian: it covers
/// from `west` eastward through 180° to `east` (e.g. Fiji, 177,-19,-178,-16).
public struct BoundingBox: Hashable, Sendable, CustomStringConvertible {
    public var west: Double
    public var south: Double
    public var east: Double
    public var north: Double

    public init(west: Double, south: Double, east: Double, north: Double) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    /// The whole Web Mercator world.
    public static let world = BoundingBox(
        west: -180, south: -Coordinate.maxMercatorLatitude, east: 180, north: Coordinate.maxMercatorLatitude)

    /// The smallest box that holds every coordinate (not crossing the antimeridian); nil when empty.
    public init?(covering coordinates: some Sequence<Coordinate>) {
        var iterator = coordinates.makeIterator()
        guard let first = iterator.next() else { return nil }
        var box = BoundingBox(west: first.longitude, south: first.latitude, east: first.longitude, north: first.latitude)
        while let c = iterator.next() {
            box.west = min(box.west, c.longitude)
            box.east = max(box.east, c.longitude)
            box.south = min(box.south, c.latitude)
            box.north = max(box.north, c.latitude)
        }
        self = box
    }

    public var crossesAntimeridian: Bool { west > east }

    /// East-west extent in degrees, counting across the antimeridian when the box crosses it.
    public var longitudeSpan: Double { crossesAntimeridian ? east + 360 - west : east - west }
    public var latitudeSpan: Double { north - south }

    /// The centre in degrees; for a box crossing the antimeridian, wrapped into [-180, 180).
    public var center: Coordinate {
        Coordinate(latitude: (south + north) / 2, longitude: west + longitudeSpan / 2).wrapped
    }

    public var northWest: Coordinate { Coordinate(latitude: north, longitude: west) }
    public var southEast: Coordinate { Coordinate(latitude: south, longitude: east) }

    /// True when the coordinate lies inside or on the edge of the box.
    public func contains(_ coordinate: Coordinate) -> Bool {
        guard coordinate.latitude >= south, coordinate.latitude <= north else { return false }
        if crossesAntimeridian {
            return coordinate.longitude >= west || coordinate.longitude <= east
        }
        return coordinate.longitude >= west && coordinate.longitude <= east
    }

    /// True when the two boxes share any point.
    public func intersects(_ other: BoundingBox) -> Bool {
        guard south <= other.north, other.south <= north else { return false }
        return splitAtAntimeridian.contains { a in
            other.splitAtAntimeridian.contains { b in a.west <= b.east && b.west <= a.east }
        }
    }

    /// True when the two boxes share area: boxes that only touch along an edge do not
    /// overlap (a tile beside a layer's bounds has nothing of it).
    public func overlaps(_ other: BoundingBox) -> Bool {
        guard south < other.north, other.south < north else { return false }
        return splitAtAntimeridian.contains { a in
            other.splitAtAntimeridian.contains { b in a.west < b.east && b.west < a.east }
        }
    }

    /// One box, or two when this one crosses the antimeridian (west part first, as mercantile).
    public var splitAtAntimeridian: [BoundingBox] {
        guard crossesAntimeridian else { return [self] }
        return [BoundingBox(west: -180, south: south, east: east, north: north),
                BoundingBox(west: west, south: south, east: 180, north: north)]
    }

    /// The box in Web Mercator meters (latitudes clamped to the Mercator limit).
    public var mercator: MercatorBoundingBox {
        let limit = Coordinate.maxMercatorLatitude
        let sw = MercatorPoint(Coordinate(latitude: max(-limit, south), longitude: west))
        let ne = MercatorPoint(Coordinate(latitude: min(limit, north), longitude: east))
        return MercatorBoundingBox(west: sw.easting, south: sw.northing, east: ne.easting, north: ne.northing)
    }

    /// Returns the box when its values are finite and in range and south ≤ north; otherwise
    /// throws naming the value.
    public func validated() throws(TileMathError) -> BoundingBox {
        for (name, value) in [("west", west), ("south", south), ("east", east), ("north", north)] where !value.isFinite {
            throw .invalidBoundingBox(self, reason: "\(name) \(value) is not a finite number")
        }
        for (name, value) in [("south", south), ("north", north)] where abs(value) > 90 {
            throw .invalidBoundingBox(self, reason: "\(name) \(value.shortDescription) is out of range [-90, 90]; boxes are W,S,E,N")
        }
        for (name, value) in [("west", west), ("east", east)] where abs(value) > 180 {
            throw .invalidBoundingBox(self, reason: "\(name) \(value.shortDescription) is out of range [-180, 180]; boxes are W,S,E,N")
        }
        if south > north {
            throw .invalidBoundingBox(self, reason: "south \(south.shortDescription) is greater than north \(north.shortDescription); boxes are W,S,E,N")
        }
        return self
    }

    public var description: String {
        "\(west.shortDescription),\(south.shortDescription),\(east.shortDescription),\(north.shortDescription)"
    }
}
