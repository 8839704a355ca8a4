import Foundation
public import Canvas
import TileMath
public import TileSources
import Compression

/// What `merge` does with two different tiles at one address (identical bytes are one tile).
public enum ConflictRule: String, Sendable, CaseIterable {
    /// Keep the tile of the store given first.
    case first
    /// Keep the tile of the store given last.
    case last
    /// Stop with an error naming the tile and both stores (the default).
    case error
}

/// One store given to `merge`.
public struct MergeInput: Sendable {
    public let path: String
    /// nil for a shard folder with no tile at all (its shard owned only empty tiles): a
    /// folder without tiles cannot be opened as a source, but its metadata.json is there.
    public let source: (any TileSource)?
    public let record: ShardRecord?

    /// Opens a folder, MBTiles or PMTiles store and reads its shard record, if any.
    public static func open(_ path: String, scheme: TileScheme? = nil) throws -> MergeInput {
        let source: (any TileSource)?
        let recordText: String?
        do {
            let opened = try TileStore.open(path, scheme: scheme)
            source = opened
            recordText = opened.metadata.shardRecord
        } catch {
            guard case .corrupt = error, let text = FolderTileSource.shardRecord(in: URL(fileURLWithPath: path)) else { throw error }
            source = nil
            recordText = text
        }
        let record = try recordText.map { text throws(PyramidError) in try ShardRecord(json: text, file: path) }
        return MergeInput(path: path, source: source, record: record)
    }
}

/// Combines tile stores into one (`tilekit merge`).
///
/// Stores with no shard record are copied in the order given; two different tiles at one
/// address follow the `ConflictRule` (remembering every address written takes about 100
/// bytes a tile). The shards of one sharded build are checked to be every shard of it,
/// once each, with every tile where the build's `ShardPlan` puts it (which makes them
/// disjoint, with no memory per tile); then the zooms above the split that the shards left
/// are made as `PyramidBuilder` makes them, so the merged store is the unsharded one.
public final class StoreMerge {
    public struct Report: Sendable {
        public var copied = 0
        /// Made by the merge: the upper zooms of a sharded pyramid (the split zoom included).
        public var made = 0
        /// Tiles found again with the same bytes, kept once.
        public var identical = 0
        /// Different tiles at one address, settled by the rule.
        public var conflicts = 0
        public var bytes = 0
    }

    public let inputs: [MergeInput]
    public let rule: ConflictRule
    /// The shards' common record (shard 0's), when the inputs are the shards of one build.
    public let record: ShardRecord?
    /// The format of the merged tiles (nil when no store says).
    public let format: ImageFormat?
    public var concurrency = 2

    public init(inputs: [MergeInput], rule: ConflictRule = .error) throws(PyramidError) {
        guard !inputs.isEmpty else { throw .incompleteShards("no store to merge") }
        self.rule = rule
        var formats = [(String, ImageFormat)]()
        for input in inputs {
            if let format = input.source?.metadata.format ?? input.record?.encoding.format { formats.append((input.path, format)) }
        }
        if let (path, format) = formats.first, let (other, otherFormat) = formats.first(where: { $0.1 != format }) {
            throw .incompatible("cannot merge \(format.fileExtension) and \(otherFormat.fileExtension) tiles: \(path) is \(format.fileExtension), "
                + "\(other) is \(otherFormat.fileExtension) (convert one with `tilekit convert --format`)")
        }
        format = formats.first?.1
        let shards = inputs.filter { $0.record != nil }
        if shards.isEmpty {
            record = nil
            let sized = inputs.compactMap { input in input.source.map { (input.path, $0.metadata.tileSize) } }
            if let (path, size) = sized.first, let (other, otherSize) = sized.first(where: { $0.1 != size }) {
                throw .incompatible("cannot merge \(size) px and \(otherSize) px tiles: \(path) has \(size) px tiles, \(other) \(otherSize) px")
            }
            self.inputs = inputs
            return
        }
        if let plain = inputs.first(where: { $0.record == nil }), let shard = shards.first, let record = shard.record {
            throw .incompleteShards("\(shard.path) is shard \(record.shard) of a sharded \(record.command.rawValue), \(plain.path) is no shard: "
                + "merge the shards of one build on their own, then merge the result with other stores")
        }
        try Self.checkOneBuild(shards)
        let ordered = shards.sorted { ($0.record?.shard.index ?? 0) < ($1.record?.shard.index ?? 0) }
        self.inputs = ordered
        record = ordered.first?.record
    }

    /// Every shard of one build, once each; errors name the stores.
    static func checkOneBuild(_ shards: [MergeInput]) throws(PyramidError) {
        guard let first = shards.first, let reference = first.record else { return }
        var byIndex = [Int: String]()
        for input in shards {
            guard let record = input.record else { continue }
            if let difference = record.difference(from: reference) {
                throw .incompatible("\(input.path) and \(first.path) are shards of different builds: \(difference)")
            }
            if let earlier = byIndex[record.shard.index] {
                throw .incompleteShards("shard \(record.shard) is given twice: \(earlier) and \(input.path)")
            }
            byIndex[record.shard.index] = input.path
        }
        let count = reference.shard.count
        let missing = (0..<count).filter { byIndex[$0] == nil }
        guard missing.isEmpty else {
            let given = byIndex.keys.sorted().compactMap { index in byIndex[index].map { "\(index)/\(count) \($0)" } }.joined(separator: ", ")
            throw .incompleteShards("the build has \(count) shards; missing: \(missing.prefix(10).map { "\($0)/\(count)" }.joined(separator: ", "))"
                + "\(missing.count > 10 ? " and \(missing.count - 10) more" : "") (given: \(given))")
        }
    }

    /// The metadata the merged store is committed with: the first store's, with the zooms
    /// and bounds of all (a sharded build's exactly as one machine writes them).
    public func metadata() -> TileSetMetadata {
        let described = inputs.compactMap { $0.source?.metadata }
        var metadata = described.first ?? TileSetMetadata(name: "merged")
        metadata.format = format
        metadata.shardRecord = nil
        metadata.warnings = []
        if let record {
            metadata.minZoom = record.zooms.lowerBound
            metadata.maxZoom = record.zooms.upperBound
            metadata.bounds = record.bounds
            metadata.center = record.center
            metadata.centerZoom = record.centerZoom
            return metadata
        }
        metadata.minZoom = described.map(\.minZoom).min() ?? metadata.minZoom
        metadata.maxZoom = described.map(\.maxZoom).max() ?? metadata.maxZoom
        let boxes = described.map(\.bounds)
        if boxes.count > 1 {
            // The union, when every store has bounds and none crosses the antimeridian.
            let known = boxes.compactMap { $0 }.filter { $0.west <= $0.east }
            metadata.bounds = known.count == boxes.count ? known.dropFirst().reduce(known.first) { union, box in union?.union(box) } : nil
            metadata.center = nil
            metadata.centerZoom = nil
        }
        return metadata
    }

    /// Writes the merged tiles into `store` and commits it with `metadata()`.
    public func run(into store: StagedStore, progress: (_ tiles: Int) -> Void = { _ in }) async throws -> Report {
        var report = Report()
        if let record {
            try copyShards(record, into: store, report: &report, progress: progress)
            if record.mergeMakesUpperZooms {
                report.made = try await makeUpperZooms(record, into: store)
            }
        } else {
            try copy(into: store, report: &report, progress: progress)
        }
        try store.commit(metadata: metadata())
        return report
    }

    /// Copies every tile of the stores in order, settling addresses met twice by the rule.
    private func copy(into store: StagedStore, report: inout Report, progress: (Int) -> Void) throws {
        // Where each address came from and what it held; not needed for a single store.
        var seen = [TileID: (input: Int, digest: ContentDigest)]()
        for (number, input) in inputs.enumerated() {
            guard let source = input.source else { continue }
            try TileStore.forEachTile(in: source) { tile, bytes in
                try checkFormat(bytes, tile: tile, in: input.path)
                if inputs.count > 1 {
                    let digest = ContentDigest(bytes)
                    if let earlier = seen[tile] {
                        if earlier.digest == digest {
                            report.identical += 1
                            return
                        }
                        report.conflicts += 1
                        switch rule {
                        case .error: throw PyramidError.conflict(tile: tile, first: inputs[earlier.input].path, second: input.path)
                        case .first: return
                        case .last: break
                        }
                    }
                    if let earlier = seen[tile] {
                        // The later store's tile replaces the earlier one, already counted.
                        try store.write(tile, bytes: bytes)
                        report.bytes += bytes.count - earlier.digest.length
                        seen[tile] = (number, digest)
                        return
                    }
                    seen[tile] = (number, digest)
                }
                try store.write(tile, bytes: bytes)
                report.copied += 1
                report.bytes += bytes.count
                progress(report.copied)
            }
        }
    }

    /// Copies the shards' tiles, each checked to be where the plan puts it; a pyramid's split
    /// zoom is left to `makeUpperZooms`, which re-encodes it.
    private func copyShards(_ record: ShardRecord, into store: StagedStore, report: inout Report, progress: (Int) -> Void) throws {
        let plan: ShardPlan
        do { plan = try record.plan() } catch { throw PyramidError.shardRecord(file: inputs[0].path, reason: error.description) }
        let made = record.mergeMakesUpperZooms ? record.zooms.lowerBound...record.splitZoom : nil
        for input in inputs {
            guard let source = input.source, let shard = input.record?.shard else { continue }
            try TileStore.forEachTile(in: source) { tile, bytes in
                guard record.zooms.contains(tile.z) else {
                    throw PyramidError.strayTile(file: input.path, tile: tile, reason: "is outside the build's zooms \(record.zooms.lowerBound)-\(record.zooms.upperBound)")
                }
                if let made, made.contains(tile.z) {
                    guard tile.z == record.splitZoom else {
                        throw PyramidError.strayTile(file: input.path, tile: tile, reason: "is above the split zoom \(record.splitZoom): the merge makes those zooms")
                    }
                    guard plan.owns(shard, tile) else {
                        throw PyramidError.strayTile(file: input.path, tile: tile, reason: "belongs to shard \(plan.owner(of: tile))/\(plan.count), not \(shard)")
                    }
                    return  // read again, and re-encoded, by makeUpperZooms
                }
                guard plan.owns(shard, tile) else {
                    throw PyramidError.strayTile(file: input.path, tile: tile, reason: "belongs to shard \(plan.owner(of: tile))/\(plan.count), not \(shard)")
                }
                try checkFormat(bytes, tile: tile, in: input.path)
                try store.write(tile, bytes: bytes)
                report.copied += 1
                report.bytes += bytes.count
                progress(report.copied)
            }
        }
    }

    /// Refuses a tile whose bytes are not the merged store's format.
    private func checkFormat(_ bytes: [UInt8], tile: TileID, in path: String) throws {
        guard let format else { return }
        let found = ImageFormat(sniffing: bytes)
        guard found == format else {
            throw PyramidError.incompatible("cannot merge \(found?.fileExtension ?? "unrecognised") tiles into \(format.fileExtension): "
                + "tile \(tile) of \(path) is \(found?.name ?? "no known image format")")
        }
    }

    /// The split zoom (re-encoded from the shards' lossless hand-off where there is one) and
    /// every zoom above it, averaged from the shards' split-zoom tiles.
    private func makeUpperZooms(_ record: ShardRecord, into store: StagedStore) async throws -> Int {
        let plan = try record.plan()
        let shards = inputs.map { ($0.path, $0.source) }
        let builder = try PyramidBuilder(upperZoomsOf: record, read: { tile in
            let (path, source) = shards[plan.owner(of: tile)]
            guard let bytes = try await source?.tile(TileRequest(tile)).data?.bytes else { return nil }
            return (bytes, path)
        }, store: store, concurrency: concurrency)
        return try await builder.run { _, _ in }.written
    }
}
