import Foundation
public import TileMath

/// Copies a region of a source into a store: the tiles covering a box at a range of zooms,
/// fetched by a bounded number of concurrent tasks and written by one. Tiles the store
/// already holds are skipped, so an interrupted seed resumes where it stopped.
public struct Seeder {
    public struct Progress: Sendable {
        public var done: Int
        public var total: Int
        public var fetched: Int
        public var skipped: Int
        public var absent: Int
        public var failed: Int
        public var elapsed: Duration
    }

    public struct Report: Sendable {
        public var total: Int
        public var fetched: Int
        /// Already in the store.
        public var skipped: Int
        /// The source has no tile there (404, outside its data).
        public var absent: Int
        /// Tiles that could not be had, with why.
        public var failures: [(TileID, String)]
        public var bytes: Int
        public var elapsed: Duration
    }

    public let source: any TileSource
    public let box: BoundingBox
    public let zooms: ClosedRange<Int>
    public var concurrency = 4
    public var scale = 1
    /// The share of a sharded seed this run fetches (`share(_:splitZoom:)`); nil: every tile.
    public private(set) var shard: ShardSpec?
    public private(set) var shardPlan: ShardPlan?

    public init(source: any TileSource, box: BoundingBox, zooms: ClosedRange<Int>) {
        self.source = source
        self.box = box
        self.zooms = zooms
    }

    /// The tiles of the region, zoom by zoom (a shard fetches those it `fetches`).
    public var ranges: [TileRange] { zooms.flatMap { TileRange.covering(box, zoom: $0) } }
    /// The tiles this run fetches: the region's, or a shard's share of them.
    public var tileCount: Int {
        guard shardPlan != nil else { return ranges.reduce(0) { $0 + $1.count } }
        return ranges.reduce(0) { count, range in count + range.reduce(0) { $0 + (fetches($1) ? 1 : 0) } }
    }

    /// Makes this run shard `spec` of a seed cut into `spec.count` (see `ShardPlan`: every
    /// zoom is shared out, subtrees at and below the split zoom, row-major blocks above, as
    /// fetching a tile needs no other). Throws when `splitZoom` is outside the zooms.
    public mutating func share(_ spec: ShardSpec, splitZoom: Int? = nil) throws(TileMathError) {
        var ranges = [Int: [TileRange]]()
        for z in zooms { ranges[z] = TileRange.covering(box, zoom: z) }
        shardPlan = try ShardPlan(count: spec.count, zooms: zooms, ranges: ranges, splitZoom: splitZoom)
        shard = spec
    }

    /// True when this run fetches `tile` (every tile, unless it is a shard).
    public func fetches(_ tile: TileID) -> Bool {
        guard let shardPlan, let shard else { return true }
        return shardPlan.owns(shard, tile)
    }

    /// The bounds a seeded store records: the box, within the Web Mercator world. Clamped
    /// to the limit as TileJSON writes it (±85.051129°, a hair beyond the exact one), the
    /// latitude `TileRange.covering` clamps to when it picks the tiles to seed: the recorded
    /// box holds every seeded tile, the edge row included (85.0511°, which it was, left the
    /// top row's northern 3e-5° out).
    public var storedBounds: BoundingBox {
        let limit = Coordinate.roundedMaxMercatorLatitude
        return BoundingBox(west: max(-180, box.west), south: max(-limit, box.south), east: min(180, box.east), north: min(limit, box.north))
    }

    struct Fetched: Sendable {
        let tile: TileID
        let outcome: Result<TileResult, any Error>
    }

    static func fetch(_ tile: TileID, from source: any TileSource, scale: Int) async -> Fetched {
        do {
            return Fetched(tile: tile, outcome: .success(try await source.tile(TileRequest(tile, scale: scale))))
        } catch {
            return Fetched(tile: tile, outcome: .failure(error))
        }
    }

    public func run(into writer: any TileStoreWriter, metadata: TileSetMetadata,
                    progress: (Progress) -> Void = { _ in }) async throws -> Report {
        let clock = ContinuousClock()
        let start = clock.now
        let total = tileCount
        var report = Report(total: total, fetched: 0, skipped: 0, absent: 0, failures: [], bytes: 0, elapsed: .zero)
        var pending = [TileID]()
        for range in ranges {
            for tile in range where fetches(tile) {
                if try writer.contains(tile) { report.skipped += 1 } else { pending.append(tile) }
            }
        }
        func tell() {
            let done = report.fetched + report.skipped + report.absent + report.failures.count
            progress(Progress(done: done, total: total, fetched: report.fetched, skipped: report.skipped,
                              absent: report.absent, failed: report.failures.count, elapsed: clock.now - start))
        }
        tell()
        let source = self.source, scale = self.scale
        var format = metadata.format
        // A write that fails (a full disk) stops the scheduling of new fetches, and the ones
        // in flight are let finish (each is bounded by its timeout and retries) before the
        // error is thrown. They are never cancelled: cancelling the group cancels their
        // URLSession tasks, and Foundation on Linux could then deadlock (a lock-order inversion
        // between the task and its session; `seed` into a full disk hung in 3 of 14 runs).
        // So the failure is kept here, not thrown from `take` (which would cancel them).
        var writeFailure: (any Error)?
        // Only this task writes (`take` runs on it): the writer never crosses into the fetching tasks.
        try await pending.concurrentForEach(maxInFlight: concurrency, { tile in await Self.fetch(tile, from: source, scale: scale) }) { _, fetched in
            guard writeFailure == nil else { return false }  // draining
            switch fetched.outcome {
            case .success(.tile(let data)):
                do {
                    try writer.write(fetched.tile, bytes: data.bytes)
                } catch {
                    writeFailure = error
                    return false
                }
                format = format ?? data.format
                report.fetched += 1
                report.bytes += data.bytes.count
            case .success(.noTile): report.absent += 1
            case .success(.unavailable(let retryAfter)):
                report.failures.append((fetched.tile, "unavailable" + (retryAfter.map { " (retry after \(String(format: "%.0f", $0.seconds)) s)" } ?? "")))
            case .failure(let error): report.failures.append((fetched.tile, "\(error)"))
            }
            tell()
            // A cancelled seed (its caller gave up) also stops scheduling and drains.
            return !Task.isCancelled
        }
        if let writeFailure { throw writeFailure }
        try Task.checkCancellation()
        var finished = metadata
        finished.format = format
        finished.minZoom = zooms.lowerBound
        finished.maxZoom = zooms.upperBound
        finished.bounds = finished.bounds ?? storedBounds
        try writer.finish(metadata: finished)
        report.elapsed = clock.now - start
        return report
    }
}
