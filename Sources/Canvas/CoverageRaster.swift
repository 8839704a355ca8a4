import Synchronization
import TileMath
internal import CPixelLoops

/// Fills polygons with a solid colour straight into a premultiplied ARGB32 surface, each
/// pixel covered by the exact area of the polygon inside it (the signed-area accumulation of
/// libart, AGG and font-rs): every edge adds, to the cells of each pixel row it crosses,
/// the area it sweeps; one pass along the row sums them into coverage.
///
/// Why not cairo: cairo's rasterizer samples 15 sub-rows per pixel row, and on a dense
/// feature layer (hundreds of small shapes and thin lines a tile) it was two thirds of a
/// tile's time. This one walks each edge once per row, and composites in place with
/// pixman's OVER arithmetic, so coverage differs from cairo's by rounding at edges only.
/// Its loops (edges, sums, blending, the union of pieces) are C, `tk_coverage.c`: in Swift
/// they were half of a dense tile's time, a pixel blended at a time behind a branch.
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
        var region = tk_region(cells: cells, spans: UnsafeMutableRawPointer(spans).assumingMemoryBound(to: Int32.self),
                               columns: columns, rows: rows, origin_x: Double(box.x0), origin_y: Double(box.y0), width: w, height: h)
        var target = tk_target(data: data, stride: stride, x0: box.x0, y0: box.y0, visible: min(columns, width - box.x0))
        var maskRegion = region
        if pieces.count > 1, let mask, let maskSpans {
            maskRegion.cells = mask
            maskRegion.spans = UnsafeMutableRawPointer(maskSpans).assumingMemoryBound(to: Int32.self)
        }
        for piece in pieces {
            for contour in piece.contours where contour.count > 1 {
                // PixelPoint is two Doubles, x then y: the C loop reads them as pairs.
                contour.withUnsafeBytes { bytes in
                    tk_region_add_contour(&region, bytes.baseAddress?.assumingMemoryBound(to: Double.self), contour.count)
                }
            }
            if pieces.count > 1 {
                let designed = piece.overlapsPrevious
                tk_region_unite(&region, rule == .evenOdd, &maskRegion, designed != nil,
                                designed?.point.x ?? 0, designed?.point.y ?? 0, designed?.reach ?? 0)
            } else {
                tk_region_composite(&region, rule == .evenOdd, word, &target)
            }
        }
        if pieces.count > 1 { tk_region_composite_mask(&maskRegion, word, &target) }
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

/// The cells of a row that edges touched; `empty` until one does. tk_coverage.c reads and
/// writes these as pairs of int32 (`tk_region.spans`): keep the two fields, in this order.
struct RowSpan {
    var first: Int32
    var last: Int32
    static let empty = RowSpan(first: .max, last: -1)
}
