import Foundation
public import Canvas
import TileMath
public import TileSources

/// How zooms below the top are made.
public enum LowerZooms: String, Sendable, CaseIterable {
    /// Each parent from its four children, averaged (gdal2tiles' `average`): one read of the image.
    case average
    /// Each zoom sampled from the image directly: one read of the image per zoom.
    case resample
}

public struct PyramidOptions: Sendable {
    /// nil: from where the image is one tile to where its pixels match (gdal2tiles' default).
    public var zooms: ClosedRange<Int>?
    public var tileSize = 256
    /// Also write @2x tiles (twice the pixels), into a sibling store NAME@2x.
    public var retina = false
    public var resampling: Resampling = .bilinear
    public var lowerZooms: LowerZooms = .average
    /// Tiles drawn at once (both cores by default).
    public var concurrency = 2
    public var encoding: EncodingOptions = .png(compressionLevel: 1)
    /// The largest source image read (its declared size is checked before any pixel is).
    public var imageLimits: ImageLimits = .scan
    /// The most memory the window of source rows may take: a row of tiles at a zoom far
    /// above the image's resolution needs the whole image at once (1 GiB by default).
    public var maxWindowBytes = 1 << 30
    /// Build only this shard's share of the tiles (`ShardPlan`); nil builds them all.
    public var shard: ShardSpec?
    /// The zoom where the shards split the build; nil lets `ShardPlan` choose.
    public var shardZoom: Int?

    public init() {}
}

public struct PyramidReport: Sendable {
    public var zooms: ClosedRange<Int>
    public var written = 0
    /// Tiles with no pixel of the image: not written.
    public var empty = 0
    /// Tiles a resumed build found already written.
    public var reused = 0
    public var bytes = 0
}

/// Cuts a georeferenced image into Web Mercator tiles.
///
/// The top zoom is drawn a row of tiles at a time from a window of source rows read
/// forward (the image is never whole in memory), the tiles of a row in parallel. Each
/// finished pair of rows makes the row of parents above it, averaged from the children
/// still in memory, and so on up: at most two rows of tiles per zoom are held.
///
/// A shard (`options.shard`) makes only the tiles its `ShardPlan` gives it, skipping the
/// rows (and source rows) of the others; with `--lower average` it stops at the split
/// zoom, and `init(upperZoomsOf:...)` (what `tilekit merge` runs) makes the zooms above
/// from the shards' split-zoom tiles through the same averaging, so the merged store is
/// the one an unsharded build makes, byte for byte.
public final class PyramidBuilder {
    /// Reads a tile of the split zoom back from the shards: its bytes and the store they
    /// came from (for errors); nil where none was made.
    public typealias StoredTiles = @Sendable (TileID) async throws -> (bytes: [UInt8], from: String)?

    /// Where the top zoom's tiles come from.
    enum Top {
        /// Sampled from a georeferenced image.
        case image(path: String, georeference: Georeference, warper: TileWarper)
        /// Read back from the shards of a build and re-encoded (the merge: the split zoom).
        case stored(StoredTiles)
    }

    let top: Top
    /// The bounds of the tiles: the image's, or a merged build's.
    public let bounds: BoundingBox
    public let options: PyramidOptions
    let stores: [StagedStore]  // one per scale: 1x, then 2x when asked
    /// Each store's scale (1 or 2): its tiles are `options.tileSize * scale` pixels.
    let scales: [Int]
    public let zooms: ClosedRange<Int>
    let ranges: [Int: TileRange]
    /// Which shard makes which tile, when this build is a shard.
    public let plan: ShardPlan?
    /// The lowest zoom this build makes (a shard that averages stops at its split zoom).
    public let lowestZoom: Int
    private var report: PyramidReport
    private var done = 0
    public let total: Int
    /// The most bytes of source rows a row of tiles of a sampled zoom needs at once.
    private var windowBytes = [Int: Int]()
    /// Children waiting for their parents, per scale and zoom: row → column → image.
    private var pending: [[Int: [Int: [Int: RGBAImage?]]]]

    public convenience init(source: String, georeference: Georeference, stores: [StagedStore], options: PyramidOptions) throws(PyramidError) {
        let zooms = options.zooms ?? georeference.defaultZooms(tileSize: options.tileSize)
        try self.init(top: .image(path: source, georeference: georeference, warper: TileWarper(georeference: georeference, resampling: options.resampling)),
                      bounds: georeference.bounds, zooms: zooms, stores: stores, scales: Array(1...max(1, stores.count)), options: options)
    }

    /// The zooms above a sharded build's split, made from its shards (what `tilekit merge`
    /// runs): the split zoom's tiles are read with `read`, written re-encoded as the build
    /// encodes them, and averaged up to the build's lowest zoom as an unsharded build does.
    public convenience init(upperZoomsOf record: ShardRecord, read: @escaping StoredTiles,
                            store: StagedStore, concurrency: Int = 2) throws(PyramidError) {
        var options = PyramidOptions()
        options.tileSize = record.tileSize
        options.encoding = record.encoding
        options.lowerZooms = .average
        options.concurrency = concurrency
        try self.init(top: .stored(read), bounds: record.bounds, zooms: record.zooms.lowerBound...record.splitZoom,
                      stores: [store], scales: [record.scale], options: options)
    }

    init(top: Top, bounds box: BoundingBox, zooms: ClosedRange<Int>, stores: [StagedStore], scales: [Int], options: PyramidOptions) throws(PyramidError) {
        self.top = top
        self.bounds = box
        self.options = options
        self.stores = stores
        self.scales = scales
        guard zooms.lowerBound >= 0, zooms.upperBound <= TileID.maxZoom else {
            throw .badZoom("zooms \(zooms.lowerBound)...\(zooms.upperBound) are out of range [0, \(TileID.maxZoom)]")
        }
        self.zooms = zooms
        var ranges = [Int: TileRange]()
        for z in zooms { ranges[z] = TileRange.covering(box, zoom: z).first }
        self.ranges = ranges
        let count = zooms.reduce(0) { $0 + (ranges[$1]?.count ?? 0) }
        // At most (4^31 - 1) / 3 tiles a store (every tile of zooms 0-30): the sum cannot overflow.
        // A plan without a store counts as one: its checks below walk every row of tiles too.
        let tiles = count * max(1, stores.count)
        guard tiles <= 50_000_000 else { throw .tooLarge("\(tiles) tiles: choose fewer zooms (--zoom)") }
        if let shard = options.shard {
            do {
                plan = try ShardPlan(count: shard.count, zooms: zooms, ranges: ranges.mapValues { [$0] }, splitZoom: options.shardZoom)
            } catch {
                throw .badZoom(error.description)
            }
        } else {
            plan = nil
        }
        lowestZoom = options.lowerZooms == .average ? plan?.splitZoom ?? zooms.lowerBound : zooms.lowerBound
        var made = count
        if let plan, let shard = options.shard {
            made = 0
            let built = options.lowerZooms == .average ? lowestZoom...zooms.upperBound : zooms
            for z in built {
                guard let range = ranges[z] else { continue }
                for tile in range where plan.owns(shard, tile) { made += 1 }
            }
        }
        total = made * stores.count
        guard case .image(_, let georeference, let warper) = top else {
            report = PyramidReport(zooms: zooms)
            pending = stores.map { _ in [:] }
            return
        }
        let sampled = options.lowerZooms == .average ? [zooms.upperBound] : Array(zooms)
        for z in sampled {
            guard let range = ranges[z] else { continue }
            let rows = Self.windowRows(range, warper: warper, tileSize: options.tileSize, imageHeight: georeference.height)
            let (bytes, overflow) = rows.multipliedReportingOverflow(by: georeference.width * 4)
            windowBytes[z] = bytes
            guard !overflow, bytes <= options.maxWindowBytes else {
                throw .tooLarge("zoom \(z) would hold \(rows) rows of the \(georeference.width) px wide image in memory at once "
                    + "(\(overflow ? "too many" : String(bytes >> 20)) MiB, the limit is \(options.maxWindowBytes >> 20) MiB): "
                    + (options.lowerZooms == .average ? "start the zooms deeper (--zoom)" : "use --lower average or start the zooms deeper (--zoom)"))
            }
        }
        report = PyramidReport(zooms: zooms)
        pending = stores.map { _ in [:] }
    }

    public func run(progress: (_ done: Int, _ total: Int) -> Void) async throws -> PyramidReport {
        switch options.lowerZooms {
        case .average:
            try await sampleZoom(zooms.upperBound, cascade: true, progress: progress)
        case .resample:
            for z in zooms.reversed() { try await sampleZoom(z, cascade: false, progress: progress) }
        }
        return report
    }

    /// The metadata each store is committed with; a shard's also holds its `ShardRecord`
    /// (for the store of `scale`: 2 is the `--retina` sibling).
    public func metadata(name: String, attribution: String?, scale: Int = 1) -> TileSetMetadata {
        let box = bounds
        let centerZoom = (zooms.lowerBound + zooms.upperBound) / 2
        var metadata = TileSetMetadata(name: name, format: options.encoding.format, bounds: box, center: box.center,
                                       centerZoom: centerZoom, minZoom: zooms.lowerBound, maxZoom: zooms.upperBound,
                                       tileSize: options.tileSize, attribution: attribution)
        if let record = shardRecord(scale: scale) {
            metadata.minZoom = lowestZoom
            metadata.centerZoom = max(centerZoom, lowestZoom)
            metadata.shardRecord = record.json
        }
        return metadata
    }

    /// What a shard's store records for `tilekit merge`; nil when this build is no shard.
    public func shardRecord(scale: Int = 1) -> ShardRecord? {
        guard let plan, let shard = options.shard, case .image(let path, let g, _) = top else { return nil }
        // What every shard of one build shares and a merge must not mix: the image (by name
        // and size, not path: shards run on different machines) and how it is placed and sampled.
        let placement = [g.a, g.b, g.c, g.d, g.e, g.f].map(\.description).joined(separator: ",")
        let build = "pyramid of \(URL(fileURLWithPath: path).lastPathComponent) (\(g.width)x\(g.height) px), "
            + "affine \(placement) in \(g.space.rawValue), resampling \(options.resampling.rawValue), lower zooms by \(options.lowerZooms.rawValue)"
        return ShardRecord(command: .pyramid, shard: shard, splitZoom: plan.splitZoom, zooms: zooms,
                           mergeMakesUpperZooms: options.lowerZooms == .average, encoding: options.encoding,
                           tileSize: options.tileSize, scale: scale, region: bounds, bounds: bounds, center: bounds.center,
                           centerZoom: (zooms.lowerBound + zooms.upperBound) / 2, build: build)
    }

    /// True when this build makes `tile`: every tile, or a shard's own.
    func makes(_ tile: TileID) -> Bool {
        guard let plan, let shard = options.shard else { return true }
        return plan.owns(shard, tile)
    }

    /// How a tile is encoded: as the build asks, but a shard keeps the split zoom of a JPEG
    /// or WebP build lossless, for the merge to average (`ShardRecord.handoffZoom`).
    private lazy var handoffZoom: Int? = shardRecord()?.handoffZoom

    /// The most source rows (clamped to the image) one row of tiles of `range` samples.
    /// Every row of tiles is looked at (the extremes fall on different rows for different
    /// transforms) until one holds `warper.mostRows`, the most any can: a thin, tall image
    /// at a deep zoom is tens of millions of rows of tiles that each hold a few source rows.
    static func windowRows(_ range: TileRange, warper: TileWarper, tileSize: Int, imageHeight: Int) -> Int {
        let ceiling = warper.mostRows(in: range, size: tileSize, imageHeight: imageHeight)
        var most = 0
        for y in range.minY...range.maxY {
            // A linear map's extremes over the band are at its corners: the first and last tiles'.
            let left = warper.sourceRows(for: TileID(z: range.z, x: range.minX, y: y), size: tileSize)
            let right = warper.sourceRows(for: TileID(z: range.z, x: range.maxX, y: y), size: tileSize)
            let low = max(0, min(left.lowerBound, right.lowerBound)), high = min(imageHeight, max(left.upperBound, right.upperBound))
            most = max(most, high - low)
            if most >= ceiling { break }
        }
        return most
    }

    // MARK: - Sampling a zoom from the image

    struct Job: Sendable {
        let store: Int
        let tile: TileID
        let size: Int
        /// A parent's four children (nil where none); empty for tiles sampled from the image.
        var children: [RGBAImage?] = []
        /// A tile read back from a shard (the merge's top zoom), still encoded, and its store.
        var stored: (bytes: [UInt8], from: String)? = nil
    }

    struct Made: Sendable {
        let job: Job
        let image: RGBAImage?
        let bytes: [UInt8]?
    }

    private func sampleZoom(_ z: Int, cascade: Bool, progress: (Int, Int) -> Void) async throws {
        guard let range = ranges[z] else { return }
        var rows: SourceRows?
        if case .image(let path, _, _) = top {
            // Read ahead one window (16-256 MiB): the next band is decoded while this one is
            // drawn. It costs that much memory again (36 MiB for a 16384 px scan at z18), within
            // `maxWindowBytes` with the window itself; past that a band waits for part of its rows.
            let window = windowBytes[z] ?? 0
            rows = try SourceRows(path: path, limits: options.imageLimits,
                                  readAhead: max(16 << 20, min(window, 256 << 20, options.maxWindowBytes - window)))
        }
        let encoding = options.encoding, handoff = handoffZoom
        for y in range.minY...range.maxY {
            var jobs = [Job]()
            // A shard skips the rows of others (and the source rows under them).
            guard (range.minX...range.maxX).contains(where: { makes(TileID(z: z, x: $0, y: y)) }) else { continue }
            for (index, store) in stores.enumerated() {
                for x in range.minX...range.maxX {
                    let tile = TileID(z: z, x: x, y: y)
                    guard makes(tile) else { continue }
                    if store.resumed, try store.contains(tile) {
                        report.reused += 1
                        done += 1
                        if cascade { pending[index][z, default: [:]][y, default: [:]][x] = .some(nil) }  // read back when needed
                        continue
                    }
                    jobs.append(Job(store: index, tile: tile, size: options.tileSize * scales[index]))
                }
            }
            if !jobs.isEmpty {
                switch top {
                case .image(_, _, let warper):
                    guard let rows else { return }
                    var low = Int.max, high = Int.min
                    for job in jobs {
                        let r = warper.sourceRows(for: job.tile, size: job.size)
                        low = min(low, r.lowerBound)
                        high = max(high, r.upperBound)
                    }
                    try rows.load(low..<high)
                    try await drawAndStore(jobs, cascade: cascade) { job in
                        let image = warper.render(job.tile, size: job.size, rows: rows)
                        return Made(job: job, image: image, bytes: try image.map { try $0.encoded(job.tile.z == handoff ? ShardRecord.handoffEncoding : encoding) })
                    }
                case .stored(let read):
                    for i in jobs.indices { jobs[i].stored = try await read(jobs[i].tile) }
                    try await drawAndStore(jobs, cascade: cascade) { job in
                        guard let (bytes, from) = job.stored else { return Made(job: job, image: nil, bytes: nil) }
                        let image: RGBAImage
                        do { image = try RGBAImage(decoding: bytes, limits: .tile) } catch {
                            throw PyramidError.unexpectedTile("\(from): tile \(job.tile) cannot be decoded: \(error)")
                        }
                        guard image.width == job.size, image.height == job.size else {
                            throw PyramidError.unexpectedTile("\(from): tile \(job.tile) is \(image.width)x\(image.height) px, the build makes \(job.size)x\(job.size)")
                        }
                        return Made(job: job, image: image, bytes: try image.encoded(encoding))
                    }
                }
            }
            progress(done, total)
            if cascade {
                for index in stores.indices { try await parents(of: z, row: y, store: index, progress: progress) }
            }
            // A row and its parents are durable together: a resumed build rereads them.
            for store in stores { try store.checkpoint() }
        }
    }

    /// Writes what was drawn and keeps its image for its parents.
    private func store(_ item: Made, cascade: Bool) throws {
        let job = item.job
        if let bytes = item.bytes {
            try stores[job.store].write(job.tile, bytes: bytes)
            report.written += 1
            report.bytes += bytes.count
        } else {
            report.empty += 1
        }
        done += 1
        // Empty tiles are simply absent; a present nil means "written earlier: read it back".
        if cascade, let image = item.image { pending[job.store][job.tile.z, default: [:]][job.tile.y, default: [:]][job.tile.x] = image }
    }

    /// Once row `y` of zoom `z` is complete with its sibling row, makes the parents' row.
    private func parents(of z: Int, row y: Int, store index: Int, progress: (Int, Int) -> Void) async throws {
        guard z > lowestZoom, let range = ranges[z], let parentRange = ranges[z - 1] else { return }
        guard y % 2 == 1 || y == range.maxY else { return }
        let py = y / 2
        let size = options.tileSize * scales[index]
        let store = stores[index]
        var children = pending[index][z] ?? [:]
        var jobs = [Job]()
        for px in parentRange.minX...parentRange.maxX {
            let parent = TileID(z: z - 1, x: px, y: py)
            guard makes(parent) else { continue }
            if store.resumed, try store.contains(parent) {
                report.reused += 1
                done += 1
                pending[index][z - 1, default: [:]][py, default: [:]][px] = .some(nil)
                continue
            }
            var four = [RGBAImage?]()
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let cx = 2 * px + dx, cy = 2 * py + dy
                guard let entry = children[cy]?[cx] else { four.append(nil); continue }
                if let image = entry {
                    four.append(image)
                } else {
                    // Written by an earlier run (or empty): read it back, at the size this run draws.
                    let child = TileID(z: z, x: cx, y: cy)
                    let image = try await store.read(child)
                    if let image, image.width != size || image.height != size {
                        throw PyramidError.unexpectedTile("\(store.partialPath): tile \(child) of the earlier run is \(image.width)x\(image.height), "
                            + "this build makes \(size)x\(size) tiles (start over without --resume)")
                    }
                    four.append(image)
                }
            }
            jobs.append(Job(store: index, tile: parent, size: size, children: four))
        }
        children[2 * py] = nil
        children[2 * py + 1] = nil
        pending[index][z] = children
        try await drawAndStore(jobs, cascade: true) { [encoding = options.encoding, handoff = handoffZoom] job in
            let image = TileWarper.average(job.children, size: job.size)
            return Made(job: job, image: image, bytes: try image.map { try $0.encoded(job.tile.z == handoff ? ShardRecord.handoffEncoding : encoding) })
        }
        progress(done, total)
        try await parents(of: z - 1, row: py, store: index, progress: progress)
    }

    /// Runs `body` over the jobs, `options.concurrency` at a time, and stores each tile as
    /// soon as it and those before it are drawn: the stores take them in the jobs' order (the
    /// same store every run), and writing overlaps drawing the tiles after it instead of
    /// waiting for the whole row.
    private func drawAndStore(_ jobs: [Job], cascade: Bool, _ body: @escaping @Sendable (Job) throws -> Made) async throws {
        var finished = [Int: Made](), next = 0
        try await jobs.concurrentForEach(maxInFlight: options.concurrency, body) { index, made in
            finished[index] = made
            while let ready = finished.removeValue(forKey: next) {
                try store(ready, cascade: cascade)
                next += 1
            }
            return true
        }
    }
}

public enum PyramidError: Error, Equatable, Sendable, CustomStringConvertible {
    case badZoom(String)
    case tooLarge(String)
    /// A tile a resumed build found, or a merge read from a shard, does not fit this build.
    case unexpectedTile(String)
    /// A shard's record (`tilekit_shard`) that cannot be read.
    case shardRecord(file: String, reason: String)
    /// Stores that cannot become one: different formats or tile sizes, shards of different builds.
    case incompatible(String)
    /// The shards given are not every shard of one build, once each.
    case incompleteShards(String)
    /// Two different tiles at one address, and no rule (`--on-conflict`) to choose.
    case conflict(tile: TileID, first: String, second: String)
    /// A tile in a shard that its build's plan gives to another shard (a shard that was
    /// altered, or a store passed as the wrong shard).
    case strayTile(file: String, tile: TileID, reason: String)

    public var description: String {
        switch self {
        case .badZoom(let text), .tooLarge(let text), .unexpectedTile(let text), .incompatible(let text), .incompleteShards(let text):
            return text
        case .shardRecord(let file, let reason): return "\(file): \(reason)"
        case .conflict(let tile, let first, let second):
            return "tile \(tile) differs between \(first) and \(second) (--on-conflict first or last chooses one)"
        case .strayTile(let file, let tile, let reason): return "\(file): tile \(tile) \(reason)"
        }
    }
}
