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

    public init(source: any TileSource, box: BoundingBox, zooms: ClosedRange<Int>) {
        self.source = source
        self.box = box
        self.zooms = zooms
    }

    /// The tiles to seed, zoom by zoom.
    public var ranges: [TileRange] { zooms.flatMap { TileRange.covering(box, zoom: $0) } }
    public var tileCount: Int { ranges.reduce(0) { $0 + $1.count } }

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
            for tile in range {
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
        // A plain loop over an index, with the group's results in a Sendable struct: nested
        // functions capturing the group and an iterator were miscompiled in release builds
        // (tiles arrived corrupted), so this stays deliberately simple.
        //
        // A write that fails (a full disk) stops the scheduling of new fetches, and the ones
        // in flight are let finish (each is bounded by its timeout and retries) before the
        // error is thrown. They are never cancelled: cancelling the group cancels their
        // URLSession tasks, and Foundation on Linux could then deadlock (a lock-order inversion
        // between the task and its session; `seed` into a full disk hung in 3 of 14 runs).
        var writeFailure: (any Error)?
        await withTaskGroup(of: Fetched.self) { group in
            var index = 0
            while index < pending.count, index < max(1, concurrency) {
                let tile = pending[index]
                group.addTask { await Self.fetch(tile, from: source, scale: scale) }
                index += 1
            }
            // Only this task writes: the writer never crosses into the fetching tasks.
            while let fetched = await group.next() {
                guard writeFailure == nil else { continue }  // draining
                switch fetched.outcome {
                case .success(.tile(let data)):
                    do {
                        try writer.write(fetched.tile, bytes: data.bytes)
                    } catch {
                        writeFailure = error
                        continue
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
                if index < pending.count, !Task.isCancelled {
                    let tile = pending[index]
                    group.addTask { await Self.fetch(tile, from: source, scale: scale) }
                    index += 1
                }
            }
        }
        if let writeFailure { throw writeFailure }
        try Task.checkCancellation()
        var finished = metadata
        finished.format = format
        finished.minZoom = zooms.lowerBound
        finished.maxZoom = zooms.upperBound
        finished.bounds = finished.bounds ?? BoundingBox(west: max(-180, box.west), south: max(-85.0511, box.south),
                                                         east: min(180, box.east), north: min(85.0511, box.north))
        try writer.finish(metadata: finished)
        report.elapsed = clock.now - start
        return report
    }
}
