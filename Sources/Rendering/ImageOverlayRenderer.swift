import Foundation
public import Canvas
import TileMath
public import Features

/// Draws an image laid on the map, warped correctly into Web Mercator: every canvas pixel
/// is taken back to its coordinate, then to its place in the image, and sampled there
/// (bilinear, premultiplied). A box is a plate carrée image (its rows are evenly spaced in
/// degrees, not in Mercator); corners pin the image's four corners, the image spanning them
/// bilinearly in degrees. Exact at any zoom, and seamless across tiles.
public enum ImageOverlayRenderer {
    public static func draw(_ image: RGBAImage, placement: ImageOverlay.Placement, opacity: Double,
                            on canvas: Canvas, projection: MapProjection) {
        let corners: (Coordinate, Coordinate, Coordinate, Coordinate)
        switch placement {
        case .box(let b):
            let east = b.crossesAntimeridian ? b.east + 360 : b.east
            corners = (Coordinate(latitude: b.north, longitude: b.west), Coordinate(latitude: b.north, longitude: east),
                       Coordinate(latitude: b.south, longitude: east), Coordinate(latitude: b.south, longitude: b.west))
        case .corners(let tl, let tr, let br, let bl):
            corners = (tl, tr, br, bl)
        }
        // The canvas pixels the overlay can touch (the projection holds latitudes to Mercator's
        // limit: a world image reaches ±90°, which Mercator puts at infinity).
        let points = [corners.0, corners.1, corners.2, corners.3].map(projection.point(for:))
        guard let columns = pixelSpan(points.map(\.x), within: canvas.width), let rows = pixelSpan(points.map(\.y), within: canvas.height) else { return }
        let minX = columns.lowerBound, minY = rows.lowerBound
        let width = columns.count, height = rows.count
        var out = [UInt8](repeating: 0, count: width * height * 4)
        let inverse = InverseBilinear(corners.0, corners.1, corners.2, corners.3)
        let box: (west: Double, north: Double, lonSpan: Double, latSpan: Double)?
        if case .box(let b) = placement { box = (b.west, b.north, b.longitudeSpan, b.latitudeSpan) } else { box = nil }
        image.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    for x in 0..<width {
                        var c = projection.coordinate(for: PixelPoint(x: Double(minX + x) + 0.5, y: Double(minY + y) + 0.5))
                        let uv: (Double, Double)?
                        if let box {
                            if c.longitude < box.west { c.longitude += 360 }
                            uv = ((c.longitude - box.west) / box.lonSpan, (box.north - c.latitude) / box.latSpan)
                        } else {
                            uv = inverse.parameters(of: c)
                        }
                        guard let (u, v) = uv, u >= 0, u <= 1, v >= 0, v <= 1 else { continue }
                        sample(src, image.width, image.height, u * Double(image.width) - 0.5, v * Double(image.height) - 0.5,
                               into: dst, at: (y * width + x) * 4)
                    }
                }
            }
        }
        canvas.draw(RGBAImage(width: width, height: height, pixels: out), x: Double(minX), y: Double(minY),
                    width: Double(width), height: Double(height), opacity: opacity, interpolation: .nearest)
    }

    /// Bilinear sample at image pixel position (x, y) (pixel centres at integers), edges clamped,
    /// interpolating premultiplied colour so transparent neighbours do not darken edges.
    /// The caller keeps (x, y) within the image (give or take half a pixel).
    static func sample(_ src: UnsafeBufferPointer<UInt8>, _ w: Int, _ h: Int, _ x: Double, _ y: Double,
                       into dst: UnsafeMutableBufferPointer<UInt8>, at o: Int) {
        guard x.isFinite, y.isFinite, abs(x) <= Double(w) + 1, abs(y) <= Double(h) + 1 else { return }
        let x0 = Int(x.rounded(.down)), y0 = Int(y.rounded(.down))
        let fx = x - Double(x0), fy = y - Double(y0)
        var r = 0.0, g = 0.0, b = 0.0, a = 0.0
        for (dx, dy, weight) in [(0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)] where weight > 0 {
            let i = ((min(max(y0 + dy, 0), h - 1)) * w + min(max(x0 + dx, 0), w - 1)) * 4
            let alpha = Double(src[i + 3]) * weight
            r += Double(src[i]) * alpha; g += Double(src[i + 1]) * alpha; b += Double(src[i + 2]) * alpha; a += alpha
        }
        guard a > 0 else { return }
        dst[o] = UInt8(min(255, (r / a).rounded())); dst[o + 1] = UInt8(min(255, (g / a).rounded()))
        dst[o + 2] = UInt8(min(255, (b / a).rounded())); dst[o + 3] = UInt8(min(255, a.rounded()))
    }
}

/// The (u, v) in [0, 1]² of a point inside a quadrilateral, inverting
/// P = A + (B − A)u + (D − A)v + (A − B + C − D)uv, in degrees (A top-left, B top-right,
/// C bottom-right, D bottom-left).
struct InverseBilinear {
    let a: (Double, Double), e: (Double, Double), f: (Double, Double), g: (Double, Double)

    init(_ tl: Coordinate, _ tr: Coordinate, _ br: Coordinate, _ bl: Coordinate) {
        a = (tl.longitude, tl.latitude)
        e = (tr.longitude - tl.longitude, tr.latitude - tl.latitude)
        f = (bl.longitude - tl.longitude, bl.latitude - tl.latitude)
        g = (tl.longitude - tr.longitude + br.longitude - bl.longitude, tl.latitude - tr.latitude + br.latitude - bl.latitude)
    }

    func parameters(of c: Coordinate) -> (Double, Double)? {
        func cross(_ p: (Double, Double), _ q: (Double, Double)) -> Double { p.0 * q.1 - p.1 * q.0 }
        let h = (c.longitude - a.0, c.latitude - a.1)
        let k2 = cross(g, f), k1 = cross(e, f) + cross(h, g), k0 = cross(h, e)
        var v: Double
        if abs(k2) < 1e-18 {
            guard abs(k1) > 1e-18 else { return nil }
            v = -k0 / k1
        } else {
            let discriminant = k1 * k1 - 4 * k0 * k2
            guard discriminant >= 0 else { return nil }
            let w = discriminant.squareRoot()
            v = (-k1 - w) / (2 * k2)
            if v < 0 || v > 1 { v = (-k1 + w) / (2 * k2) }
        }
        let denominatorX = e.0 + g.0 * v, denominatorY = e.1 + g.1 * v
        let u = abs(denominatorX) > abs(denominatorY) ? (h.0 - f.0 * v) / denominatorX : (h.1 - f.1 * v) / denominatorY
        return (u, v)
    }
}
