import Foundation

/// One tile of the slippy-map pyramid: zoom `z`, column `x` from the west, row `y` from
/// the north (XYZ, as OpenStreetMap, Google and MapKit name them).
///
/// See https://wiki.openstreetmap.org/wiki/Slippy_map_tilenames. At zoom z there are
/// 2^z × 2^z tiles; `x` and `y` lie in [0, 2^z - 1]. MBTiles and TMS count rows from the
/// south instead: that is `tmsY`.
public struct TileID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let z: Int
    public let x: Int
    public let y: Int

    /// The deepest zoom TileKit handles: 2^30 tiles a side (~4 cm per 256 px tile pixel).
    public static let maxZoom = 30

    /// Makes a tile that is known to be valid (a precondition); use `init(validating:)` for input.
    public init(z: Int, x: Int, y: Int) {
        precondition(Self.isValid(z: z, x: x, y: y), "tile \(z)/\(x)/\(y) is outside the pyramid")
        self.z = z
        self.x = x
        self.y = y
    }

    /// Makes a tile from untrusted values, throwing an error that names the bad one.
    public init(validating z: Int, x: Int, y: Int) throws(TileMathError) {
        guard (0...Self.maxZoom).contains(z) else { throw .invalidZoom(z) }
        let limit = (1 << z) - 1
        guard (0...limit).contains(x) else {
            throw .invalidTile(z: z, x: x, y: y, reason: "x \(x) is out of range [0, \(limit)] at zoom \(z)")
        }
        guard (0...limit).contains(y) else {
            throw .invalidTile(z: z, x: x, y: y, reason: "y \(y) is out of range [0, \(limit)] at zoom \(z)")
        }
        self.init(z: z, x: x, y: y)
    }

    /// Makes a tile from a TMS row (counted from the south), as MBTiles stores it.
    public init(z: Int, x: Int, tmsY: Int) {
        self.init(z: z, x: x, y: (1 << z) - 1 - tmsY)
    }

    public static func isValid(z: Int, x: Int, y: Int) -> Bool {
        guard (0...maxZoom).contains(z) else { return false }
        let count = 1 << z
        return x >= 0 && x < count && y >= 0 && y < count
    }

    /// Tiles per side at this tile's zoom.
    public var tilesPerSide: Int { 1 << z }

    /// The row counted from the south (TMS, MBTiles `tile_row`).
    public var tmsY: Int { (1 << z) - 1 - y }

    /// The tile that contains a coordinate at a zoom (mercantile `tile`).
    ///
    /// Points within 1e-14 of a tile's east or south edge count as the next tile, as
    /// mercantile does, so that a tile's own corner maps back to that tile despite the
    /// rounding of the round trip. Positions outside the Mercator square clamp to the
    /// edge tiles.
    public init(containing coordinate: Coordinate, zoom: Int) {
        precondition((0...Self.maxZoom).contains(zoom), "zoom \(zoom) is out of range")
        let point = MapPoint(coordinate)
        let count = Double(1 << zoom)
        func index(_ value: Double) -> Int {
            if value.isNaN || value <= 0 { return 0 }
            if value >= 1 { return Int(count - 1) }
            return min(Int(((value + 1e-14) * count).rounded(.down)), Int(count - 1))
        }
        self.init(z: zoom, x: index(point.x), y: index(point.y))
    }

    /// The north-west corner in degrees (mercantile `ul`).
    public var northWest: Coordinate {
        MapPoint(x: Double(x) / Double(tilesPerSide), y: Double(y) / Double(tilesPerSide)).coordinate
    }

    /// The tile's extent in degrees (mercantile `bounds`).
    public var bounds: BoundingBox {
        let n = Double(tilesPerSide)
        let nw = MapPoint(x: Double(x) / n, y: Double(y) / n).coordinate
        let se = MapPoint(x: Double(x + 1) / n, y: Double(y + 1) / n).coordinate
        return BoundingBox(west: nw.longitude, south: se.latitude, east: se.longitude, north: nw.latitude)
    }

    /// The tile's extent in Web Mercator meters (mercantile `xy_bounds`).
    public var mercatorBounds: MercatorBoundingBox {
        let size = MercatorPoint.earthCircumference / Double(tilesPerSide)
        let left = Double(x) * size - MercatorPoint.extent
        let top = MercatorPoint.extent - Double(y) * size
        return MercatorBoundingBox(west: left, south: top - size, east: left + size, north: top)
    }

    /// Ordered by zoom, then x, then y.
    public static func < (a: TileID, b: TileID) -> Bool {
        (a.z, a.x, a.y) < (b.z, b.x, b.y)
    }

    /// `z/x/y`.
    public var description: String { "\(z)/\(x)/\(y)" }

    /// Parses `z/x/y`, throwing an error that names the bad part.
    public init(parsing text: some StringProtocol) throws(TileMathError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .invalidTile(z: -1, x: -1, y: -1, reason: "\"\(text)\" is not of the form Z/X/Y")
        }
        guard let z = Int(parts[0]), let x = Int(parts[1]), let y = Int(parts[2]) else {
            throw .invalidTile(z: -1, x: -1, y: -1, reason: "\"\(text)\" is not of the form Z/X/Y with whole numbers")
        }
        try self.init(validating: z, x: x, y: y)
    }
}
