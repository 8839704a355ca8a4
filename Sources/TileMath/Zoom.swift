import Foundation

/// Zoom levels and ground resolution.
public enum Zoom {
    /// Meters on the ground per pixel at a latitude, zoom and tile size: the equator's length
    /// over the world's width in pixels, shrunk by cos(latitude) as Mercator stretches.
    public static func metersPerPixel(latitude: Double, zoom: Double, tileSize: Int = 256) -> Double {
        cos(latitude.radians) * MercatorPoint.earthCircumference / (Double(tileSize) * pow(2, zoom))
    }

    /// The largest (fractional) zoom at which the box fits in a viewport of `size` pixels
    /// less `padding` on every side, as Leaflet's `getBoundsZoom`. Floor it for a whole zoom.
    /// A box of zero size (a single point) gets `maxZoom`.
    public static func fitting(_ box: BoundingBox, in size: PixelSize, padding: Double = 0,
                               tileSize: Int = 256, maxZoom: Double = 22) -> Double {
        let nw = MapPoint(Coordinate(latitude: min(box.north, Coordinate.maxMercatorLatitude), longitude: box.west))
        let se = MapPoint(Coordinate(latitude: max(box.south, -Coordinate.maxMercatorLatitude), longitude: box.west + box.longitudeSpan))
        let spanX = se.x - nw.x, spanY = se.y - nw.y
        let width = max(1, size.width - 2 * padding), height = max(1, size.height - 2 * padding)
        guard spanX > 0 || spanY > 0 else { return maxZoom }
        let zoomX = spanX > 0 ? log2(width / (spanX * Double(tileSize))) : maxZoom
        let zoomY = spanY > 0 ? log2(height / (spanY * Double(tileSize))) : maxZoom
        return min(maxZoom, max(0, min(zoomX, zoomY)))
    }

    /// The whole zoom at which one pixel of a 256 (or `tileSize`) px tile is closest to,
    /// but no coarser than, `metersPerPixel` at `latitude`.
    public static func matching(metersPerPixel: Double, latitude: Double = 0, tileSize: Int = 256) -> Int {
        let atZoomZero = Self.metersPerPixel(latitude: latitude, zoom: 0, tileSize: tileSize)
        return max(0, min(TileID.maxZoom, Int(log2(atZoomZero / metersPerPixel).rounded(.up))))
    }
}
