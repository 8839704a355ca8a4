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
        guard [a, b, c, d, e, f].allSatisfy(\.isFinite), abs(a * e - b * d) > 1e-300 else {
            throw .degenerate("the pixel-to-world transform is not invertible")
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
    public var mercatorRaster: (pixelSize: Double, width: Double, height: Double) {
        if space == .meters, b == 0, d == 0 { return (abs(a), Double(width), Double(height)) }
        let box = bounds
        let west = MercatorPoint(Coordinate(latitude: box.south, longitude: box.west)), east = MercatorPoint(Coordinate(latitude: box.north, longitude: box.east))
        let extentX = abs(east.easting - west.easting), extentY = abs(east.northing - west.northing)
        let size = sqrt((extentX * extentX + extentY * extentY) / Double(width * width + height * height))
        return (size, extentX / size, extentY / size)
    }

    /// gdal2tiles' default zooms: the deepest whose pixels are not finer than the warped
    /// image's, down to the one where the whole image fits one tile.
    public func defaultZooms(tileSize: Int) -> ClosedRange<Int> {
        func zoom(forPixelSize size: Double) -> Int {
            let exact = log2(2 * .pi * 6_378_137 / (Double(tileSize) * size))
            return max(0, min(TileID.maxZoom, Int((exact + 1e-9).rounded(.down))))
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

    public var description: String {
        switch self {
        case .badBounds(let text): return "bounds: \(text)"
        case .degenerate(let text): return text
        case .worldFile(let file, let reason): return "\(file): \(reason)"
        case .sidecar(let file, let reason): return "\(file): \(reason)"
        }
    }
}
