import Foundation
import Synchronization
public import TileMath

/// Reads a PMTiles v3 file with positional reads: safe from many tasks at once.
///
/// Every number the file holds is checked before it is used (see `PMTilesLayout`,
/// `PMTilesHeader.validate` and `PMTilesDirectory.deserialize`): a hostile file gives `PMTilesError.invalid` naming
/// the field, never a trap, a huge allocation or a long walk. A lookup reads at most
/// `PMTilesLimits.leafDepth` leaf directories, and a leaf must hold only the ids between
/// its pointer and the next, so no directory can be reached twice in one walk.
public final class PMTilesReader: Sendable {
    /// The file's path (or the name given to bytes in memory).
    public let path: String
    public var header: PMTilesHeader { layout.header }
    /// The metadata JSON (decompressed).
    public let metadataJSON: [UInt8]
    private let storage: any PMTilesStorage
    private let layout: PMTilesLayout
    private let root: [PMTilesEntry]
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

    package init(storage: any PMTilesStorage, name: String) throws(PMTilesError) {
        path = name
        self.storage = storage
        let head = try storage.read(offset: 0, length: Int(min(storage.size, UInt64(PMTilesHeader.size))))
        layout = try PMTilesLayout(head: head, fileSize: storage.size, file: name)
        let rootRange = layout.rootRange, metadataRange = layout.metadataRange
        root = try layout.root(try storage.read(offset: rootRange.offset, length: rootRange.length))
        metadataJSON = try layout.metadata(try storage.read(offset: metadataRange.offset, length: metadataRange.length))
    }

    /// The bytes of a tile, or nil when the file has none.
    public func tile(_ tile: TileID) throws(PMTilesError) -> [UInt8]? {
        let id = tile.pmtilesID
        var directory = root
        var bound = layout.ids.upperBound
        for depth in 0...PMTilesLimits.leafDepth {
            switch try layout.step(directory, id: id, bound: bound, depth: depth) {
            case .absent: return nil
            case .tile(let entry): return try tileBytes(entry)
            case .leaf(let pointer, let ids):
                directory = try leaf(pointer, ids: ids)
                bound = ids.upperBound
            }
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
                guard depth < PMTilesLimits.leafDepth else { throw layout.tooDeep(entry) }
                let next = index + 1 < entries.count ? entries[index + 1].tileID : bound
                try walk(try leaf(entry, ids: entry.tileID..<next), bound: next, depth: depth + 1)
            }
        }
        try walk(root, bound: layout.ids.upperBound, depth: 0)
    }

    private func tileBytes(_ entry: PMTilesEntry) throws(PMTilesError) -> [UInt8] {
        let range = layout.tileRange(entry)
        return try storage.read(offset: range.offset, length: range.length)
    }

    /// The leaf a pointer entry names, holding only `ids` and at least one entry.
    private func leaf(_ pointer: PMTilesEntry, ids: Range<UInt64>) throws(PMTilesError) -> [PMTilesEntry] {
        let key = LeafCache.Key(offset: pointer.offset, length: pointer.length)
        let entries: [PMTilesEntry]
        if let cached = leaves.withLock({ $0.entries[key] }) {
            entries = cached
        } else {
            let range = try layout.leafRange(pointer)
            entries = try layout.leaf(try storage.read(offset: range.offset, length: range.length), of: pointer)
            leaves.withLock { $0.insert(entries, for: key) }
        }
        try layout.checkLeaf(entries, of: pointer, ids: ids)
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
