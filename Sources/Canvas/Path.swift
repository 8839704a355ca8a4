import Foundation
public import TileMath

/// A 2-D path in canvas pixels (origin top-left, y down): subpaths of lines and curves.
/// A value; the canvas turns it into cairo calls when it is filled or stroked.
public struct Path: Hashable, Sendable {
    public enum Element: Hashable, Sendable {
        case move(PixelPoint)
        case line(PixelPoint)
        case curve(control1: PixelPoint, control2: PixelPoint, end: PixelPoint)
        /// A circular arc around `center`, angles in radians clockwise from +x (y down).
        case arc(center: PixelPoint, radius: Double, startAngle: Double, endAngle: Double)
        case close
    }

    public private(set) var elements: [Element] = []

    public init() {}

    public var isEmpty: Bool { elements.isEmpty }

    public mutating func move(to point: PixelPoint) { elements.append(.move(point)) }
    public mutating func line(to point: PixelPoint) { elements.append(.line(point)) }
    public mutating func curve(to end: PixelPoint, control1: PixelPoint, control2: PixelPoint) {
        elements.append(.curve(control1: control1, control2: control2, end: end))
    }
    public mutating func arc(center: PixelPoint, radius: Double, startAngle: Double, endAngle: Double) {
        elements.append(.arc(center: center, radius: radius, startAngle: startAngle, endAngle: endAngle))
    }
    public mutating func close() { elements.append(.close) }

    /// Appends another path's subpaths.
    public mutating func append(_ other: Path) { elements.append(contentsOf: other.elements) }

    /// An open polyline through the points.
    public static func polyline(_ points: [PixelPoint]) -> Path {
        var path = Path()
        for (index, point) in points.enumerated() {
            if index == 0 { path.move(to: point) } else { path.line(to: point) }
        }
        return path
    }

    /// A polygon: each ring a closed subpath (the exterior, then holes). Whether a hole is
    /// cut depends on the fill rule and ring orientation: with `.evenOdd` any inner ring is
    /// a hole; with `.nonZero` only one wound the other way.
    public static func polygon(_ rings: [[PixelPoint]]) -> Path {
        var path = Path()
        for ring in rings where !ring.isEmpty {
            path.append(.polyline(ring))
            path.close()
        }
        return path
    }

    public static func rectangle(x: Double, y: Double, width: Double, height: Double) -> Path {
        polygon([[PixelPoint(x: x, y: y), PixelPoint(x: x + width, y: y),
                  PixelPoint(x: x + width, y: y + height), PixelPoint(x: x, y: y + height)]])
    }

    public static func circle(center: PixelPoint, radius: Double) -> Path {
        var path = Path()
        path.move(to: PixelPoint(x: center.x + radius, y: center.y))
        path.arc(center: center, radius: radius, startAngle: 0, endAngle: 2 * .pi)
        path.close()
        return path
    }

    /// What a stroke of `width` along the circle covers, as two circles to fill with the
    /// even-odd rule. Filled, a marker's ring is two rings the canvas's rasterizer draws
    /// exactly, the same on a tile as on a larger canvas; stroked, a small circle's band
    /// overlaps itself where it turns (or, cut at a tile's edge, is drawn in pieces).
    public static func ring(center: PixelPoint, radius: Double, width: Double) -> Path {
        var path = circle(center: center, radius: radius + width / 2)
        if radius > width / 2 { path.elements += circle(center: center, radius: radius - width / 2).elements }
        return path
    }

    /// The path with every point mapped through a transform (arcs become their transformed
    /// Bézier approximations only when the transform is not a similarity; here arcs keep
    /// their shape under uniform scale, rotation and translation).
    public func applying(_ transform: AffineTransform) -> Path {
        var out = Path()
        out.elements = elements.map { element in
            switch element {
            case .move(let p): return .move(transform.apply(p))
            case .line(let p): return .line(transform.apply(p))
            case .curve(let c1, let c2, let e): return .curve(control1: transform.apply(c1), control2: transform.apply(c2), end: transform.apply(e))
            case .arc(let c, let r, let a0, let a1):
                let scale = sqrt(abs(transform.a * transform.d - transform.b * transform.c))
                let rotation = atan2(transform.b, transform.a)
                return .arc(center: transform.apply(c), radius: r * scale, startAngle: a0 + rotation, endAngle: a1 + rotation)
            case .close: return .close
            }
        }
        return out
    }
}

extension Path {
    /// How far an arc from `start` to `end` turns, as cairo_arc reads them (the end moved on
    /// by whole turns until it is past the start), but never more than one turn: cairo
    /// draws n turns as n circles, one segment at a time (minutes for an angle of 1e12,
    /// forever once adding a turn no longer changes it). nil when an angle is not finite.
    static func arcSweep(from start: Double, to end: Double) -> Double? {
        guard start.isFinite, end.isFinite else { return nil }
        let sweep = end - start
        guard sweep.isFinite else { return 2 * .pi }
        if sweep >= 0 { return min(sweep, 2 * .pi) }
        let remainder = sweep.truncatingRemainder(dividingBy: 2 * .pi)
        return remainder == 0 ? 0 : remainder + 2 * .pi
    }

    /// Arc starts this many radians out or more are not taken as given: the canvas's own
    /// rasterizer leaves such arcs to cairo (`Subpath.flattenedArc`), and cairo gets the
    /// start's remainder of a turn (`Canvas.setPath`), the same arc.
    static let farArcStart = 1e6
}

/// How overlapping subpaths decide what is inside (SVG's fill-rule).
public enum FillRule: Hashable, Sendable {
    case nonZero, evenOdd
}
