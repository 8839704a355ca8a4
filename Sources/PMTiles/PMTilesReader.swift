import Foundation
import Synchronization
public import TileMath
import Compression

/// Reads a PMTiles v3 file with positional reads: safe from many tasks at once.
///
/// Every number the file holds is checked before it is used (see `PMTilesHeader.validate`
/// and `PMTilesDirectory.deserialize`): a hostile file gives `PMTilesError.invalid` naming
/// the field, never a trap, a huge allocation or a long walk. A lookup reads at most
/// `PMTilesLimits.leafDepth` leaf directories, and a leaf must hold only the ids between
/// its pointer and the next, so no directory can be reached twice in one walk.
public final class PMTilesReader: Sendable {
    /// The file's path (or the name given to bytes in memory).
    public let path: String
    public let header: PMTilesHeader
    /// The metadata JSON (decompressed).
    public let metadataJSON: [UInt8]
    private let storage: any PMTilesStorage
    private let root: [PMTilesEntry]
    /// The ids the header's zooms number: no entry may reach past them.
    private let ids: Range<UInt64>
    /// Leaf directories read so far, by offset and length; shared by all readers, bounded
    /// by its number of entries.
    private let leaves = Mutex(LeafCache())

    /// Opens a file.
    public convenience init(path: String) throws(PMTilesError) {
        try self.init(storage: try FileStorage(path: path), name: path)
    }

    /// Reads a whole PMTiles file held in memory; `name` stands for the file in errors.
    /// The same checks as for a file (a fuzz target's entry point).
    public convenience init(bytes: [UInt8], name: String = "<memory>") throws(PMTilesError) {
        try self.init(storage: MemoryStorage(bytes: bytes), name: name)
    }

    init(storage: any PMTilesStorage, name: String) throws(PMTilesError) {
        path = name
        self.storage = storage
        guard storage.size >= UInt64(PMTilesHeader.size) else {
            guard try storage.read(offset: 0, length: Int(storage.size)).starts(with: "PMTiles".utf8) else { throw .notPMTiles }
            throw .invalid(file: name, field: "file size", value: storage.size, reason: "is smaller than the \(PMTilesHeader.size)-byte header")
        }
        header = try PMTilesHeader(parsing: try storage.read(offset: 0, length: PMTilesHeader.size))
        try header.validate(fileSize: storage.size, file: name)
        guard header.internalCompression == .gzip || header.internalCompression == .none else {
            throw .unsupportedCompression("internal \(header.internalCompression)")
        }
        guard header.tileCompression == .none || header.tileCompression == .unknown else {
            throw .unsupportedCompression("tiles \(header.tileCompression) (raster tiles are stored uncompressed)")
        }
        ids = PMTilesID.first(ofZoom: Int(header.minZoom))..<PMTilesID.first(ofZoom: Int(header.maxZoom) + 1)
        // validate() bounded both lengths (root: 16 KiB, metadata: PMTilesLimits.metadataBytes).
        let rootBytes = try storage.read(offset: header.rootOffset, length: Int(header.rootLength))
        root = try PMTilesDirectory.deserialize(rootBytes, Self.context(header, file: name, name: "root directory", ids: ids))
        let metadataBytes = try storage.read(offset: header.metadataOffset, length: Int(header.metadataLength))
        if header.internalCompression == .gzip, !metadataBytes.isEmpty {
            do { metadataJSON = try Gzip.decompress(metadataBytes, limit: Int(PMTilesLimits.metadataBytes)) } catch {
                throw .invalid(file: name, field: "metadata length", value: header.metadataLength, reason: "does not hold gzip metadata: \(error.reason)")
            }
        } else {
            metadataJSON = metadataBytes
        }
    }

    /// The bytes of a tile, or nil when the file has none.
    public func tile(_ tile: TileID) throws(PMTilesError) -> [UInt8]? {
        let id = tile.pmtilesID
        guard ids.contains(id) else { return nil }
        var directory = root
        var bound = ids.upperBound
        for depth in 0...PMTilesLimits.leafDepth {
            guard let index = PMTilesDirectory.find(directory, id) else { return nil }
            let entry = directory[index]
            if entry.runLength > 0 { return try tileBytes(entry) }
            guard depth < PMTilesLimits.leafDepth else { throw tooDeep(entry) }
            // A leaf holds the ids from its pointer up to the next entry's.
            if index + 1 < directory.count { bound = directory[index + 1].tileID }
            directory = try leaf(entry, ids: entry.tileID..<bound)
        }
        return nil
    }

    /// Calls `body` for every addressed tile, in tile id order (runs expanded; ids beyond
    /// TileKit's deepest zoom are skipped).
    public func forEachTile(_ body: (TileID, [UInt8]) throws -> Void) throws {
        let lastID = PMTilesID.first(ofZoom: TileID.maxZoom + 1)
        try forEachEntry { entry in
            guard entry.tileID < lastID else { return }
            let bytes = try tileBytes(entry)
            for id in entry.tileID..<min(entry.tileID + UInt64(entry.runLength), lastID) {
                guard let tile = TileID(pmtilesID: id) else { continue }
                try body(tile, bytes)
            }
        }
    }

    /// Calls `body` for every tile entry (a run of ids sharing one content), leaf
    /// directories followed, in tile id order, without expanding runs: counting tiles this
    /// way costs one call per entry however long the runs are.
    public func forEachEntry(_ body: (PMTilesEntry) throws -> Void) throws {
        func walk(_ entries: [PMTilesEntry], bound: UInt64, depth: Int) throws {
            for (index, entry) in entries.enumerated() {
                if entry.runLength > 0 {
                    try body(entry)
                    continue
                }
                guard depth < PMTilesLimits.leafDepth else { throw tooDeep(entry) }
                let next = index + 1 < entries.count ? entries[index + 1].tileID : bound
                try walk(try leaf(entry, ids: entry.tileID..<next), bound: next, depth: depth + 1)
            }
        }
        try walk(root, bound: ids.upperBound, depth: 0)
    }

    private func tileBytes(_ entry: PMTilesEntry) throws(PMTilesError) -> [UInt8] {
        // deserialize checked offset + length against the tile data length, which validate
        // checked against the file size: the sum cannot overflow.
        try storage.read(offset: header.tileDataOffset + entry.offset, length: Int(entry.length))
    }

    private func tooDeep(_ entry: PMTilesEntry) -> PMTilesError {
        .invalid(file: path, field: "leaf directory at offset \(entry.offset) depth", value: UInt64(PMTilesLimits.leafDepth + 1),
                 reason: "exceeds the \(PMTilesLimits.leafDepth) levels of leaves a lookup follows")
    }

    private static func context(_ header: PMTilesHeader, file: String, name: String, ids: Range<UInt64>) -> PMTilesDirectory.Context {
        PMTilesDirectory.Context(file: file, name: name, gzip: header.internalCompression == .gzip,
                                 tileDataLength: header.tileDataLength, leafDirectoryLength: header.leafDirectoryLength, ids: ids)
    }

    /// The leaf a pointer entry names, holding only `ids` and at least one entry.
    private func leaf(_ pointer: PMTilesEntry, ids: Range<UInt64>) throws(PMTilesError) -> [PMTilesEntry] {
        let key = LeafCache.Key(offset: pointer.offset, length: pointer.length)
        let name = "leaf directory at offset \(pointer.offset)"
        let entries: [PMTilesEntry]
        if let cached = leaves.withLock({ $0.entries[key] }) {
            entries = cached
        } else {
            guard Int(pointer.length) <= PMTilesLimits.directoryBytes else {
                throw .invalid(file: path, field: "\(name) length", value: UInt64(pointer.length),
                               reason: "exceeds the limit of \(PMTilesLimits.directoryBytes) bytes")
            }
            let bytes = try storage.read(offset: header.leafDirectoryOffset + pointer.offset, length: Int(pointer.length))
            // Parsed against all the header's ids so that the cached copy serves any pointer;
            // the pointer's own range is checked below.
            entries = try PMTilesDirectory.deserialize(bytes, Self.context(header, file: path, name: name, ids: self.ids))
            leaves.withLock { $0.insert(entries, for: key) }
        }
        guard let first = entries.first, let last = entries.last else {
            throw .invalid(file: path, field: "\(name) entry count", value: 0, reason: "is empty")
        }
        guard first.tileID >= ids.lowerBound else {
            throw .invalid(file: path, field: "\(name) entry 0 tile id", value: first.tileID,
                           reason: "is below the tile id \(ids.lowerBound) of the entry pointing at it")
        }
        let end = last.tileID + UInt64(max(last.runLength, 1))
        guard end <= ids.upperBound else {
            throw .invalid(file: path, field: "\(name) entry \(entries.count - 1) tile id", value: last.tileID,
                           reason: "reaches past \(ids.upperBound), the tile id of the entry after the one pointing at it")
        }
        return entries
    }
}

/// Parsed leaf directories, dropped all at once when they hold too many entries.
private struct LeafCache {
    struct Key: Hashable { var offset: UInt64, length: UInt32 }
    var entries = [Key: [PMTilesEntry]]()
    var count = 0

    mutating func insert(_ leaf: [PMTilesEntry], for key: Key) {
        if count + leaf.count > PMTilesLimits.cachedLeafEntries {
            entries.removeAll()
            count = 0
        }
        entries[key] = leaf
        count += leaf.count
    }
}
