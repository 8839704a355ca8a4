/// How the tiles of one build are shared among `count` shards so that each shard can run
/// on its own machine with no coordination, and no two write the same tile.
///
/// **Subtrees below the split zoom.** At the split zoom the build's tiles are numbered in
/// row-major order (rows from the north, columns from the west, range after range) and
/// cut into `count` contiguous blocks whose sizes differ by at most one: tile number `i`
/// of `total` belongs to shard `i * count / total`. Every deeper tile belongs to the shard
/// of its ancestor at the split zoom, so a shard owns whole subtrees, and a pyramid shard
/// can average each of its parents from children it made itself. Contiguous rows also let
/// a pyramid shard read only its band of the source image.
///
/// **Zooms above the split** have tiles whose children belong to several shards. A
/// pyramid that averages parents from children leaves them to `tilekit merge`; work with
/// no dependency between zooms (seeding, a pyramid resampled per zoom) shares them out
/// the same way, by row-major blocks of each zoom's own tiles.
///
/// **The split zoom** is, unless chosen, the lowest zoom of the build with at least
/// `tilesPerShard` (8) tiles per shard, or the deepest zoom when none has that many: deep
/// enough that the blocks are balanced, shallow enough that the zooms left to the merge
/// are a small fraction of the work (about a third of the split zoom's tile count).
///
/// A tile outside the build's ranges (which a caller should not ask about) still gets a
/// stable owner, from its (ancestor's) coordinates, so ownership is a function of the tile.
public struct ShardPlan: Hashable, Sendable {
    public let count: Int
    public let zooms: ClosedRange<Int>
    public let splitZoom: Int
    /// The build's tiles, zoom by zoom, in the order they are numbered.
    public let ranges: [Int: [TileRange]]

    /// Tiles per shard at the split zoom chosen by default.
    public static let tilesPerShard = 8

    /// - Parameters:
    ///   - ranges: the build's tiles at each zoom of `zooms` (a zoom with none may be absent).
    ///   - splitZoom: the zoom whose subtrees are shared out; nil chooses it (see the type).
    public init(count: Int, zooms: ClosedRange<Int>, ranges: [Int: [TileRange]], splitZoom: Int? = nil) throws(TileMathError) {
        guard (1...ShardSpec.maxCount).contains(count) else {
            throw .invalidShard("?/\(count)", reason: "the shard count \(count) is not in 1-\(ShardSpec.maxCount)")
        }
        guard zooms.lowerBound >= 0, zooms.upperBound <= TileID.maxZoom else { throw .invalidZoom(zooms.upperBound) }
        if let splitZoom, !zooms.contains(splitZoom) {
            throw .invalidSplitZoom(splitZoom, reason: "is outside the build's zooms \(zooms.lowerBound)-\(zooms.upperBound)")
        }
        self.count = count
        self.zooms = zooms
        self.ranges = ranges
        self.splitZoom = splitZoom ?? Self.defaultSplitZoom(count: count, zooms: zooms, ranges: ranges)
    }

    /// The lowest zoom with at least `tilesPerShard` tiles per shard; the deepest otherwise.
    public static func defaultSplitZoom(count: Int, zooms: ClosedRange<Int>, ranges: [Int: [TileRange]]) -> Int {
        let (wanted, overflow) = count.multipliedReportingOverflow(by: tilesPerShard)
        for z in zooms where !overflow && tiles(atZoom: z, ranges) >= wanted { return z }
        return zooms.upperBound
    }

    /// The number of tiles at a zoom (saturating: ranges at zoom 30 can hold 2^60 each).
    static func tiles(atZoom z: Int, _ ranges: [Int: [TileRange]]) -> Int {
        (ranges[z] ?? []).reduce(0) { total, range in
            let (sum, overflow) = total.addingReportingOverflow(range.count)
            return overflow ? .max : sum
        }
    }

    /// The shard (in `0..<count`) that makes `tile`.
    public func owner(of tile: TileID) -> Int {
        let numbered = tile.z >= splitZoom ? (tile.ancestor(atZoom: splitZoom) ?? tile) : tile
        guard let (index, total) = position(of: numbered) else {
            // Not one of the build's tiles: any fixed function of the tile will do.
            let mixed = UInt64(truncatingIfNeeded: numbered.x) &* 0x9e37_79b9_7f4a_7c15 ^ UInt64(truncatingIfNeeded: numbered.y) &* 0xff51_afd7_ed55_8ccd
            return Int(mixed % UInt64(count))
        }
        // index * count / total without overflow: index < total, so the quotient is < count.
        let product = index.multipliedFullWidth(by: count)
        return total.dividingFullWidth((high: product.high, low: product.low)).quotient
    }

    /// True when `tile` is made by shard `spec` (whose count must be this plan's).
    public func owns(_ spec: ShardSpec, _ tile: TileID) -> Bool { owner(of: tile) == spec.index }

    /// A tile's number among its zoom's tiles (row-major, range after range) and their count.
    func position(of tile: TileID) -> (index: Int, total: Int)? {
        guard let zoomRanges = ranges[tile.z] else { return nil }
        var before = 0
        var found: Int?
        for range in zoomRanges {
            if found == nil, range.contains(tile) {
                found = before + (tile.y - range.minY) * range.width + (tile.x - range.minX)
            }
            let (sum, overflow) = before.addingReportingOverflow(range.count)
            guard !overflow else { return nil }
            before = sum
        }
        guard let found else { return nil }
        return (found, before)
    }
}
