import Foundation
import TileMath

/// A path's subpaths as point lists, for `CoverageRaster`, arcs and curves flattened to
/// chords within `StrokeOutline.tolerance` as cairo flattens them. Coordinates that are not
/// finite or beyond ±1e15 px, and arcs or curves with such values, are left to cairo (nil).
/// (cairo's 24.8 fixed point wraps beyond ±8 million px and floods the canvas; these edges
/// are clipped exactly.)
struct Subpath {
    var points: [PixelPoint]
    var closed: Bool

    static let largestCoordinate = 1e15

    static func of(_ path: Path) -> [Subpath]? {
        var result = [Subpath]()
        var current: Subpath?
        var closedAt: PixelPoint?
        /// cairo: a line after a close starts at the closed subpath's start; with no current
        /// point it acts as a move.
        func line(to p: PixelPoint) {
            if current == nil {
                current = Subpath(points: closedAt.map { [$0, p] } ?? [p], closed: false)
            } else {
                current?.points.append(p)
            }
        }
        for element in path.elements {
            switch element {
            case .move(let p):
                guard p.isDrawable else { return nil }
                if let open = current { result.append(open) }
                current = Subpath(points: [p], closed: false)
            case .line(let p):
                guard p.isDrawable else { return nil }
                line(to: p)
            case .close:
                guard var closing = current else { continue }
                closing.closed = true
                result.append(closing)
                closedAt = closing.points[0]
                current = nil
            case .curve(let c1, let c2, let end):
                guard c1.isDrawable, c2.isDrawable, end.isDrawable,
                      let start = current?.points.last ?? closedAt else { return nil }
                for p in flattenedCurve(from: start, c1, c2, end) { line(to: p) }
            case .arc(let center, let radius, let startAngle, let endAngle):
                guard let points = flattenedArc(center: center, radius: radius, from: startAngle, to: endAngle) else { return nil }
                for p in points { line(to: p) }
            }
        }
        if let open = current { result.append(open) }
        return result
    }

    /// A cubic Bézier's points after `start`, enough chords that none strays more than the
    /// tolerance: the second differences bound how far a chord can bend away.
    static func flattenedCurve(from p0: PixelPoint, _ p1: PixelPoint, _ p2: PixelPoint, _ p3: PixelPoint) -> [PixelPoint] {
        let bend = max(length(p0.x - 2 * p1.x + p2.x, p0.y - 2 * p1.y + p2.y),
                       length(p1.x - 2 * p2.x + p3.x, p1.y - 2 * p2.y + p3.y))
        let steps = max(1, min(1024, Int((0.75 * bend / StrokeOutline.tolerance).squareRoot().rounded(.up))))
        return (1...steps).map { k in
            let t = Double(k) / Double(steps), u = 1 - t
            let a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t
            return PixelPoint(x: a * p0.x + b * p1.x + c * p2.x + d * p3.x, y: a * p0.y + b * p1.y + c * p2.y + d * p3.y)
        }
    }

    /// How far a path's arc's chords may stray from the circle, in pixels: half cairo's
    /// tolerance, because cairo flattens an arc's Bézier curves by halving them, which lands
    /// nearer the circle than the tolerance asks (a filled circle of radius 15 then has
    /// cairo's ink within a third of a pixel, where at 0.1 it had 2.5 pixels less).
    static let arcTolerance = 0.05

    /// An arc's points, from its start (which the path reaches by a line, or moves to) round
    /// in the direction of increasing angle, as cairo_arc draws it (`Path.arcSweep`); nil
    /// for values that are not drawable.
    static func flattenedArc(center: PixelPoint, radius: Double, from start: Double, to end: Double) -> [PixelPoint]? {
        guard center.isDrawable, radius.isFinite, radius >= 0, radius <= largestCoordinate,
              abs(start) < Path.farArcStart, let sweep = Path.arcSweep(from: start, to: end) else { return nil }
        let steps = StrokeOutline.arcSteps(sweep, radius: radius, tolerance: arcTolerance)
        return (0...steps).map { k in
            let angle = start + sweep * Double(k) / Double(steps)
            return PixelPoint(x: center.x + radius * cos(angle), y: center.y + radius * sin(angle))
        }
    }
}

extension Subpath {
    /// The subpaths without the segments that keep farther than `margin` from the rectangle
    /// `(0, 0, width, height)`: a line that leaves the canvas and comes back becomes two
    /// lines, and a ring that leaves it becomes lines. Each dropped segment has both ends
    /// beyond the margin, so the caps and round joins drawn at the new ends lie off the
    /// canvas when `margin` is more than the stroke reaches from its line. A tile's lines
    /// run on into its neighbours; this keeps the outlines (and their checks for overlaps)
    /// to the part that shows.
    static func culled(_ subpaths: [Subpath], width: Double, height: Double, margin: Double) -> [Subpath] {
        let minX = -margin, minY = -margin, maxX = width + margin, maxY = height + margin
        func inside(_ p: PixelPoint) -> Bool { p.x >= minX && p.x <= maxX && p.y >= minY && p.y <= maxY }
        /// Whether the segment's box meets the rectangle: true for every segment that does,
        /// and for a few diagonal ones that pass by a corner (kept: keeping is always safe).
        func meets(_ a: PixelPoint, _ b: PixelPoint) -> Bool {
            max(a.x, b.x) >= minX && min(a.x, b.x) <= maxX && max(a.y, b.y) >= minY && min(a.y, b.y) <= maxY
        }
        var result = [Subpath]()
        result.reserveCapacity(subpaths.count)
        for subpath in subpaths {
            let points = subpath.points
            if points.count < 2 || points.allSatisfy(inside) {
                result.append(subpath)
                continue
            }
            let count = points.count, segments = subpath.closed ? count : count - 1
            // A ring is read from just after a dropped segment, so no run wraps round its start.
            var start = 0
            if subpath.closed {
                guard let dropped = (0..<count).first(where: { !meets(points[$0], points[($0 + 1) % count]) }) else {
                    result.append(subpath)
                    continue
                }
                start = (dropped + 1) % count
            }
            var run = [PixelPoint]()
            for k in 0..<segments {
                let a = points[(start + k) % count], b = points[(start + k + 1) % count]
                if meets(a, b) {
                    if run.isEmpty { run.append(a) }
                    run.append(b)
                } else if !run.isEmpty {
                    result.append(Subpath(points: run, closed: false))
                    run.removeAll(keepingCapacity: true)
                }
            }
            if !run.isEmpty { result.append(Subpath(points: run, closed: false)) }
        }
        return result
    }
}

extension PixelPoint {
    var isDrawable: Bool {
        x.isFinite && y.isFinite && abs(x) <= Subpath.largestCoordinate && abs(y) <= Subpath.largestCoordinate
    }
}
