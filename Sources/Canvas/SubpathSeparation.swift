import Foundation
import TileMath

/// Whether a path's parts keep clear of each other, which is when `CoverageRaster`'s summed
/// coverage is exact: it adds up what every edge winds, so a pixel where a part wound twice
/// meets the outside (a stroke crossing itself, a hole touching its outer ring) would count
/// its edge twice. Paths that fail are drawn by cairo, which counts windings per sub-row.
extension Subpath {
    /// Paths of more segments are not checked (the check is quadratic): cairo draws them.
    static let maximumSegments = 256

    /// The subpaths with repeated points dropped (the closing point of a closed one too).
    /// Points closer than `samePoint` in both axes count as one: a circle's arc ends where it
    /// began only up to rounding (sin 2π is not 0), and a closing segment a femtopixel long
    /// touches its neighbours, so the ring failed `fillsExactly` and went to cairo.
    static func deduplicated(_ subpaths: [Subpath]) -> [Subpath] {
        func same(_ a: PixelPoint, _ b: PixelPoint?) -> Bool {
            guard let b else { return false }
            return abs(a.x - b.x) <= samePoint && abs(a.y - b.y) <= samePoint
        }
        return subpaths.map { subpath in
            var points = [PixelPoint]()
            points.reserveCapacity(subpath.points.count)
            for point in subpath.points where !same(point, points.last) { points.append(point) }
            if subpath.closed, points.count > 1, same(points[0], points.last) { points.removeLast() }
            return Subpath(points: points, closed: subpath.closed)
        }
    }

    /// A billionth of a pixel: the `reach` of `fillsExactly`, far below any coverage's rounding.
    static let samePoint = 1e-9

    /// The rings of a fill (deduplicated) fill exactly: no ring crosses or touches itself,
    /// and rings stay 1.5 px apart (more than a pixel's diagonal), so no pixel holds two
    /// rings' edges.
    static func fillsExactly(_ rings: [Subpath]) -> Bool {
        separated(rings.map { Subpath(points: $0.points, closed: true) }, reach: samePoint, otherSubpathReach: 1.5)
    }

    /// True when no two segments that do not share a vertex come within `reach` of each
    /// other (for a stroke, twice its reach from its line, so it cannot overlap itself), or
    /// within `otherSubpathReach` when they belong to different subpaths. A subpath of one
    /// point counts as a segment of no length. The subpaths have no repeated points.
    static func separated(_ subpaths: [Subpath], reach: Double, otherSubpathReach: Double) -> Bool {
        var segments = [(a: PixelPoint, b: PixelPoint, path: Int, index: Int, count: Int, closed: Bool)]()
        for (path, subpath) in subpaths.enumerated() {
            let points = subpath.points, count = subpath.closed && points.count > 2 ? points.count : points.count - 1
            guard count > 0 else {
                if let point = points.first { segments.append((point, point, path, 0, 1, false)) }
                continue
            }
            for index in 0..<count {
                segments.append((points[index], points[(index + 1) % points.count], path, index, count, subpath.closed))
            }
            guard segments.count <= maximumSegments else { return false }
        }
        let widest = max(reach, otherSubpathReach)
        for i in segments.indices {
            let s = segments[i]
            let box = (minX: min(s.a.x, s.b.x) - widest, maxX: max(s.a.x, s.b.x) + widest,
                       minY: min(s.a.y, s.b.y) - widest, maxY: max(s.a.y, s.b.y) + widest)
            for j in (i + 1)..<segments.count {
                let t = segments[j]
                let samePath = t.path == s.path
                if samePath, t.index - s.index <= 1 || (s.closed && s.index == 0 && t.index == s.count - 1) { continue }
                guard max(t.a.x, t.b.x) >= box.minX, min(t.a.x, t.b.x) <= box.maxX,
                      max(t.a.y, t.b.y) >= box.minY, min(t.a.y, t.b.y) <= box.maxY else { continue }
                if distance(s.a, s.b, t.a, t.b) < (samePath ? reach : otherSubpathReach) { return false }
            }
        }
        return true
    }

    /// The length of (dx, dy). Not `hypot`, which guards against overflow at twice the cost:
    /// coordinates here are within ±1e15, so their squares are far from it.
    @inline(__always)
    static func length(_ dx: Double, _ dy: Double) -> Double { (dx * dx + dy * dy).squareRoot() }

    /// The distance between two segments (0 when they cross).
    static func distance(_ a: PixelPoint, _ b: PixelPoint, _ c: PixelPoint, _ d: PixelPoint) -> Double {
        func side(_ p: PixelPoint, _ q: PixelPoint, _ r: PixelPoint) -> Double { (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x) }
        let d1 = side(a, b, c), d2 = side(a, b, d), d3 = side(c, d, a), d4 = side(c, d, b)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) { return 0 }
        func toSegment(_ p: PixelPoint, _ u: PixelPoint, _ v: PixelPoint) -> Double {
            let dx = v.x - u.x, dy = v.y - u.y, lengthSquared = dx * dx + dy * dy
            let t = lengthSquared > 0 ? max(0, min(1, ((p.x - u.x) * dx + (p.y - u.y) * dy) / lengthSquared)) : 0
            return Subpath.length(p.x - (u.x + t * dx), p.y - (u.y + t * dy))
        }
        return min(toSegment(a, c, d), toSegment(b, c, d), toSegment(c, a, b), toSegment(d, a, b))
    }
}
