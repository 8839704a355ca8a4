import Foundation

/// A position on the world as a unit square: `x` from 0 at 180°W to 1 at 180°E, `y` from
/// 0 at the north edge (85.0511°N) to 1 at the south edge, y down like a screen.
///
/// Pixels at zoom z and tile size s are `MapPoint × s × 2^z`; a tile is a 1/2^z square.
public struct MapPoint: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// Projects a coordinate. Latitudes beyond the Mercator limit land outside [0, 1]
    /// (the poles at ±infinity); callers that need a tile clamp.
    public init(_ coordinate: Coordinate) {
        x = coordinate.longitude / 360.0 + 0.5
        let sinLatitude = sin(coordinate.latitude.radians)
        y = 0.5 - 0.25 * log((1.0 + sinLatitude) / (1.0 - sinLatitude)) / .pi
    }

    public init(_ point: MercatorPoint) {
        x = point.easting / MercatorPoint.earthCircumference + 0.5
        y = 0.5 - point.northing / MercatorPoint.earthCircumference
    }

    public var coordinate: Coordinate {
        Coordinate(latitude: atan(sinh(.pi * (1 - 2 * y))).degrees, longitude: x * 360.0 - 180.0)
    }

    public var mercator: MercatorPoint {
        MercatorPoint(easting: (x - 0.5) * MercatorPoint.earthCircumference,
                      northing: (0.5 - y) * MercatorPoint.earthCircumference)
    }

    /// Pixel position at a (possibly fractional) zoom and tile size.
    public func pixel(zoom: Double, tileSize: Int = 256) -> PixelPoint {
        let scale = Double(tileSize) * pow(2, zoom)
        return PixelPoint(x: x * scale, y: y * scale)
    }

    public init(pixel: PixelPoint, zoom: Double, tileSize: Int = 256) {
        let scale = Double(tileSize) * pow(2, zoom)
        self.init(x: pixel.x / scale, y: pixel.y / scale)
    }
}

/// A position in pixels at some zoom and tile size, origin at the north-west corner of
/// the world (or of an image, where the context says so), y down.
public struct PixelPoint: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// A size in pixels.
public struct PixelSize: Hashable, Sendable {
    public var width: Double
    public var height: Double
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}

extension Coordinate {
    /// Pixel position of this coordinate at a zoom and tile size (256 or 512).
    public func pixel(zoom: Double, tileSize: Int = 256) -> PixelPoint {
        MapPoint(self).pixel(zoom: zoom, tileSize: tileSize)
    }

    public init(pixel: PixelPoint, zoom: Double, tileSize: Int = 256) {
        self = MapPoint(pixel: pixel, zoom: zoom, tileSize: tileSize).coordinate
    }
}
