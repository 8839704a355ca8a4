import Foundation
public import Canvas
public import TileMath

/// Somewhere tiles can be written: a folder, an MBTiles or a PMTiles file.
///
/// A writer is used by one task at a time. Nothing is visible to readers as a finished
/// store until `finish()` returns; a writer dropped without `finish()` leaves either the
/// previous store or a store a resumed build can continue, never a corrupt one.
/// `TileStore.updater` and `StagedStore` are how commands get one.
public protocol TileStoreWriter: AnyObject {
    func write(_ tile: TileID, bytes: [UInt8]) throws
    /// True when the store already holds the tile (a resumed build skips it).
    func contains(_ tile: TileID) throws -> Bool
    func finish(metadata: TileSetMetadata) throws
    /// Makes everything written so far durable, so a build killed later keeps it.
    func checkpoint() throws
}

extension TileStoreWriter {
    /// Stores that lay out at the end (PMTiles) have nothing to do.
    public func checkpoint() throws {}
}

/// Writes `DIR/{z}/{x}/{row}.{ext}` files, each atomically (temp file + rename), and a
/// `metadata.json` at the end.
public final class FolderTileWriter: TileStoreWriter {
    public let directory: URL
    public let scheme: TileScheme
    public let fileExtension: String

    /// Kept open from the start, so a flush reports every write-back error of the run.
    private let folder: FolderHandle

    public init(directory: URL, scheme: TileScheme = .xyz, fileExtension: String) throws(TileSourceError) {
        self.directory = directory
        self.scheme = scheme
        self.fileExtension = fileExtension
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw .writing(directory.path, error)
        }
        folder = try FolderHandle(directory.path)
    }

    func url(for tile: TileID) -> URL {
        directory.appendingPathComponent("\(tile.z)/\(tile.x)/\(scheme.row(for: tile)).\(fileExtension)")
    }

    /// Each tile atomically, but not flushed to the disk one by one: `checkpoint` and `finish`
    /// flush what was written since, all at once.
    public func write(_ tile: TileID, bytes: [UInt8]) throws {
        try AtomicFile.write(bytes, to: url(for: tile), durable: false)
    }

    /// Makes the tiles written so far durable: a build resumed after a power cut finds no tile
    /// it counts as written that is empty on the disk.
    public func checkpoint() throws {
        try folder.flushFileSystem()
    }

    public func contains(_ tile: TileID) throws -> Bool {
        FileManager.default.fileExists(atPath: url(for: tile).path)
    }

    public func finish(metadata: TileSetMetadata) throws {
        // The tiles reach the disk before the metadata that completes the store (and before a
        // staged store is renamed into place).
        try folder.flushFileSystem()
        let data = try StoreMetadataJSON.folder(metadata, scheme: scheme, format: fileExtension).sortedJSON(.prettyPrinted)
        try AtomicFile.write(Array(data), to: directory.appendingPathComponent("metadata.json"))
    }
}

extension TileStore {
    /// A writer that adds tiles to the store at `path` (`seed`, `split`). An existing store
    /// takes them in place: MBTiles one transaction at a time, a folder one renamed file at a
    /// time, a PMTiles file laid out anew beside it and renamed over it; each stays valid if
    /// the process dies. A new store is staged (`StagedStore`): it appears only when `finish`
    /// returns, and with `resume` a later run continues what a killed one left.
    public static func updater(_ path: String, scheme: TileScheme = .xyz, format: ImageFormat,
                               resume: Bool) throws(TileSourceError) -> any TileStoreWriter {
        let kind = try TileStoreKind(name: path)
        guard FileManager.default.fileExists(atPath: path) else {
            return try StagedStore(path: path, kind: kind, scheme: scheme, format: format, resume: resume, resumable: resume)
        }
        do {
            let existing = try TileStore.open(path, scheme: scheme).metadata
            let writer = try TileStore.writer(path, kind: try TileStoreKind(path: path), scheme: scheme, fileExtension: format.fileExtension)
            return AddingWriter(writer, existing: existing)
        } catch {
            if case .corrupt = error { throw error }
            throw .writing(path, error)
        }
    }
}

/// An existing store taking more tiles: what the run did not learn (the format, when every
/// tile was already there) is kept from the store, which a PMTiles file would otherwise lose
/// when it is laid out anew.
final class AddingWriter: TileStoreWriter {
    let writer: any TileStoreWriter
    let existing: TileSetMetadata

    init(_ writer: any TileStoreWriter, existing: TileSetMetadata) {
        self.writer = writer
        self.existing = existing
    }

    func write(_ tile: TileID, bytes: [UInt8]) throws { try writer.write(tile, bytes: bytes) }
    func contains(_ tile: TileID) throws -> Bool { try writer.contains(tile) }
    func checkpoint() throws { try writer.checkpoint() }

    func finish(metadata: TileSetMetadata) throws {
        var metadata = metadata
        metadata.format = metadata.format ?? existing.format
        try writer.finish(metadata: metadata)
    }
}
