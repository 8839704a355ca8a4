import Foundation
public import Canvas
import TileMath
public import Features

/// Water as a cartographer's pen draws it: a pale wash, diagonal hatching, an ink edge.
/// The hatching is anchored to world pixels, so it runs on across tile edges.
public struct HatchRenderer: OverlayRenderer {
    public var spacing: Double

    public init(spacing: Double = 6) {
        self.spacing = spacing
    }

    public func draw(_ feature: Feature, on canvas: Canvas, projection: MapProjection) {
        guard let rings = feature.geometry?.polygonRings else { return }
        let scale = projection.scale
        let path = Path.polygon(rings.map { $0.map(projection.point(for:)) })
        let ink = feature.style.stroke ?? Color(hex: "#3d5a80")!
        canvas.fill(path, with: .color((feature.style.fill ?? Color(hex: "#c9dbe6")!).withAlpha(feature.style.fillOpacity ?? 0.9)), rule: .evenOdd)
        // A spacing under half a pixel (or not a number) would draw lines without end.
        guard spacing.isFinite, spacing * scale >= 0.5 else { return }
        let step = spacing * scale
        let size = Double(max(canvas.width, canvas.height))
        // Lines x - y = k·step in world pixels, shifted into this canvas.
        let shift = (projection.origin.x - projection.origin.y).truncatingRemainder(dividingBy: step)
        canvas.withClip(path, rule: .evenOdd) {
            var lines = [Path]()
            var k = -size - shift
            while k < size {
                lines.append(.polyline([PixelPoint(x: k, y: 0), PixelPoint(x: k + size, y: size)]))
                k += step
            }
            for line in lines { canvas.stroke(line, with: .color(ink.withAlpha(0.55)), style: StrokeStyle(width: 0.8 * scale)) }
        }
        canvas.stroke(path, with: .color(ink), style: StrokeStyle(width: (feature.style.strokeWidth ?? 1.6) * scale, join: .round))
    }
}

/// A path drawn by hand: the line wanders a little either side of its true course, the
/// same way in every tile (the wobble is a function of world position, not of the tile).
public struct WobblyLineRenderer: OverlayRenderer {
    public var amplitude: Double
    public var wavelength: Double

    public init(amplitude: Double = 1.4, wavelength: Double = 23) {
        self.amplitude = amplitude
        self.wavelength = wavelength
    }

    public func draw(_ feature: Feature, on canvas: Canvas, projection: MapProjection) {
        let lines: [[Coordinate]]
        switch feature.geometry {
        case .lineString(let cs): lines = [cs]
        case .multiLineString(let ls): lines = ls
        case let geometry?: guard let rings = geometry.polygonRings else { return }; lines = rings
        case nil: return
        }
        let scale = projection.scale
        let style = StrokeStyle(width: (feature.style.strokeWidth ?? 1.5) * scale, cap: .round, join: .round,
                                dash: (feature.style.dash ?? []).map { $0 * scale })
        let ink = (feature.style.stroke ?? Color(hex: "#5b3a1e")!).withAlpha(feature.style.strokeOpacity ?? 1)
        // Only the samples near the canvas are made: a line across the world at zoom 22 is a
        // billion pixels long. Samples sit at fixed fractions of each segment, so tiles rendered
        // apart still share them; a path that leaves the canvas ends there and starts anew.
        let margin = style.width / 2 + 1.5 * amplitude * scale + 6 * scale + 2
        let area = (x0: -margin, y0: -margin, x1: Double(canvas.width) + margin, y1: Double(canvas.height) + margin)
        for line in lines {
            let points = line.map(projection.point(for:))
            guard points.count >= 2 else { continue }
            var wobbly = [PixelPoint]()
            func flush() {
                if wobbly.count >= 2 { canvas.stroke(.polyline(wobbly), with: .color(ink), style: style) }
                wobbly.removeAll()
            }
            for (index, (a, b)) in zip(points, points.dropFirst()).enumerated() {
                let dx = b.x - a.x, dy = b.y - a.y, length = hypot(dx, dy)
                guard length.isFinite else { flush(); continue }
                let steps = max(1, Int(min(length / (6 * scale), Double(1 << 40))))
                let nx = length > 0 ? -dy / length : 0, ny = length > 0 ? dx / length : 0
                func sample(_ i: Int) -> PixelPoint {
                    let f = Double(i) / Double(steps)
                    let x = a.x + dx * f, y = a.y + dy * f
                    // World-pixel phase: tiles agree on the wobble along a shared edge.
                    let wx = (x + projection.origin.x) / scale, wy = (y + projection.origin.y) / scale
                    let offset = amplitude * scale * (sin((wx + wy) / wavelength) + 0.5 * sin((wx - 2 * wy) / (wavelength * 0.43)))
                    return PixelPoint(x: x + nx * offset, y: y + ny * offset)
                }
                guard let (t0, t1) = clip(a, b, to: area) else {
                    // Off the canvas: the path goes as far as this segment's start, then stops.
                    wobbly.append(sample(0))
                    flush()
                    continue
                }
                let lower = max(0, Int((t0 * Double(steps)).rounded(.down)) - 1)
                let upper = min(steps, Int((t1 * Double(steps)).rounded(.up)) + 1)
                if lower > 0 { flush() }
                for i in lower..<upper { wobbly.append(sample(i)) }
                if upper < steps {
                    wobbly.append(sample(upper))
                    flush()
                } else if index == points.count - 2 {
                    wobbly.append(b)
                }
            }
            flush()
        }
    }

    /// The part of segment a→b inside a rectangle, as fractions along it (Liang-Barsky);
    /// nil when none of it is.
    func clip(_ a: PixelPoint, _ b: PixelPoint, to area: (x0: Double, y0: Double, x1: Double, y1: Double)) -> (Double, Double)? {
        var t0 = 0.0, t1 = 1.0
        let dx = b.x - a.x, dy = b.y - a.y
        for (p, q) in [(-dx, a.x - area.x0), (dx, area.x1 - a.x), (-dy, a.y - area.y0), (dy, area.y1 - a.y)] {
            if p == 0 {
                if q < 0 { return nil }
            } else {
                let t = q / p
                if p < 0 { t0 = max(t0, t) } else { t1 = min(t1, t) }
            }
        }
        return t0 <= t1 ? (t0, t1) : nil
    }
}
