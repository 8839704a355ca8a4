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

    /// The canvas pixel of a coordinate.
    public func point(for coordinate: Coordinate) -> PixelPoint {
        let map = MapPoint(coordinate)
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
