import Foundation
import Canvas
import TileMath
import CPixelLoops

/// Draws one Web Mercator tile from the source image: each output pixel's centre goes to
/// degrees or meters, then through the inverse georeference to a source position, which
/// is sampled. Rows of a degree-based image are not evenly spaced in Mercator, so each
/// output row finds its own latitude; nothing is assumed linear that is not.
struct TileWarper: Sendable {
    let georeference: Georeference
    let resampling: Resampling

    /// The source rows a tile samples (its resampling taps included); not clamped to the
    /// image. Empty when the tile's corners map to no number (a degenerate transform).
    func sourceRows(for tile: TileID, size: Int) -> Range<Int> {
        // The extremes of a linear map over a rectangle are at its corners. Four values, not
        // arrays of them: the pyramid's plan calls this twice per row of tiles of its top
        // zoom (`PyramidBuilder.windowRows`), up to millions of times for a deep zoom.
        let side = Double(size)
        let y00 = sourcePoint(tile: tile, size: size, i: 0, j: 0).1, y10 = sourcePoint(tile: tile, size: size, i: side, j: 0).1
        let y01 = sourcePoint(tile: tile, size: size, i: 0, j: side).1, y11 = sourcePoint(tile: tile, size: size, i: side, j: side).1
        guard !y00.isNaN, !y10.isNaN, !y01.isNaN, !y11.isNaN else { return 0..<0 }
        let top = min(y00, y10, y01, y11), bottom = max(y00, y10, y01, y11)
        let low = Self.rowIndex(top.rounded(.down)) - resampling.radius - 1
        let high = Self.rowIndex(bottom.rounded(.up)) + resampling.radius + 1
        return low..<high
    }

    /// The most source rows, clamped to the image, that one row of tiles of `range` can
    /// span (`PyramidBuilder.windowRows`): never more than the image's height, nor than the
    /// widest band's height in source rows (its corners' spread: |d⁻¹|·Δx + |e⁻¹|·Δy of the
    /// inverse transform, Δy largest on the row nearest the equator) plus a row of rounding
    /// at each end and the resampling's taps. A bound, not the answer: it lets the walk over
    /// the rows stop at the first row that reaches it.
    func mostRows(in range: TileRange, size: Int, imageHeight: Int) -> Int {
        let inverse = georeference.inverse
        let limits = Georeference.worldLimits(georeference.space)
        // Below this size no corner's row can overflow to infinity, so none is NaN (NaN rows
        // make `windowRows` take the image's edge instead of the band's).
        let magnitude = abs(inverse.d) * limits.x + abs(inverse.e) * limits.y + abs(inverse.f)
        guard magnitude < 1e300 else { return imageHeight }
        let width = abs(worldX(tile: TileID(z: range.z, x: range.maxX, y: range.minY), size: size, i: Double(size))
                        - worldX(tile: TileID(z: range.z, x: range.minX, y: range.minY), size: size, i: 0))
        let equator = range.z == 0 ? [0] : [(1 << (range.z - 1)) - 1, 1 << (range.z - 1)]
        let height = equator.map { row in
            let tile = TileID(z: range.z, x: range.minX, y: min(max(row, range.minY), range.maxY))
            return abs(worldY(tile: tile, size: size, j: 0) - worldY(tile: tile, size: size, j: Double(size)))
        }.max() ?? 0
        // A margin for the rounding of the corners' rows (each within a few ulps of `magnitude`).
        let spread = abs(inverse.d) * width + abs(inverse.e) * height + magnitude * 1e-12 + 1e-9
        guard spread.isFinite, spread < Double(imageHeight) else { return imageHeight }
        return min(imageHeight, Int(spread.rounded(.up)) + 1 + 2 * (resampling.radius + 1))
    }

    /// A source coordinate as a row or column index. Beyond ±2^40 (far outside any image,
    /// which the caller clamps to) it is held at ±2^40, so a tile far off a tiny image
    /// converts without a trap.
    static func rowIndex(_ value: Double) -> Int {
        let bound = Double(1 << 40)
        return Int(min(bound, max(-bound, value)))
    }

    /// World coordinates (degrees or meters, as the georeference's space) of a point of a
    /// tile; x depends on the column only and y on the row only, so each is found once per
    /// column or row.
    func world(tile: TileID, size: Int, i: Double, j: Double) -> (Double, Double) {
        (worldX(tile: tile, size: size, i: i), worldY(tile: tile, size: size, j: j))
    }

    func worldX(tile: TileID, size: Int, i: Double) -> Double {
        let u = (Double(tile.x * size) + i) / (Double(size) * pow(2, Double(tile.z)))
        return georeference.space == .degrees ? u * 360 - 180 : (u * 2 - 1) * .pi * MercatorPoint.earthRadius
    }

    func worldY(tile: TileID, size: Int, j: Double) -> Double {
        let v = (Double(tile.y * size) + j) / (Double(size) * pow(2, Double(tile.z)))
        return georeference.space == .degrees ? atan(sinh(.pi * (1 - 2 * v))) * 180 / .pi : (1 - v * 2) * .pi * MercatorPoint.earthRadius
    }

    func sourcePoint(tile: TileID, size: Int, i: Double, j: Double) -> (Double, Double) {
        let (wx, wy) = world(tile: tile, size: size, i: i, j: j)
        let inv = georeference.inverse
        return (inv.a * wx + inv.b * wy + inv.c, inv.d * wx + inv.e * wy + inv.f)
    }

    /// The tile, or nil when no output pixel falls on the image.
    func render(_ tile: TileID, size: Int, rows: SourceRows) -> RGBAImage? {
        let inv = georeference.inverse
        let W = rows.width, H = rows.height
        // Per column: world x; per row: world y (pixel centres).
        var wxs = [Double](repeating: 0, count: size), wys = [Double](repeating: 0, count: size)
        for i in 0..<size { wxs[i] = worldX(tile: tile, size: size, i: Double(i) + 0.5) }
        for j in 0..<size { wys[j] = worldY(tile: tile, size: size, j: Double(j) + 0.5) }
        var out = [UInt8](repeating: 0, count: size * size * 4)
        var any = false
        let rowBytes = W * 4
        let first = rows.start
        rows.pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                var xi = [Int](), yi = [Int](), xw = [Float](), yw = [Float]()
                if inv.b == 0 && inv.d == 0 {
                    // Separable: source x depends on the column only, source y on the row only.
                    // Taps are kept flat (no array per column: retain/release cost a tenth of
                    // the time), and the vertical pass runs only on the columns some tap uses.
                    let taps = 2 * resampling.radius
                    var columnValid = [Bool](repeating: false, count: size)
                    var columnIndex = [Int](repeating: 0, count: size * taps)
                    var columnWeight = [Float](repeating: 0, count: size * taps)
                    var minX = Int.max, maxX = Int.min
                    for i in 0..<size {
                        let sx = inv.a * wxs[i] + inv.c
                        guard sx >= 0, sx < Double(W) else { continue }
                        resampling.taps(sx, count: W, into: &xi, &xw)
                        columnValid[i] = true
                        for k in 0..<min(taps, xi.count) {
                            columnIndex[i * taps + k] = xi[k]
                            columnWeight[i * taps + k] = xw[k]
                            minX = min(minX, xi[k])
                            maxX = max(maxX, xi[k])
                        }
                    }
                    guard minX <= maxX else { return }
                    var used = [Bool](repeating: false, count: maxX - minX + 1)
                    for i in 0..<size where columnValid[i] {
                        for k in 0..<taps where columnWeight[i * taps + k] != 0 { used[columnIndex[i * taps + k] - minX] = true }
                    }
                    let usedColumns = used.indices.filter { used[$0] }.map { $0 + minX }
                    // One pixel's premultiplied (r, g, b, a) sums per source column, four floats.
                    var line = [Float](repeating: 0, count: (maxX - minX + 1) * 4)
                    var rowStart = [Int](repeating: 0, count: taps)
                    for j in 0..<size {
                        let sy = inv.e * wys[j] + inv.f
                        guard sy >= 0, sy < Double(H) else { continue }
                        resampling.taps(sy, count: H, into: &yi, &yw)
                        // Where each tap's row starts in the window: the same for every column.
                        let rowTaps = min(yi.count, taps)
                        for k in 0..<rowTaps {
                            rowStart[k] = (yi[k] - first) * rowBytes
                            // The C loops read unchecked: every pixel a tap names is in the window.
                            precondition(rowStart[k] + minX * 4 >= 0 && rowStart[k] + maxX * 4 + 4 <= src.count,
                                         "row \(yi[k]) is outside the source window")
                        }
                        tk_warp_columns(src.baseAddress, rowStart, yw, Int32(rowTaps), usedColumns, usedColumns.count, minX, &line)
                        if tk_warp_row(line, minX, columnIndex, columnWeight, columnValid, Int32(taps), size,
                                       dst.baseAddress! + j * size * 4) {
                            any = true
                        }
                    }
                } else {
                    for j in 0..<size {
                        for i in 0..<size {
                            let sx = inv.a * wxs[i] + inv.b * wys[j] + inv.c
                            let sy = inv.d * wxs[i] + inv.e * wys[j] + inv.f
                            guard sx >= 0, sx < Double(W), sy >= 0, sy < Double(H) else { continue }
                            resampling.taps(sx, count: W, into: &xi, &xw)
                            resampling.taps(sy, count: H, into: &yi, &yw)
                            var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
                            for (row, wy) in zip(yi, yw) {
                                let base = (row - first) * rowBytes
                                for (x, wx) in zip(xi, xw) {
                                    let p = base + x * 4
                                    let w = wx * wy * Float(src[p + 3])
                                    r += Float(src[p]) * w; g += Float(src[p + 1]) * w; b += Float(src[p + 2]) * w; a += w
                                }
                            }
                            if tk_warp_store(r, g, b, a, dst.baseAddress! + (j * size + i) * 4) { any = true }
                        }
                    }
                }
            }
        }
        return any ? RGBAImage(width: size, height: size, pixels: out) : nil
    }

    /// A parent tile from its four children (any may be nil): gdal2tiles' `average`, a 2x2
    /// box filter in premultiplied space.
    static func average(_ children: [RGBAImage?], size: Int) -> RGBAImage? {
        guard children.contains(where: { $0 != nil }) else { return nil }
        var out = [UInt8](repeating: 0, count: size * size * 4)
        let half = size / 2
        var any = false
        for (index, child) in children.enumerated() {
            guard let child else { continue }
            let ox = (index % 2) * half, oy = (index / 2) * half
            precondition(child.width == size && child.height == size && child.pixels.count == size * size * 4,
                         "a child tile is not \(size)x\(size) px")
            if tk_average_quadrant(child.pixels, size, &out, ox, oy) { any = true }
        }
        return any ? RGBAImage(width: size, height: size, pixels: out) : nil
    }
}
