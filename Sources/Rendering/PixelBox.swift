import Foundation
public import TileMath

/// An axis-aligned box in pixels: `minX ..< maxX` by `minY ..< maxY`, y down.
public struct PixelBox: Hashable, Sendable {
    public var minX, minY, maxX, maxY: Double

    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    /// A box of `size` centred on `center`.
    public init(center: PixelPoint, size: PixelSize) {
        self.init(minX: center.x - size.width / 2, minY: center.y - size.height / 2,
                  maxX: center.x + size.width / 2, maxY: center.y + size.height / 2)
    }

    public var width: Double { maxX - minX }
    public var height: Double { maxY - minY }
    public var center: PixelPoint { PixelPoint(x: (minX + maxX) / 2, y: (minY + maxY) / 2) }
    /// Every side a finite number, and not inverted.
    public var isValid: Bool { minX.isFinite && minY.isFinite && maxX.isFinite && maxY.isFinite && minX <= maxX && minY <= maxY }

    /// True when the boxes share some area (touching edges do not count).
    public func intersects(_ other: PixelBox) -> Bool {
        minX < other.maxX && other.minX < maxX && minY < other.maxY && other.minY < maxY
    }

    public func grown(by margin: Double) -> PixelBox {
        PixelBox(minX: minX - margin, minY: minY - margin, maxX: maxX + margin, maxY: maxY + margin)
    }

    public func offset(x: Double, y: Double) -> PixelBox {
        PixelBox(minX: minX + x, minY: minY + y, maxX: maxX + x, maxY: maxY + y)
    }

    public func scaled(by factor: Double) -> PixelBox {
        PixelBox(minX: minX * factor, minY: minY * factor, maxX: maxX * factor, maxY: maxY * factor)
    }
}

/// Boxes bucketed by square cells, to find those near a box without looking at all of
/// them: label placement asks "does this candidate hit anything placed?" once per
/// candidate, and a tile asks "which labels cross me?".
struct SpatialGrid {
    /// Cell side in pixels.
    let cell: Double
    private(set) var boxes: [PixelBox] = []
    private var buckets: [Cell: [Int]] = [:]

    struct Cell: Hashable { let x: Int, y: Int }

    /// Coordinates beyond this (pixels) are refused: far past any world at zoom 30, @4x.
    static let limit = 1e15
    /// A box spanning more cells than this is refused (no label or icon is that large).
    static let maxCells = 4096

    init(cell: Double) { self.cell = cell }

    /// The cells a box covers, nil when it is not a finite box of reasonable size.
    private func cells(_ box: PixelBox) -> (x: ClosedRange<Int>, y: ClosedRange<Int>)? {
        guard box.isValid, abs(box.minX) < Self.limit, abs(box.maxX) < Self.limit, abs(box.minY) < Self.limit, abs(box.maxY) < Self.limit else { return nil }
        // Bounded above, so these conversions cannot trap.
        let x0 = Int((box.minX / cell).rounded(.down)), x1 = Int((box.maxX / cell).rounded(.down))
        let y0 = Int((box.minY / cell).rounded(.down)), y1 = Int((box.maxY / cell).rounded(.down))
        guard (x1 - x0 + 1) * (y1 - y0 + 1) <= Self.maxCells else { return nil }
        return (x0...x1, y0...y1)
    }

    /// Adds a box; false (and nothing added) when it is not a box the grid can hold.
    @discardableResult
    mutating func insert(_ box: PixelBox) -> Bool {
        guard let (xs, ys) = cells(box) else { return false }
        let index = boxes.count
        boxes.append(box)
        for x in xs { for y in ys { buckets[Cell(x: x, y: y), default: []].append(index) } }
        return true
    }

    /// True when the box hits a box of the grid; a box the grid cannot hold hits everything.
    func hits(_ box: PixelBox) -> Bool {
        guard let (xs, ys) = cells(box) else { return true }
        for x in xs {
            for y in ys {
                guard let indices = buckets[Cell(x: x, y: y)] else { continue }
                if indices.contains(where: { boxes[$0].intersects(box) }) { return true }
            }
        }
        return false
    }

    /// The indices of the boxes that intersect `box`, ascending (insertion order).
    func indices(intersecting box: PixelBox) -> [Int] {
        guard box.isValid else { return [] }
        // A window larger than the grid's cells allow (a big snapshot): look at every box.
        guard let (xs, ys) = cells(box) else { return boxes.indices.filter { boxes[$0].intersects(box) } }
        var found = Set<Int>()
        for x in xs { for y in ys { for i in buckets[Cell(x: x, y: y)] ?? [] where boxes[i].intersects(box) { found.insert(i) } } }
        return found.sorted()
    }
}
