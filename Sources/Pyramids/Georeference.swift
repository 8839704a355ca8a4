import Foundation
public import TileMath

/// Where an image lies on the Earth: an affine map from its pixels to world coordinates,
/// either degrees (EPSG:4326: a plate carrée scan, a rotated scan pinned by its corners)
/// or Web Mercator meters (EPSG:3857: what `tilekit stitch` writes).
///
/// Pixel coordinates are continuous, (0, 0) the top-left corner of the top-left pixel, so
/// pixel (i, j) covers [i, i+1) x [j, j+1) and its centre is (i + 0.5, j + 0.5).
public struct Georeference: Hashable, Sendable {
    public enum Space: String, Hashable, Sendable {
        case degrees = "EPSG:4326"
        case meters = "EPSG:3857"
    }

    /// world x = a·px + b·py + c, world y = d·px + e·py + f.
    public var a, b, c, d, e, f: Double
    public var space: Space
    public var width: Int
    public var height: Int

    public init(a: Double, b: Double, c: Double, d: Double, e: Double, f: Double, space: Space, width: Int, height: Int) throws(GeoreferenceError) {
        (self.a, self.b, self.c, self.d, self.e, self.f) = (a, b, c, d, e, f)
        self.space = space
        self.width = width
        self.height = height
        guard width > 0, height > 0 else { throw .degenerate("the image is \(width)x\(height) pixels") }
        guard [a, b, c, d, e, f].allSatisfy(\.isFinite) else { throw .degenerate("the pixel-to-world transform has a value that is not a number") }
        try checkExtent()
        // Nearly parallel axes (relative to their lengths) make an inverse of huge or infinite terms.
        let det = a * e - b * d
        guard abs(det) > 1e-300, abs(det) > 1e-9 * max(abs(a * e), abs(b * d)),
              [inverse.a, inverse.b, inverse.c, inverse.d, inverse.e, inverse.f].allSatisfy(\.isFinite) else {
            throw .degenerate("the pixel-to-world transform is not invertible")
        }
    }

    /// The largest world coordinate of the space: 180° of longitude (90° of latitude), or
    /// half the Web Mercator square in meters.
    static func worldLimits(_ space: Space) -> (x: Double, y: Double) {
        space == .degrees ? (180, 90) : (MercatorPoint.extent, MercatorPoint.extent)
    }

    /// Every corner of the image lies on the Earth (in its space), and some of it within
    /// Web Mercator's latitudes, or no tile could show it. Checked before anything is
    /// converted: a latitude of 91° or an image wider than the world made NaN downstream.
    private func checkExtent() throws(GeoreferenceError) {
        let limits = Self.worldLimits(space)
        // Rounding of pixel-centre world files: a world map's edge comes out 1e-13 past 180°.
        let slack = (x: limits.x * 1e-9, y: limits.y * 1e-9)
        let names = ["top-left", "top-right", "bottom-right", "bottom-left"]
        let w = Double(width), h = Double(height)
        var northmost = -Double.infinity, southmost = Double.infinity
        for (name, (px, py)) in zip(names, [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)]) {
            let (x, y) = world(x: px, y: py)
            if !x.isFinite || abs(x) > limits.x + slack.x {
                throw .outsideWorld(corner: name, axis: space == .degrees ? "longitude" : "easting", value: x, limit: limits.x, space: space)
            }
            if !y.isFinite || abs(y) > limits.y + slack.y {
                throw .outsideWorld(corner: name, axis: space == .degrees ? "latitude" : "northing", value: y, limit: limits.y, space: space)
            }
            northmost = max(northmost, y)
            southmost = min(southmost, y)
        }
        if space == .degrees {
            let limit = Coordinate.maxMercatorLatitude
            if southmost >= limit || northmost <= -limit { throw .beyondMercator(south: southmost, north: northmost) }
        }
    }

    /// A plate carrée image filling `box` (MapTiler's simple mode, the Leicester overlays).
    public static func bounds(_ box: BoundingBox, width: Int, height: Int) throws(GeoreferenceError) -> Georeference {
        guard box.south < box.north else { throw .badBounds("south \(box.south) is not below north \(box.north)") }
        guard box.west < box.east else { throw .badBounds("west \(box.west) is not left of east \(box.east) (boxes across the antimeridian are not supported for images)") }
        guard box.south >= -90, box.north <= 90, box.west >= -180, box.east <= 180 else { throw .badBounds("\(box) is outside [-180, 180] x [-90, 90]") }
        return try Georeference(a: (box.east - box.west) / Double(width), b: 0, c: box.west,
                                d: 0, e: -(box.north - box.south) / Double(height), f: box.north, space: .degrees, width: width, height: height)
    }

    /// An image pinned by its four corners (top-left, top-right, bottom-right, bottom-left,
    /// as longitude/latitude): the affine transform that fits them best (least squares).
    public static func corners(_ corners: [Coordinate], width: Int, height: Int) throws(GeoreferenceError) -> Georeference {
        guard corners.count == 4 else { throw .degenerate("four corners are needed, got \(corners.count)") }
        let pixels = [(0.0, 0.0), (Double(width), 0.0), (Double(width), Double(height)), (0.0, Double(height))]
        // Normal equations for [a b c] and [d e f] over the four points.
        var m = [[Double]](repeating: [0, 0, 0], count: 3)
        var vx = [0.0, 0, 0], vy = [0.0, 0, 0]
        for (p, c) in zip(pixels, corners) {
            let row = [p.0, p.1, 1]
            for i in 0..<3 {
                for j in 0..<3 { m[i][j] += row[i] * row[j] }
                vx[i] += row[i] * c.longitude
                vy[i] += row[i] * c.latitude
            }
        }
        guard var x = solve3(m, vx), var y = solve3(m, vy) else { throw .degenerate("the corners do not span an area") }
        // Rounding leaves ~1e-20 of "rotation" on an unrotated scan: snap it, so such a scan
        // is sampled exactly as the same image given by its bounds.
        if abs(x[1]) < 1e-12 * abs(x[0]) { x[1] = 0 }
        if abs(y[0]) < 1e-12 * abs(y[1]) { y[0] = 0 }
        return try Georeference(a: x[0], b: x[1], c: x[2], d: y[0], e: y[1], f: y[2], space: .degrees, width: width, height: height)
    }

    /// A world file (`.pgw`, `.jgw`, `.tfw`, `.wld`): six lines A, D, B, E, C, F where C, F
    /// are the centre of the top-left pixel.
    public static func worldFile(_ text: String, space: Space, width: Int, height: Int, file: String) throws(GeoreferenceError) -> Georeference {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count == 6 else { throw .worldFile(file: file, reason: "has \(lines.count) lines, a world file has 6 numbers") }
        var v = [Double]()
        for (i, line) in lines.enumerated() {
            guard let n = Double(line), n.isFinite else { throw .worldFile(file: file, reason: "line \(i + 1): \"\(line.prefix(40))\" is not a number") }
            v.append(n)
        }
        let (A, D, B, E, C, F) = (v[0], v[1], v[2], v[3], v[4], v[5])
        // Checked as written, before any conversion, so the message quotes the file's own values.
        if B == 0 && D == 0 {
            guard A > 0 else { throw .worldFile(file: file, reason: "line 1: the pixel width \(lines[0]) must be above 0") }
            guard E < 0 else {
                throw .worldFile(file: file, reason: "line 4: the pixel height \(lines[3]) must be below 0 (rows run from north to south)")
            }
        }
        let limits = worldLimits(space)
        let unit = space == .degrees ? "°" : " m"
        let limitX = GeoreferenceError.text(limits.x), limitY = GeoreferenceError.text(limits.y)
        let hint = space == .degrees && (abs(C) > 360 || abs(F) > 360) ? ": Web Mercator meters read as degrees? (world files in EPSG:3857 need --crs 3857)" : ""
        guard abs(C) <= limits.x else {
            throw .worldFile(file: file, reason: "line 5: the top-left \(space == .degrees ? "longitude" : "easting") \(lines[4]) is outside ±\(limitX)\(unit)\(hint)")
        }
        guard abs(F) <= limits.y else {
            throw .worldFile(file: file, reason: "line 6: the top-left \(space == .degrees ? "latitude" : "northing") \(lines[5]) is outside ±\(limitY)\(unit)\(hint)")
        }
        do {
            return try Georeference(a: A, b: B, c: C - A / 2 - B / 2, d: D, e: E, f: F - D / 2 - E / 2, space: space, width: width, height: height)
        } catch {
            throw .worldFile(file: file, reason: error.description)
        }
    }

    /// The world file text of this georeference (centre of the top-left pixel).
    public var worldFileText: String {
        [a, d, b, e, c + a / 2 + b / 2, f + d / 2 + e / 2].map { String(format: "%.12f", $0) }.joined(separator: "\n") + "\n"
    }

    public func world(x: Double, y: Double) -> (Double, Double) { (a * x + b * y + c, d * x + e * y + f) }

    /// The inverse: world coordinates to pixel coordinates.
    public var inverse: (a: Double, b: Double, c: Double, d: Double, e: Double, f: Double) {
        let det = a * e - b * d
        let ia = e / det, ib = -b / det, id = -d / det, ie = a / det
        return (ia, ib, -(ia * c + ib * f), id, ie, -(id * c + ie * f))
    }

    /// The image's corners as coordinates.
    public var cornerCoordinates: [Coordinate] {
        let w = Double(width), h = Double(height)
        let pixels: [(Double, Double)] = [(0, 0), (w, 0), (w, h), (0, h)]
        return pixels.map { p -> Coordinate in
            let (wx, wy) = world(x: p.0, y: p.1)
            switch space {
            case .degrees: return Coordinate(latitude: wy, longitude: wx)
            case .meters: return MercatorPoint(easting: wx, northing: wy).coordinate
            }
        }
    }

    /// The box the image covers.
    public var bounds: BoundingBox {
        let cs = cornerCoordinates
        let lons = cs.map { $0.longitude }, lats = cs.map { $0.latitude }
        return BoundingBox(west: lons.min()!, south: lats.min()!, east: lons.max()!, north: lats.max()!)
    }

    /// The pixel size GDAL gives the image warped to Web Mercator: square pixels keeping
    /// the diagonal (GDALSuggestedWarpOutput), in Mercator meters; and that raster's size.
    /// Latitudes beyond Mercator's limit count as the limit (a world scan reaches ±90°).
    public var mercatorRaster: (pixelSize: Double, width: Double, height: Double) {
        if space == .meters, b == 0, d == 0 { return (abs(a), Double(width), Double(height)) }
        let box = bounds, limit = Coordinate.maxMercatorLatitude
        let west = MercatorPoint(Coordinate(latitude: max(-limit, box.south), longitude: box.west))
        let east = MercatorPoint(Coordinate(latitude: min(limit, box.north), longitude: box.east))
        let extentX = abs(east.easting - west.easting), extentY = abs(east.northing - west.northing)
        let w = Double(width), h = Double(height)
        let size = sqrt((extentX * extentX + extentY * extentY) / (w * w + h * h))
        return (size, extentX / size, extentY / size)
    }

    /// gdal2tiles' default zooms: the deepest whose pixels are not finer than the warped
    /// image's, down to the one where the whole image fits one tile.
    public func defaultZooms(tileSize: Int) -> ClosedRange<Int> {
        func zoom(forPixelSize size: Double) -> Int {
            let exact = log2(2 * .pi * MercatorPoint.earthRadius / (Double(tileSize) * size)) + 1e-9
            // A pixel finer than the deepest zoom's (or a NaN of a degenerate size) ends at its end.
            guard exact.isFinite else { return exact == -.infinity ? 0 : TileID.maxZoom }
            return Int(max(0, min(Double(TileID.maxZoom), exact.rounded(.down))))
        }
        let raster = mercatorRaster
        let top = zoom(forPixelSize: raster.pixelSize)
        let low = zoom(forPixelSize: raster.pixelSize * max(raster.width, raster.height) / Double(tileSize))
        return min(low, top)...top
    }

    static func solve3(_ m: [[Double]], _ v: [Double]) -> [Double]? {
        var a = m, b = v
        for col in 0..<3 {
            guard let pivot = (col..<3).max(by: { abs(a[$0][col]) < abs(a[$1][col]) }), abs(a[pivot][col]) > 1e-12 else { return nil }
            a.swapAt(col, pivot)
            b.swapAt(col, pivot)
            for row in 0..<3 where row != col {
                let factor = a[row][col] / a[col][col]
                for k in col..<3 { a[row][k] -= factor * a[col][k] }
                b[row] -= factor * b[col]
            }
        }
        return (0..<3).map { b[$0] / a[$0][$0] }
    }
}

public enum GeoreferenceError: Error, Equatable, Sendable, CustomStringConvertible {
    case badBounds(String)
    case degenerate(String)
    case worldFile(file: String, reason: String)
    case sidecar(file: String, reason: String)
    /// A corner of the image (`top-left` ...) lands off the Earth: `axis` is longitude or
    /// latitude (degrees), easting or northing (meters); `limit` the largest magnitude allowed.
    case outsideWorld(corner: String, axis: String, value: Double, limit: Double, space: Georeference.Space)
    /// Every latitude of the image is beyond ±85.0511°, where Web Mercator (and every tile) ends.
    case beyondMercator(south: Double, north: Double)

    public var description: String {
        switch self {
        case .badBounds(let text): return "bounds: \(text)"
        case .degenerate(let text): return text
        case .worldFile(let file, let reason): return "\(file): \(reason)"
        case .sidecar(let file, let reason): return "\(file): \(reason)"
        case .outsideWorld(let corner, let axis, let value, let limit, let space):
            let unit = space == .degrees ? "°" : " m"
            let hint = space == .degrees && abs(value) > 360 ? " (Web Mercator meters read as degrees?)" : ""
            return "the image's \(corner) corner is at \(axis) \(Self.text(value)), outside ±\(Self.text(limit))\(unit): the pixel size or position is wrong\(hint)"
        case .beyondMercator(let south, let north):
            return "the image lies between latitudes \(Self.text(south)) and \(Self.text(north)), beyond ±85.0511° where Web Mercator tiles end: no tile can show it"
        }
    }

    /// A value for a message: rounding noise of the affine transform (87.43499999999999) cut
    /// at nine decimals.
    static func text(_ value: Double) -> String {
        guard abs(value) < 1e6 else { return value.shortDescription }
        return ((value * 1e9).rounded() / 1e9).shortDescription
    }
}
