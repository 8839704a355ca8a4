import TileMath

/// Four corners of an image on the map, as `--corners` gives them: top-left, top-right,
/// bottom-right, bottom-left, each `LON,LAT`.
///
/// An affine fit accepts any four points, so corners in the wrong order (top-right and
/// bottom-right swapped make a bow tie) would silently warp the image into a smear. They
/// are checked as a quadrilateral first: its edges must not cross, it must be convex, and
/// it must go clockwise with north up (the image's own order); counter-clockwise is a mirror.
struct ImageCorners: Equatable {
    let coordinates: [Coordinate]

    static let names = ["top-left", "top-right", "bottom-right", "bottom-left"]

    /// Parses and checks `TL;TR;BR;BL`; every error names `flag` and the value.
    init(parsing text: String, flag: String = "--corners") throws(CLIError) {
        var corners = [Coordinate]()
        for item in text.split(separator: ";") { corners.append(try Parse.coordinate(String(item))) }
        guard corners.count == 4 else {
            throw .usage("\(flag) \"\(text)\": expected four corners LON,LAT separated by ';' (top-left;top-right;bottom-right;bottom-left), found \(corners.count)")
        }
        try self.init(corners, flag: flag)
    }

    init(_ corners: [Coordinate], flag: String) throws(CLIError) {
        guard corners.count == 4 else { throw .usage("\(flag): expected four corners, found \(corners.count)") }
        // Longitudes unwrapped next to the first corner, so corners across the antimeridian
        // stay a small shape; latitude as y (north up), enough for the shape's topology.
        let points = corners.map { c -> (x: Double, y: Double) in
            var lon = c.longitude
            while lon - corners[0].longitude > 180 { lon -= 360 }
            while lon - corners[0].longitude < -180 { lon += 360 }
            return (lon, c.latitude)
        }
        func cross(_ o: (x: Double, y: Double), _ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
            (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
        }
        func crosses(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> Bool {
            let (p, q, r, s) = (points[a], points[b], points[c], points[d])
            let d1 = cross(r, s, p), d2 = cross(r, s, q), d3 = cross(p, q, r), d4 = cross(p, q, s)
            return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
        }
        let described = corners.map { "\($0.longitude.shortDescription),\($0.latitude.shortDescription)" }.joined(separator: ";")
        for (a, b, c, d) in [(0, 1, 2, 3), (1, 2, 3, 0)] where crosses(a, b, c, d) {
            throw .usage("\(flag) \(described): the corners fold over each other (the edge \(Self.names[a])-\(Self.names[b]) crosses \(Self.names[c])-\(Self.names[d])); give them in the order top-left;top-right;bottom-right;bottom-left")
        }
        let turns = (0..<4).map { i in cross(points[i], points[(i + 1) % 4], points[(i + 2) % 4]) }
        let scale = points.map { abs($0.x) + abs($0.y) }.max() ?? 1
        // A turn this small is three corners on one line (or two corners at one place).
        if turns.contains(where: { abs($0) <= 1e-12 * max(scale * scale, 1e-300) || !$0.isFinite }) {
            throw .usage("\(flag) \(described): the corners do not span an area (three of them are on one line)")
        }
        if turns.allSatisfy({ $0 > 0 }) {
            throw .usage("\(flag) \(described): the corners go counter-clockwise, which would mirror the image; give them as top-left;top-right;bottom-right;bottom-left")
        }
        guard turns.allSatisfy({ $0 < 0 }) else {
            throw .usage("\(flag) \(described): the corners do not make a convex shape (one corner is inside the others); give the image's four corners as top-left;top-right;bottom-right;bottom-left")
        }
        coordinates = corners
    }
}
