import Foundation

/// A position in Web Mercator (EPSG:3857), in meters: `easting` east of Greenwich,
/// `northing` north of the equator, on a sphere of the WGS84 semi-major axis.
public struct MercatorPoint: Hashable, Sendable {
    public var easting: Double
    public var northing: Double

    public init(easting: Double, northing: Double) {
        self.easting = easting
        self.northing = northing
    }

    /// The sphere radius EPSG:3857 uses: the WGS84 semi-major axis, meters.
    public static let earthRadius = 6_378_137.0
    /// The length of the equator on that sphere, meters: the width of the square world.
    public static let earthCircumference = 2 * Double.pi * earthRadius
    /// Half the world's width, meters: easting and northing both lie in [-extent, extent].
    public static let extent = earthCircumference / 2

    /// Projects a coordinate (mercantile `xy`). Latitudes at or beyond the poles give ±infinity.
    public init(_ coordinate: Coordinate) {
        easting = Self.earthRadius * coordinate.longitude.radians
        if coordinate.latitude <= -90 {
            northing = -.infinity
        } else if coordinate.latitude >= 90 {
            northing = .infinity
        } else {
            northing = Self.earthRadius * log(tan(.pi * 0.25 + 0.5 * coordinate.latitude.radians))
        }
    }

    /// The WGS84 coordinate of this point (mercantile `lnglat`).
    public var coordinate: Coordinate {
        Coordinate(
            latitude: (.pi * 0.5 - 2.0 * atan(exp(-northing / Self.earthRadius))).degrees,
            longitude: (easting / Self.earthRadius).degrees)
    }
}

/// A rectangle in Web Mercator meters: west, south, east, north.
public struct MercatorBoundingBox: Hashable, Sendable {
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
}
