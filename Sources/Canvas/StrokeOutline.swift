import Foundation
import TileMath

extension PixelPoint {
    /// The point `distance` to the left (+90°) of the unit direction `d`.
    fileprivate func offset(_ d: PixelPoint, by distance: Double) -> PixelPoint {
        PixelPoint(x: x - d.y * distance, y: y + d.x * distance)
    }
}

/// The outline of a stroke with round joins, as polygons whose inside is the stroked area:
/// each side offset by half the width, an arc around the outside of each turn, the point
/// where the offset lines cross inside it, and the caps. Round caps and joins are what
/// features, routes and shapes use; other joins and dashes are left to cairo (nil).
///
/// `CoverageRaster` adds up the area of every edge, so where one outline overlaps itself
/// (a line crossing itself, doubling back, or bending within its own width) the edge pixels
/// of the overlap would count twice (AGG's, and so Mapnik's, artefact). So an open line is
/// cut into pieces that each keep clear of themselves, and the raster keeps each pixel's
/// largest coverage over the pieces: their union, drawn once. A closed ring that overlaps
/// itself is left to cairo.
enum StrokeOutline {
    /// How far an arc's chords may stray from the circle, in pixels (cairo's default tolerance).
    static let tolerance = 0.1
    /// How far past a cut in the middle of a segment the two pieces reach, in pixels: more
    /// than a pixel, so each piece's cap lies inside the other's straight band, where the
    /// larger coverage of the two is the exact one.
    static let cutOverlap = 1.5

    /// The stroke as pieces, each a set of contours filled together with the nonzero rule.
    /// Not `exact` (`Canvas.Antialias.fast`): one piece, outlines allowed to overlap themselves
    /// (through the vertex inside a sharp turn), so the edge pixels of an overlap count twice.
    static func pieces(of subpaths: [Subpath], style: StrokeStyle, exact: Bool = true) -> [CoverageRaster.Piece]? {
        guard style.join == .round, style.dash.isEmpty, style.width.isFinite, style.width > 0,
              style.width <= Subpath.largestCoordinate else { return nil }
        let radius = style.width / 2
        let reach = style.cap == .square ? 3 * radius : 2 * radius
        var pieces = [CoverageRaster.Piece]()
        var overlapping = [[PixelPoint]]()
        for (subpath, original) in zip(Subpath.deduplicated(subpaths), subpaths) {
            let points = subpath.points
            guard points.count > 1 else {
                // A segment of no length draws its cap (a lone move draws nothing).
                if points.count == 1, original.points.count > 1 || original.closed,
                   let dot = dot(at: points[0], radius: radius, cap: style.cap) { pieces.append(CoverageRaster.Piece(contours: [dot])) }
                continue
            }
            if !exact {
                guard let contours = outline(points, closed: subpath.closed, radius: radius, endCap: style.cap, startCap: style.cap,
                                             overlapping: true) else { return nil }
                overlapping += contours
                continue
            }
            guard points.count <= Subpath.maximumSegments else { return nil }
            if subpath.closed {
                guard Subpath.separated([subpath], reach: reach, otherSubpathReach: reach),
                      let contours = outline(points, closed: true, radius: radius, endCap: style.cap, startCap: style.cap) else { return nil }
                pieces.append(CoverageRaster.Piece(contours: contours))
                continue
            }
            for run in runs(points, radius: radius, reach: reach) {
                guard let contours = outline(run.points, closed: false, radius: radius, endCap: run.endCap ?? style.cap,
                                             startCap: run.startCap ?? style.cap) else { return nil }
                pieces.append(CoverageRaster.Piece(contours: contours, overlapsPrevious: run.overlap))
            }
        }
        if !exact { return [CoverageRaster.Piece(contours: pieces.flatMap(\.contours) + overlapping)] }
        return pieces
    }

    /// A stretch of an open line whose stroke keeps clear of itself; cut ends have round
    /// caps (nil caps are the line's own), and `overlap` is where it overlaps the run
    /// before it by design (see `CoverageRaster.Piece`).
    struct Run {
        var points: [PixelPoint]
        var startCap: StrokeStyle.Cap?
        var endCap: StrokeStyle.Cap?
        var overlap: (point: PixelPoint, reach: Double)?
    }

    /// An open line cut into runs whose strokes keep clear of themselves: a run ends before
    /// a segment that would come within `reach` of an earlier one of the run, or a turn too
    /// sharp for its segments. The cut is in the middle of the run's last segment when that
    /// is long enough (the two runs overlap along it by `cutOverlap` each way: near there
    /// the larger coverage is exact), otherwise at the vertex, where the next run may fold
    /// back along this one (the larger coverage is exact for coinciding edges, so it is used
    /// everywhere against the runs before).
    static func runs(_ points: [PixelPoint], radius: Double, reach: Double) -> [Run] {
        var runs = [Run]()
        var run = Run(points: [points[0], points[1]])
        for next in points.dropFirst(2) {
            if keepsClear(run.points, adding: next, radius: radius, reach: reach) {
                run.points.append(next)
                continue
            }
            let a = run.points[run.points.count - 2], b = run.points[run.points.count - 1]
            let length = Subpath.length(b.x - a.x, b.y - a.y)
            if length >= 2 * (2 * cutOverlap + radius) {
                let d = PixelPoint(x: (b.x - a.x) / length, y: (b.y - a.y) / length)
                let middle = PixelPoint(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2)
                run.points[run.points.count - 1] = PixelPoint(x: middle.x + d.x * cutOverlap, y: middle.y + d.y * cutOverlap)
                run.endCap = .round
                runs.append(run)
                let start = PixelPoint(x: middle.x - d.x * cutOverlap, y: middle.y - d.y * cutOverlap)
                run = Run(points: [start, b], startCap: .round, overlap: (middle, 2 * cutOverlap + radius + 1.5))
                if keepsClear(run.points, adding: next, radius: radius, reach: reach) {
                    run.points.append(next)
                    continue
                }
            }
            run.endCap = .round
            runs.append(run)
            run = Run(points: [b, next], startCap: .round, overlap: (b, .infinity))
        }
        runs.append(run)
        return runs
    }

    /// Whether the run's stroke stays clear of itself with one more segment to `next`: the
    /// turn at its end has a clean inside, and the new segment keeps `reach` from every
    /// segment but the one it joins.
    private static func keepsClear(_ run: [PixelPoint], adding next: PixelPoint, radius: Double, reach: Double) -> Bool {
        let a = run[run.count - 2], b = run[run.count - 1]
        let l0 = Subpath.length(b.x - a.x, b.y - a.y), l1 = Subpath.length(next.x - b.x, next.y - b.y)
        let d0 = PixelPoint(x: (b.x - a.x) / l0, y: (b.y - a.y) / l0), d1 = PixelPoint(x: (next.x - b.x) / l1, y: (next.y - b.y) / l1)
        let cross = d0.x * d1.y - d0.y * d1.x, dot = d0.x * d1.x + d0.y * d1.y
        if cross == 0, dot <= 0 { return false }
        // Either side may be the inside of the turn.
        if !insideIsClean(cross: abs(cross), dot: dot, lengths: (l0, l1), radius: radius) { return false }
        for index in 0..<max(0, run.count - 2) where Subpath.distance(run[index], run[index + 1], b, next) < reach {
            return false
        }
        return true
    }

    /// Both sides of a line: an open line's outline as one contour (out along one side and
    /// its end cap, back along the other and its start cap), a closed line's as two rings.
    /// nil when an inside turn is too sharp for its segments' lengths (see `side`).
    private static func outline(_ points: [PixelPoint], closed: Bool, radius: Double, endCap: StrokeStyle.Cap,
                                startCap: StrokeStyle.Cap, overlapping: Bool = false) -> [[PixelPoint]]? {
        var left = [PixelPoint]()
        left.reserveCapacity((closed ? 1 : 2) * (2 * points.count + 8))
        guard side(points, backward: false, closed: closed, radius: radius, cap: endCap, overlapping: overlapping, into: &left) else { return nil }
        if !closed {
            guard side(points, backward: true, closed: false, radius: radius, cap: startCap, overlapping: overlapping, into: &left) else { return nil }
            return [left]
        }
        var right = [PixelPoint]()
        right.reserveCapacity(2 * points.count + 8)
        guard side(points, backward: true, closed: true, radius: radius, cap: startCap, overlapping: overlapping, into: &right) else { return nil }
        return [left, right]
    }

    /// One side of the stroke, offset to the left of the direction of travel (+90°), with its
    /// joins, and for an open path the cap at its far end, appended to `out`; walked from the
    /// last point back to the first when `backward` (the other side). Each segment's direction
    /// is made as the walk reaches it: a side allocates nothing of its own (the arrays of
    /// directions, lengths and reversed points it once made were a tenth of a dense tile's time
    /// in malloc and reference counting, with the rest of the stroke path's).
    /// false when an inside turn is too sharp for its segments' lengths (the outline would overlap).
    private static func side(_ points: [PixelPoint], backward: Bool, closed: Bool, radius: Double, cap: StrokeStyle.Cap,
                             overlapping: Bool, into out: inout [PixelPoint]) -> Bool {
        let count = points.count
        func point(_ k: Int) -> PixelPoint { points[backward ? count - 1 - k : k] }
        /// From point k to the next (the first, after the last of a ring): unit direction and length.
        func segment(_ k: Int) -> (direction: PixelPoint, length: Double) {
            let a = point(k), b = point((k + 1) % count)
            let length = Subpath.length(b.x - a.x, b.y - a.y)
            return (PixelPoint(x: (b.x - a.x) / length, y: (b.y - a.y) / length), length)
        }
        var before = segment(closed ? count - 1 : 0)
        if closed {
            for index in 0..<count {
                let next = segment(index)
                guard join(at: point(index), from: before.direction, to: next.direction, lengths: (before.length, next.length),
                           radius: radius, overlapping: overlapping, into: &out) else { return false }
                before = next
            }
            return true
        }
        out.append(point(0).offset(before.direction, by: radius))
        for index in 1..<(count - 1) {
            let next = segment(index)
            guard join(at: point(index), from: before.direction, to: next.direction, lengths: (before.length, next.length),
                       radius: radius, overlapping: overlapping, into: &out) else { return false }
            before = next
        }
        let end = point(count - 1), d = before.direction, normal = PixelPoint(x: -d.y, y: d.x)
        out.append(end.offset(d, by: radius))
        switch cap {
        case .butt: break
        case .round: arc(around: end, from: normal, turning: -.pi, radius: radius, into: &out)
        case .square:
            out.append(PixelPoint(x: end.x + (normal.x + d.x) * radius, y: end.y + (normal.y + d.y) * radius))
            out.append(PixelPoint(x: end.x + (d.x - normal.x) * radius, y: end.y + (d.y - normal.y) * radius))
        }
        return true
    }

    /// This side's points at a vertex between two segments: inside a turn, the point where
    /// the two offset lines cross; outside it, the circle. When that crossing lies beyond a
    /// segment's length or the path turns straight back, the outline would overlap itself:
    /// false, unless `overlapping` allows it (then through the vertex).
    private static func join(at vertex: PixelPoint, from d0: PixelPoint, to d1: PixelPoint, lengths: (Double, Double),
                             radius: Double, overlapping: Bool, into out: inout [PixelPoint]) -> Bool {
        let cross = d0.x * d1.y - d0.y * d1.x, dot = d0.x * d1.x + d0.y * d1.y
        if cross > 0 {
            if insideIsClean(cross: cross, dot: dot, lengths: lengths, radius: radius) {
                let scale = radius / (1 + dot)
                out.append(PixelPoint(x: vertex.x + (-d0.y - d1.y) * scale, y: vertex.y + (d0.x + d1.x) * scale))
            } else {
                guard overlapping else { return false }
                out += [vertex.offset(d0, by: radius), vertex, vertex.offset(d1, by: radius)]
            }
        } else if cross < 0 || (dot <= 0 && overlapping) {
            // A turn straight back (cross 0) is a half circle round the front.
            out.append(vertex.offset(d0, by: radius))
            arc(around: vertex, from: PixelPoint(x: -d0.y, y: d0.x), turning: cross == 0 ? -.pi : atan2(cross, dot), radius: radius, into: &out)
            out.append(vertex.offset(d1, by: radius))
        } else {
            guard dot > 0 else { return false }
            out.append(vertex.offset(d0, by: radius))
        }
        return true
    }

    /// Whether the offset lines on the inside of a turn (cross > 0 for that side) meet
    /// within both segments: the crossing lies radius × tan(turn / 2) back along each.
    private static func insideIsClean(cross: Double, dot: Double, lengths: (Double, Double), radius: Double) -> Bool {
        radius * cross <= min(lengths.0, lengths.1) * (1 + dot)
    }

    /// The points strictly between the ends of an arc from `normal` (a unit vector from the
    /// centre) through `turning` radians; the ends are the neighbouring segments' points.
    private static func arc(around center: PixelPoint, from normal: PixelPoint, turning: Double, radius: Double,
                            into out: inout [PixelPoint]) {
        let steps = arcSteps(turning, radius: radius)
        guard steps > 1 else { return }
        // The normal turned a step at a time (one cosine and sine an arc, not one a point).
        let step = turning / Double(steps), c = cos(step), s = sin(step)
        var v = normal
        for _ in 1..<steps {
            v = PixelPoint(x: v.x * c - v.y * s, y: v.x * s + v.y * c)
            out.append(PixelPoint(x: center.x + radius * v.x, y: center.y + radius * v.y))
        }
    }

    /// How many chords an arc needs so none strays more than `tolerance` from the circle.
    static func arcSteps(_ angle: Double, radius: Double, tolerance: Double = tolerance) -> Int {
        let largestStep = radius <= tolerance ? Double.pi / 2 : 2 * acos(1 - tolerance / radius)
        // A radius so large that 1 − tolerance / radius rounds to 1 gives a step of 0.
        let steps = (abs(angle) / largestStep).rounded(.up)
        guard steps < 1024 else { return 1024 }
        return max(1, Int(steps))
    }

    /// A zero-length segment's cap: a disc for round caps; nothing for the others (cairo
    /// draws no square, having no direction to turn it by).
    private static func dot(at center: PixelPoint, radius: Double, cap: StrokeStyle.Cap) -> [PixelPoint]? {
        switch cap {
        case .butt, .square: return nil
        case .round:
            let steps = max(4, arcSteps(2 * .pi, radius: radius))
            return (0..<steps).map { k in
                let angle = 2 * .pi * Double(k) / Double(steps)
                return PixelPoint(x: center.x + radius * cos(angle), y: center.y + radius * sin(angle))
            }
        }
    }
}
