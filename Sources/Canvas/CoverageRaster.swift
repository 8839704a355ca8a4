import Synchronization
import TileMath

/// Fills polygons with a solid colour straight into a premultiplied ARGB32 surface, each
/// pixel covered by the exact area of the polygon inside it (the signed-area accumulation of
/// libart, AGG and font-rs): every edge adds, to the cells of each pixel row it crosses,
/// the area it sweeps; one pass along the row sums them into coverage.
///
/// Why not cairo: cairo's rasterizer samples 15 sub-rows per pixel row, and on a dense
/// feature layer (hundreds of small shapes and thin lines a tile) it was two thirds of a
/// tile's time. This one walks each edge once per row, and composites in place with
/// pixman's OVER arithmetic, so coverage differs from cairo's by rounding at edges only.
///
/// Memory safety: every edge is clipped to the surface, and every index into the cell
/// buffer is clamped to it, so no coordinate (1e300, NaN is refused earlier) reaches
/// outside it.
///
/// Unchecked Sendable: a raster is used by one canvas at a time, and passes between canvases
/// only through `spare`, under its lock.
final class CoverageRaster: @unchecked Sendable {
    /// Contours filled together, and where this piece overlaps the one before it by design
    /// (a stroke cut into pieces overlaps along its band there): within `reach` of `point`
    /// the larger of the two coverages is their union.
    struct Piece {
        var contours: [[PixelPoint]]
        var overlapsPrevious: (point: PixelPoint, reach: Double)?
    }

    /// One Float per pixel of the shape's box (and two spare columns a row), zero between fills.
    private var cells: UnsafeMutablePointer<Float>
    private var capacity: Int
    /// Per row of the box, the first and last cell an edge touched: the sum is zero outside.
    private var spans: UnsafeMutablePointer<RowSpan>
    private var spanCapacity: Int
    /// For a shape of several pieces: per pixel, the largest coverage of any piece so far,
    /// and per row the cells it holds; zero and empty between fills. Made on the first such
    /// shape (most canvases have none: only a stroke cut where it overlaps itself needs it),
    /// as large as `cells` and `spans` then.
    private var mask: UnsafeMutablePointer<Float>?
    private var maskSpans: UnsafeMutablePointer<RowSpan>?
    /// Shapes whose box is larger than this many cells are left to cairo, so a huge snapshot
    /// does not hold a second surface's worth of memory.
    static let maximumCells = 4 << 20

    init() {
        capacity = 256 * 258
        cells = .allocate(capacity: capacity)
        cells.initialize(repeating: 0, count: capacity)
        spanCapacity = 256
        spans = .allocate(capacity: spanCapacity)
        spans.initialize(repeating: .empty, count: spanCapacity)
    }

    /// Rasters of canvases gone, for the next canvas: a canvas's first shape would otherwise
    /// zero a fresh buffer (a snapshot's 200-point line: a megabyte, and with the mask two),
    /// and glibc hands such buffers back to the kernel when freed, so every snapshot took
    /// them again page by page (half of its page faults). Their cells are zero between fills.
    private static let spare = Mutex<[CoverageRaster]>([])
    /// At most this many kept, none with more than `maximumSpareCells` (2 MiB of cells, and
    /// as much again for a mask: a full 600x400 canvas is half of it), so at most 16 MiB.
    static let maximumSpare = 4
    static let maximumSpareCells = 1 << 19

    static func take() -> CoverageRaster {
        spare.withLock { $0.popLast() } ?? CoverageRaster()
    }

    static func giveBack(_ raster: CoverageRaster) {
        guard raster.capacity <= maximumSpareCells else { return }
        spare.withLock { spare in
            if spare.count < maximumSpare { spare.append(raster) }
        }
    }

    /// Rasters kept now (for tests).
    static var spareCount: Int { spare.withLock { $0.count } }

    deinit {
        cells.deallocate()
        spans.deallocate()
        mask?.deallocate()
        maskSpans?.deallocate()
    }

    /// A premultiplied colour in the surface's word layout (A, R, G, B from the high byte),
    /// rounded as cairo rounds a solid source: through 16 bits, then the top 8.
    static func premultipliedWord(_ color: Color) -> UInt32 {
        func short(_ value: Double) -> UInt32 { UInt32(max(0, min(1, value)) * 65535 + 0.5) >> 8 }
        let alpha = max(0, min(1, color.alpha))
        return short(alpha) << 24 | short(color.red * alpha) << 16 | short(color.green * alpha) << 8 | short(color.blue * alpha)
    }

    /// Fills a shape made of pieces, each a set of contours that does not overlap itself (a
    /// stroke cut where it would): where pieces overlap, their union is drawn once. A pixel
    /// that two pieces cover in part gets a + b − ab, the union of two edges crossing in it
    /// (exact when they cross square), or near a designed overlap the larger of the two.
    func fill(pieces: [Piece], rule: FillRule, word: UInt32,
              into data: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int) -> Bool {
        let w = Double(width), h = Double(height)
        var minX = w, minY = h, maxX = 0.0, maxY = 0.0, anyRightOfLeftEdge = false
        for piece in pieces {
            for contour in piece.contours where contour.count > 1 {
                for p in contour {
                    if p.x > 0 { anyRightOfLeftEdge = true }
                    let x = min(max(p.x, 0), w), y = min(max(p.y, 0), h)
                    minX = min(minX, x); maxX = max(maxX, x)
                    minY = min(minY, y); maxY = max(maxY, y)
                }
            }
        }
        guard anyRightOfLeftEdge, maxY > minY else { return true }  // nothing on the surface
        let box = (x0: Int(minX.rounded(.down)), y0: Int(minY.rounded(.down)),
                   x1: Int(maxX.rounded(.up)), y1: Int(maxY.rounded(.up)))
        let columns = box.x1 - box.x0 + 2, rows = box.y1 - box.y0
        guard columns * rows <= Self.maximumCells else { return false }
        reserve(columns * rows, rows: rows)
        if pieces.count > 1, mask == nil {
            mask = .allocate(capacity: capacity)
            mask?.initialize(repeating: 0, count: capacity)
            maskSpans = .allocate(capacity: spanCapacity)
            maskSpans?.initialize(repeating: .empty, count: spanCapacity)
        }
        let region = Region(cells: cells, spans: spans, columns: columns, rows: rows,
                            originX: Double(box.x0), originY: Double(box.y0), width: w, height: h)
        let target = Target(data: data, stride: stride, x0: box.x0, y0: box.y0, visibleColumns: min(columns, width - box.x0))
        for piece in pieces {
            for contour in piece.contours where contour.count > 1 {
                var previous = contour[contour.count - 1]
                for point in contour {
                    region.addEdge(previous, point)
                    previous = point
                }
            }
            if pieces.count > 1, let mask, let maskSpans {
                region.unite(rule: rule, into: mask, spans: maskSpans, overlapping: piece.overlapsPrevious)
            } else {
                region.composite(rule: rule, word: word, into: target)
            }
        }
        if pieces.count > 1, let mask, let maskSpans {
            Region(cells: mask, spans: maskSpans, columns: columns, rows: rows, originX: 0, originY: 0, width: w, height: h)
                .compositeCoverage(word: word, into: target)
        }
        return true
    }

    private func reserve(_ count: Int, rows: Int) {
        if count > capacity {
            cells.deallocate()
            capacity = max(count, capacity * 2)
            cells = .allocate(capacity: capacity)
            cells.initialize(repeating: 0, count: capacity)
            if let old = mask {
                old.deallocate()
                mask = .allocate(capacity: capacity)
                mask?.initialize(repeating: 0, count: capacity)
            }
        }
        if rows > spanCapacity {
            spans.deallocate()
            spanCapacity = max(rows, spanCapacity * 2)
            spans = .allocate(capacity: spanCapacity)
            spans.initialize(repeating: .empty, count: spanCapacity)
            if let old = maskSpans {
                old.deallocate()
                maskSpans = .allocate(capacity: spanCapacity)
                maskSpans?.initialize(repeating: .empty, count: spanCapacity)
            }
        }
    }
}

/// The cells of a row that edges touched; `empty` until one does.
struct RowSpan {
    var first: Int32
    var last: Int32
    static let empty = RowSpan(first: .max, last: -1)
}

/// The cells of one shape's box on the surface: `rows` rows of `columns` cells, the first
/// at surface pixel (originX, originY).
private struct Region {
    let cells: UnsafeMutablePointer<Float>
    let spans: UnsafeMutablePointer<RowSpan>
    let columns: Int
    let rows: Int
    let originX: Double
    let originY: Double
    let width: Double
    let height: Double

    /// Adds the edge from a to b, clipped to the surface: the parts above and below it add
    /// nothing; the parts left of it become a vertical edge on its left side (they still
    /// wind the pixels to their right), those right of it one on its right side.
    func addEdge(_ a: PixelPoint, _ b: PixelPoint) {
        var (x0, y0, x1, y1) = (a.x, a.y, b.x, b.y)
        guard y0 != y1 else { return }
        // Clip to 0 <= y <= height along the edge.
        let dxdy = (x1 - x0) / (y1 - y0)
        if y0 < y1 {
            guard y1 > 0, y0 < height else { return }
            if y0 < 0 { x0 += (0 - y0) * dxdy; y0 = 0 }
            if y1 > height { x1 = x0 + (height - y0) * dxdy; y1 = height }
        } else {
            guard y0 > 0, y1 < height else { return }
            if y1 < 0 { x1 += (0 - y1) * dxdy; y1 = 0 }
            if y0 > height { x0 = x1 + (height - y1) * dxdy; y0 = height }
        }
        // Split where the edge crosses x = 0 and x = width, then clamp x to [0, width].
        var first = 2.0, second = 2.0
        if x0 != x1 {
            let atLeft = (0 - x0) / (x1 - x0), atRight = (width - x0) / (x1 - x0)
            if atLeft > 0, atLeft < 1 { first = atLeft }
            if atRight > 0, atRight < 1 { second = atRight }
            if second < first { swap(&first, &second) }
        }
        var startX = x0, startY = y0
        for step in 0..<3 {
            let t = step == 0 ? first : step == 1 ? second : 1.0
            guard t <= 1 else { continue }
            let endX = t == 1 ? x1 : x0 + (x1 - x0) * t, endY = t == 1 ? y1 : y0 + (y1 - y0) * t
            line(min(max(startX, 0), width) - originX, startY - originY, min(max(endX, 0), width) - originX, endY - originY)
            startX = endX
            startY = endY
        }
    }

    /// Accumulates one edge in region coordinates: per row it crosses, the signed area
    /// between it and the row's right end, split between the cells it passes (font-rs's
    /// accumulation, with every index clamped into the region).
    private func line(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double) {
        guard ay != by, ax.isFinite, ay.isFinite, bx.isFinite, by.isFinite else { return }
        let maxX = Double(columns - 2)
        let downward = ay < by
        let direction: Float = downward ? 1 : -1
        let top = downward ? PixelPoint(x: ax, y: ay) : PixelPoint(x: bx, y: by)
        let bottom = downward ? PixelPoint(x: bx, y: by) : PixelPoint(x: ax, y: ay)
        let topY = max(0, top.y), bottomY = min(Double(rows), bottom.y)
        guard bottomY > topY else { return }
        let dxdy = (bottom.x - top.x) / (bottom.y - top.y)
        // Clamped so that NaN (an infinite slope times zero, from subnormal heights) is 0.
        func clamp(_ v: Double) -> Double { v >= 0 ? (v <= maxX ? v : maxX) : 0 }
        var x = clamp(top.x + (topY - top.y) * dxdy)
        let firstRow = Int(topY), lastRow = min(rows, Self.ceiling(bottomY))
        guard firstRow < lastRow else { return }
        for row in firstRow..<lastRow {
            let y = Double(row)
            let dy = min(y + 1, bottomY) - max(y, topY)
            let next = clamp(x + dxdy * dy)
            let d = Float(dy) * direction
            let rowCells = cells + row * columns
            let (left, right) = x < next ? (x, next) : (next, x)
            let leftIndex = Int(left), rightCeiling = Self.ceiling(right)
            let leftFloor = Double(leftIndex), rightCeil = Double(rightCeiling)
            let rightIndex = max(rightCeiling, leftIndex + 1)
            spans[row].first = min(spans[row].first, Int32(leftIndex))
            spans[row].last = max(spans[row].last, Int32(rightIndex))
            if rightIndex <= leftIndex + 1 {
                // Within one pixel: the area right of the edge's mean x in it.
                let mean = Float(0.5 * (x + next) - leftFloor)
                rowCells[leftIndex] += d - d * mean
                rowCells[leftIndex + 1] += d * mean
            } else {
                let s = Float(1 / (right - left))
                let leftFraction = Float(left - leftFloor)
                let a0 = 0.5 * s * (1 - leftFraction) * (1 - leftFraction)
                let rightFraction = Float(right - rightCeil + 1)
                let am = 0.5 * s * rightFraction * rightFraction
                rowCells[leftIndex] += d * a0
                if rightIndex == leftIndex + 2 {
                    rowCells[leftIndex + 1] += d * (1 - a0 - am)
                } else {
                    let a1 = s * (1.5 - leftFraction)
                    rowCells[leftIndex + 1] += d * (a1 - a0)
                    for index in (leftIndex + 2)..<(rightIndex - 1) { rowCells[index] += d * s }
                    let a2 = a1 + Float(rightIndex - leftIndex - 3) * s
                    rowCells[rightIndex - 1] += d * (1 - a2 - am)
                }
                rowCells[rightIndex] += d * am
            }
            x = next
        }
    }

    /// Sums each row into coverage, composites `word` OVER the surface through it, and zeroes
    /// the cells for the next shape. Coverage changes only at cells an edge touched; between
    /// them the blended source is reused.
    func composite(rule: FillRule, word: UInt32, into target: Target) {
        for row in 0..<rows {
            let span = spans[row]
            spans[row] = .empty
            guard span.first <= span.last else { continue }
            let rowCells = cells + row * columns, pixels = target.row(row)
            var sum: Float = 0, column = Int(span.first)
            let last = Int(span.last)
            while column <= last {
                sum += rowCells[column]
                rowCells[column] = 0
                let source = PixelWord.Source(word, coverage: Self.coverage(sum, rule))
                // The cells no edge touched after this one: the same coverage, blended as a run.
                var end = column + 1
                while end <= last, rowCells[end] == 0 { end += 1 }
                let visibleEnd = min(end, target.visibleColumns)
                if column < visibleEnd { source.blend(into: pixels + column, count: visibleEnd - column) }
                column = end
            }
        }
    }

    /// Sums each row into coverage and unites it with what `mask` holds (growing `spans`, the
    /// mask's rows); zeroes the cells for the next piece.
    func unite(rule: FillRule, into mask: UnsafeMutablePointer<Float>, spans maskSpans: UnsafeMutablePointer<RowSpan>,
               overlapping designed: (point: PixelPoint, reach: Double)?) {
        for row in 0..<rows {
            let span = spans[row]
            spans[row] = .empty
            guard span.first <= span.last else { continue }
            maskSpans[row].first = min(maskSpans[row].first, span.first)
            maskSpans[row].last = max(maskSpans[row].last, span.last)
            let rowCells = cells + row * columns, rowMask = mask + row * columns
            var sum: Float = 0
            for column in Int(span.first)...Int(span.last) {
                sum += rowCells[column]
                rowCells[column] = 0
                let a = rowMask[column], b = Self.coverage(sum, rule)
                if a == 0 || b >= 1 {
                    rowMask[column] = max(a, b)
                } else if b > 0, a < 1 {
                    let x = originX + Double(column) + 0.5 - (designed?.point.x ?? 0), y = originY + Double(row) + 0.5 - (designed?.point.y ?? 0)
                    if let designed, x * x + y * y <= designed.reach * designed.reach {
                        rowMask[column] = max(a, b)
                    } else {
                        rowMask[column] = a + b - a * b
                    }
                }
            }
        }
    }

    /// Composites `word` through the coverage these cells hold (a mask), and zeroes them.
    func compositeCoverage(word: UInt32, into target: Target) {
        for row in 0..<rows {
            let span = spans[row]
            spans[row] = .empty
            guard span.first <= span.last else { continue }
            let rowCells = cells + row * columns, pixels = target.row(row)
            var previous: Float = 0, source = PixelWord.Source.none
            for column in Int(span.first)...Int(span.last) {
                let coverage = rowCells[column]
                rowCells[column] = 0
                if coverage != previous {
                    previous = coverage
                    source = PixelWord.Source(word, coverage: coverage)
                }
                if column < target.visibleColumns { source.blend(into: pixels + column, count: 1) }
            }
        }
    }

    /// The smallest integer at or above a non-negative x (in range), without a call into
    /// libm: `rounded(.up)` is one on the baseline x86-64 this builds for, and this runs
    /// once a row for every edge.
    @inline(__always)
    static func ceiling(_ x: Double) -> Int {
        let truncated = Int(x)
        return Double(truncated) < x ? truncated + 1 : truncated
    }

    /// The share of a pixel inside, from the winding area summed along its row.
    @inline(__always)
    static func coverage(_ sum: Float, _ rule: FillRule) -> Float {
        var coverage = abs(sum)
        if rule == .evenOdd {
            coverage -= 2 * Float(Int(coverage * 0.5))
            if coverage > 1 { coverage = 2 - coverage }
        }
        return min(coverage, 1)
    }
}

/// Where a shape's box lands on the surface: its first pixel, and how many of its columns
/// are on the surface (the last two are spare).
struct Target {
    let data: UnsafeMutablePointer<UInt8>
    let stride: Int
    let x0: Int
    let y0: Int
    let visibleColumns: Int

    func row(_ row: Int) -> UnsafeMutablePointer<UInt32> {
        UnsafeMutableRawPointer(data + (y0 + row) * stride + x0 * 4).assumingMemoryBound(to: UInt32.self)
    }
}

/// pixman's arithmetic on four 8-bit channels in one word, two at a time.
enum PixelWord {
    /// A colour through a coverage in [0, 1] (rounded to 8 bits, as cairo's mask), ready to
    /// blend OVER pixels.
    struct Source {
        let word: UInt32
        let kind: Kind
        enum Kind { case nothing, replaces, blends }
        static let none = Source(word: 0, kind: .nothing)

        private init(word: UInt32, kind: Kind) {
            self.word = word
            self.kind = kind
        }

        @inline(__always)
        init(_ word: UInt32, coverage: Float) {
            let mask = UInt32(coverage * 255 + 0.5)
            if mask == 0 {
                self.init(word: 0, kind: .nothing)
            } else if mask == 255 {
                self.init(word: word, kind: word >> 24 == 255 ? .replaces : .blends)
            } else {
                self.init(word: PixelWord.multiply(word, mask), kind: .blends)
            }
        }

        /// Blends over `count` pixels in a row (a loop the compiler vectorizes).
        @inline(__always)
        func blend(into pixels: UnsafeMutablePointer<UInt32>, count: Int) {
            switch kind {
            case .nothing: break
            case .replaces: pixels.update(repeating: word, count: count)
            case .blends: for index in 0..<count { pixels[index] = PixelWord.over(word, pixels[index]) }
            }
        }
    }

    /// Each channel times `a` / 255, rounded (UN8x4_MUL_UN8).
    @inline(__always)
    static func multiply(_ x: UInt32, _ a: UInt32) -> UInt32 {
        var low = (x & 0x00FF_00FF) &* a &+ 0x0080_0080
        low = ((low &+ ((low >> 8) & 0x00FF_00FF)) >> 8) & 0x00FF_00FF
        var high = ((x >> 8) & 0x00FF_00FF) &* a &+ 0x0080_0080
        high = (high &+ ((high >> 8) & 0x00FF_00FF)) & 0xFF00_FF00
        return high | low
    }

    /// Premultiplied `source` OVER `destination`: source + destination × (255 − source alpha)
    /// / 255, each channel saturated at 255 (UN8x4_MUL_UN8_ADD_UN8x4).
    @inline(__always)
    static func over(_ source: UInt32, _ destination: UInt32) -> UInt32 {
        let scaled = multiply(destination, 255 - (source >> 24))
        var low = (scaled & 0x00FF_00FF) &+ (source & 0x00FF_00FF)
        low |= 0x0100_0100 &- ((low >> 8) & 0x00FF_00FF)
        low &= 0x00FF_00FF
        var high = ((scaled >> 8) & 0x00FF_00FF) &+ ((source >> 8) & 0x00FF_00FF)
        high |= 0x0100_0100 &- ((high >> 8) & 0x00FF_00FF)
        high &= 0x00FF_00FF
        return high << 8 | low
    }
}
