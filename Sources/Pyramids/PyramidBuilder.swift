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
public final class PyramidBuilder {
    public let sourcePath: String
    public let georeference: Georeference
    public let options: PyramidOptions
    let stores: [StagedStore]  // one per scale: 1x, then 2x when asked
    let warper: TileWarper
    public let zooms: ClosedRange<Int>
    let ranges: [Int: TileRange]
    private var report: PyramidReport
    private var done = 0
    public let total: Int
    /// Children waiting for their parents, per scale and zoom: row → column → image.
    private var pending: [[Int: [Int: [Int: RGBAImage?]]]]

    public init(source: String, georeference: Georeference, stores: [StagedStore], options: PyramidOptions) throws(PyramidError) {
        sourcePath = source
        self.georeference = georeference
        self.options = options
        self.stores = stores
        warper = TileWarper(georeference: georeference, resampling: options.resampling)
        let zooms = options.zooms ?? georeference.defaultZooms(tileSize: options.tileSize)
        guard zooms.lowerBound >= 0, zooms.upperBound <= TileID.maxZoom else {
            throw .badZoom("zooms \(zooms.lowerBound)...\(zooms.upperBound) are out of range [0, \(TileID.maxZoom)]")
        }
        self.zooms = zooms
        var ranges = [Int: TileRange]()
        let box = georeference.bounds
        for z in zooms { ranges[z] = TileRange.covering(box, zoom: z).first }
        self.ranges = ranges
        let count = zooms.reduce(0) { $0 + (ranges[$1]?.count ?? 0) }
        total = count * stores.count
        // At most (4^31 - 1) / 3 tiles a store (every tile of zooms 0-30): the sum cannot overflow.
        guard total <= 50_000_000 else { throw .tooLarge("\(total) tiles: choose fewer zooms (--zoom)") }
        let sampled = options.lowerZooms == .average ? [zooms.upperBound] : Array(zooms)
        for z in sampled {
            guard let range = ranges[z] else { continue }
            let rows = Self.windowRows(range, warper: warper, tileSize: options.tileSize, imageHeight: georeference.height)
            let (bytes, overflow) = rows.multipliedReportingOverflow(by: georeference.width * 4)
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

    /// The metadata each store is committed with.
    public func metadata(name: String, attribution: String?) -> TileSetMetadata {
        let box = georeference.bounds
        return TileSetMetadata(name: name, format: options.encoding.format, bounds: box, center: box.center,
                               centerZoom: (zooms.lowerBound + zooms.upperBound) / 2, minZoom: zooms.lowerBound, maxZoom: zooms.upperBound,
                               tileSize: options.tileSize, attribution: attribution)
    }

    /// The most source rows (clamped to the image) one row of tiles of `range` samples.
    static func windowRows(_ range: TileRange, warper: TileWarper, tileSize: Int, imageHeight: Int) -> Int {
        var most = 0
        for y in range.minY...range.maxY {
            // A linear map's extremes over the band are at its corners: the first and last tiles'.
            let left = warper.sourceRows(for: TileID(z: range.z, x: range.minX, y: y), size: tileSize)
            let right = warper.sourceRows(for: TileID(z: range.z, x: range.maxX, y: y), size: tileSize)
            let low = max(0, min(left.lowerBound, right.lowerBound)), high = min(imageHeight, max(left.upperBound, right.upperBound))
            most = max(most, high - low)
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
    }

    struct Made: Sendable {
        let job: Job
        let image: RGBAImage?
        let bytes: [UInt8]?
    }

    private func sampleZoom(_ z: Int, cascade: Bool, progress: (Int, Int) -> Void) async throws {
        guard let range = ranges[z] else { return }
        let rows = try SourceRows(path: sourcePath, limits: options.imageLimits)
        for y in range.minY...range.maxY {
            var jobs = [Job]()
            for (index, store) in stores.enumerated() {
                for x in range.minX...range.maxX {
                    let tile = TileID(z: z, x: x, y: y)
                    if store.resumed, try store.contains(tile) {
                        report.reused += 1
                        done += 1
                        if cascade { pending[index][z, default: [:]][y, default: [:]][x] = .some(nil) }  // read back when needed
                        continue
                    }
                    jobs.append(Job(store: index, tile: tile, size: options.tileSize * (index + 1)))
                }
            }
            if !jobs.isEmpty {
                var low = Int.max, high = Int.min
                for job in jobs {
                    let r = warper.sourceRows(for: job.tile, size: job.size)
                    low = min(low, r.lowerBound)
                    high = max(high, r.upperBound)
                }
                try rows.load(low..<high)
                let made = try await draw(jobs) { [warper, encoding = options.encoding] job in
                    let image = warper.render(job.tile, size: job.size, rows: rows)
                    return Made(job: job, image: image, bytes: try image.map { try $0.encoded(encoding) })
                }
                try store(made, cascade: cascade)
            }
            progress(done, total)
            if cascade {
                for index in stores.indices { try await parents(of: z, row: y, store: index, progress: progress) }
            }
            // A row and its parents are durable together: a resumed build rereads them.
            for store in stores { try store.checkpoint() }
        }
    }

    /// Writes what was drawn, in order, and keeps images for their parents.
    private func store(_ made: [Made], cascade: Bool) throws {
        for item in made {
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
    }

    /// Once row `y` of zoom `z` is complete with its sibling row, makes the parents' row.
    private func parents(of z: Int, row y: Int, store index: Int, progress: (Int, Int) -> Void) async throws {
        guard z > zooms.lowerBound, let range = ranges[z], let parentRange = ranges[z - 1] else { return }
        guard y % 2 == 1 || y == range.maxY else { return }
        let py = y / 2
        let size = options.tileSize * (index + 1)
        let store = stores[index]
        var children = pending[index][z] ?? [:]
        var jobs = [Job]()
        for px in parentRange.minX...parentRange.maxX {
            let parent = TileID(z: z - 1, x: px, y: py)
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
        let made = try await draw(jobs) { [encoding = options.encoding] job in
            let image = TileWarper.average(job.children, size: job.size)
            return Made(job: job, image: image, bytes: try image.map { try $0.encoded(encoding) })
        }
        try self.store(made, cascade: true)
        progress(done, total)
        try await parents(of: z - 1, row: py, store: index, progress: progress)
    }

    /// Runs `body` over the jobs, `options.concurrency` at a time, keeping their order.
    private func draw(_ jobs: [Job], _ body: @escaping @Sendable (Job) throws -> Made) async throws -> [Made] {
        var results = [Made?](repeating: nil, count: jobs.count)
        try await withThrowingTaskGroup(of: (Int, Made).self) { group in
            var next = 0
            while next < min(jobs.count, options.concurrency) {
                let index = next, job = jobs[index]
                group.addTask { (index, try body(job)) }
                next += 1
            }
            while let (index, made) = try await group.next() {
                results[index] = made
                if next < jobs.count {
                    let i = next, job = jobs[i]
                    group.addTask { (i, try body(job)) }
                    next += 1
                }
            }
        }
        return results.map { $0! }
    }
}

public enum PyramidError: Error, Equatable, Sendable, CustomStringConvertible {
    case badZoom(String)
    case tooLarge(String)
    /// A tile a resumed build found does not fit this build.
    case unexpectedTile(String)

    public var description: String {
        switch self {
        case .badZoom(let text), .tooLarge(let text), .unexpectedTile(let text): return text
        }
    }
}
