import Foundation
public import TileMath

/// Where coordinates land on a canvas: Web Mercator at a zoom, tile size and pixel scale,
/// with the canvas's top-left corner at `origin` (in world pixels at that zoom and scale).
///
/// The same projection draws a tile (origin at the tile's corner) and a snapshot (origin
/// at the view's corner): tiles rendered apart join without a seam because each is a
/// whole-pixel window onto the same world.
public struct MapProjection: Hashable, Sendable {
    public var zoom: Double
    public var tileSize: Int
    /// Device pixels per CSS pixel: 2 for @2x.
    public var scale: Double
    /// The canvas's top-left corner in world pixels (zoom, tileSize × scale).
    public var origin: PixelPoint

    public init(zoom: Double, tileSize: Int = 256, scale: Double = 1, origin: PixelPoint) {
        self.zoom = zoom
        self.tileSize = tileSize
        self.scale = scale
        self.origin = origin
    }

    /// The projection of one tile's canvas.
    public init(tile: TileID, tileSize: Int = 256, scale: Double = 1) {
        let size = Double(tileSize) * scale
        self.init(zoom: Double(tile.z), tileSize: tileSize, scale: scale,
                  origin: PixelPoint(x: Double(tile.x) * size, y: Double(tile.y) * size))
    }

    private var worldSize: Double { Double(tileSize) * scale * pow2(zoom) }

    /// The canvas pixel of a coordinate. Latitudes beyond Web Mercator's ±85.0511° land on
    /// the world's top or bottom edge, as Leaflet draws them: a pole is at infinity, and an
    /// infinite or NaN point would reach cairo and the pixel conversions after it.
    public func point(for coordinate: Coordinate) -> PixelPoint {
        let limit = Coordinate.maxMercatorLatitude
        let map = MapPoint(Coordinate(latitude: min(limit, max(-limit, coordinate.latitude)), longitude: coordinate.longitude))
        return PixelPoint(x: map.x * worldSize - origin.x, y: map.y * worldSize - origin.y)
    }

    /// The coordinate under a canvas pixel.
    public func coordinate(for point: PixelPoint) -> Coordinate {
        MapPoint(x: (point.x + origin.x) / worldSize, y: (point.y + origin.y) / worldSize).coordinate
    }

    /// Meters on the ground per canvas pixel at a latitude.
    public func metersPerPixel(latitude: Double) -> Double {
        Zoom.metersPerPixel(latitude: latitude, zoom: zoom, tileSize: tileSize) / scale
    }

    /// The box a canvas of this size shows, grown by `margin` pixels on every side.
    public func bounds(width: Double, height: Double, margin: Double = 0) -> BoundingBox {
        let nw = coordinate(for: PixelPoint(x: -margin, y: -margin))
        let se = coordinate(for: PixelPoint(x: width + margin, y: height + margin))
        return BoundingBox(west: nw.longitude, south: se.latitude, east: se.longitude, north: nw.latitude)
    }
}

private func pow2(_ x: Double) -> Double { Foundation.pow(2, x) }

/// Whole pixels `[low, high)` spanned by `values` (rounded outwards), clamped to
/// `0 ..< limit`; nil when nothing of it is inside, or for a NaN. Canvas coordinates
/// become indices only through this, so an infinite or NaN point cannot trap.
func pixelSpan(_ values: [Double], within limit: Int) -> Range<Int>? {
    guard !values.contains(where: \.isNaN), let low = values.min(), let high = values.max() else { return nil }
    let upper = Double(limit)
    let from = min(upper, max(0, low.rounded(.down))), to = min(upper, max(0, high.rounded(.up)))
    guard from < to else { return nil }
    return Int(from)..<Int(to)
}
