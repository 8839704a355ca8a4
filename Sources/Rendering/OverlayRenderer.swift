import Foundation
public import Canvas
import TileMath
public import Features

/// Draws one feature its own way, as `MKOverlayRenderer.draw(_:zoomScale:in:)` does: the
/// canvas and the projection are given, the renderer draws. A feature chooses one by name
/// with its `renderer` property.
public protocol OverlayRenderer: Sendable {
    func draw(_ feature: Feature, on canvas: Canvas, projection: MapProjection)
}

extension Geometry {
    /// The rings of a polygon or multipolygon (outer and holes, all polygons' together, for
    /// an even-odd fill), nil for other geometries.
    var polygonRings: [[Coordinate]]? {
        switch self {
        case .polygon(let rings): return rings
        case .multiPolygon(let polygons): return polygons.flatMap { $0 }
        default: return nil
        }
    }
}

/// The MapKit tutorial's reservoir: the polygon filled with its colour, and a band of light
/// sliding across it. `phase` in [0, 1) moves the band; a viewer animates it.
public struct ShimmerRenderer: OverlayRenderer {
    public var phase: Double
    public var color: Color?

    public init(phase: Double = 0, color: Color? = nil) {
        self.phase = phase
        self.color = color
    }

    public func draw(_ feature: Feature, on canvas: Canvas, projection: MapProjection) {
        guard let rings = feature.geometry?.polygonRings else { return }
        let path = Path.polygon(rings.map { $0.map(projection.point(for:)) })
        let base = color ?? feature.style.fill ?? Color(hex: "#3b6ea5")!
        canvas.fill(path, with: .color(base), rule: .evenOdd)
        // The band repeats along the diagonal d, anchored in world pixels so tiles rendered
        // apart continue it; the world offset is reduced modulo d (cairo's fixed point cannot
        // take world coordinates at deep zooms), and the phase slides it along d.
        let period = 160 * projection.scale
        let d = (x: period, y: period * 0.6)
        let t = (projection.origin.x * d.x + projection.origin.y * d.y) / (d.x * d.x + d.y * d.y)
        let along = (phase - phase.rounded(.down)) - (t - t.rounded(.down))
        let start = PixelPoint(x: along * d.x, y: along * d.y)
        let end = PixelPoint(x: start.x + d.x, y: start.y + d.y)
        let light = Color.white
        canvas.fill(path, with: .linearGradient(start: start, end: end, stops: [
            GradientStop(0, light.withAlpha(0)), GradientStop(0.45, light.withAlpha(0)), GradientStop(0.5, light.withAlpha(0.45)),
            GradientStop(0.55, light.withAlpha(0)), GradientStop(1, light.withAlpha(0)),
        ], extend: .repeat), rule: .evenOdd)
        canvas.stroke(path, with: .color(feature.style.stroke ?? base), style: StrokeStyle(width: (feature.style.strokeWidth ?? 1.5) * projection.scale))
    }
}

/// A line whose colour changes from its first point to its last (a route's progress, a
/// slope's steepness): each segment stroked with the gradient between its ends.
public struct GradientPolylineRenderer: OverlayRenderer {
    public var from: Color
    public var to: Color

    public init(from: Color = Color(hex: "#2e7d32")!, to: Color = Color(hex: "#c62828")!) {
        self.from = from
        self.to = to
    }

    public func draw(_ feature: Feature, on canvas: Canvas, projection: MapProjection) {
        guard case .lineString(let coordinates) = feature.geometry, coordinates.count >= 2 else { return }
        let points = coordinates.map(projection.point(for:))
        var lengths = [0.0]
        for (a, b) in zip(points, points.dropFirst()) { lengths.append(lengths.last! + hypot(b.x - a.x, b.y - a.y)) }
        let total = max(lengths.last!, 1e-9)
        func mix(_ t: Double) -> Color {
            Color(red: from.red + (to.red - from.red) * t, green: from.green + (to.green - from.green) * t,
                  blue: from.blue + (to.blue - from.blue) * t, alpha: from.alpha + (to.alpha - from.alpha) * t)
        }
        let style = StrokeStyle(width: (feature.style.strokeWidth ?? 4) * projection.scale, cap: .round, join: .round)
        for i in 0..<(points.count - 1) {
            canvas.stroke(.polyline([points[i], points[i + 1]]), with: .linearGradient(
                start: points[i], end: points[i + 1], stops: [GradientStop(0, mix(lengths[i] / total)), GradientStop(1, mix(lengths[i + 1] / total))]),
                style: style)
        }
    }
}
