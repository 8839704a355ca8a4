import Foundation
public import Canvas
public import TileMath
public import TileSources

/// A store being built: tiles go to a hidden partial store beside the final path, which
/// only appears, whole, when `commit` renames (or, for PMTiles, converts) it. A build killed
/// at any moment leaves the partial store valid, and a resumed build continues it.
///
/// Partial stores: `.NAME.partial.mbtiles` for MBTiles and PMTiles (a PMTiles file is laid
/// out at the end), `.NAME.partial/` for folders.
public final class StagedStore {
    public let finalPath: String
    public let kind: TileStoreKind
    public let scheme: TileScheme
    public let format: ImageFormat
    public let partialPath: String
    let writer: any TileStoreWriter
    private var reader: (any TileSource)?
    /// True when a partial store from an earlier run was found and is being continued.
    public let resumed: Bool

    public init(path: String, kind: TileStoreKind? = nil, scheme: TileScheme = .xyz, format: ImageFormat, resume: Bool) throws(TileSourceError) {
        finalPath = path
        if let kind { self.kind = kind } else { self.kind = try TileStoreKind(name: path) }
        self.scheme = scheme
        self.format = format
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let folder = url.deletingLastPathComponent()
        let stem = self.kind == .folder ? url.lastPathComponent : url.deletingPathExtension().lastPathComponent
        partialPath = folder.appendingPathComponent(self.kind == .folder ? ".\(stem).partial" : ".\(stem).partial.mbtiles").path
        let exists = FileManager.default.fileExists(atPath: partialPath)
        if exists && !resume { try? FileManager.default.removeItem(atPath: partialPath) }
        resumed = exists && resume
        writer = try TileStore.writer(partialPath, kind: self.kind == .folder ? .folder : .mbtiles, scheme: scheme, fileExtension: format.fileExtension)
    }

    public func contains(_ tile: TileID) throws -> Bool { try writer.contains(tile) }

    public func write(_ tile: TileID, bytes: [UInt8]) throws { try writer.write(tile, bytes: bytes) }

    /// Makes what was written durable: a build killed after this keeps it.
    public func checkpoint() throws { try writer.checkpoint() }

    /// A tile a previous run wrote, decoded (a resumed build's parents need their children).
    public func read(_ tile: TileID) async throws -> RGBAImage? {
        guard try writer.contains(tile) else { return nil }
        let source = try reader ?? TileStore.open(partialPath, scheme: kind == .folder ? scheme : nil)
        reader = source
        guard let data = try await source.tile(TileRequest(tile)).data else { return nil }
        return try RGBAImage(decoding: data.bytes, limits: .tile)
    }

    /// Removes the partial store (a build that cannot be resumed); the final path is untouched.
    public func discard() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: partialPath + suffix) }
    }

    /// Finishes the store and puts it in place of anything at the final path.
    public func commit(metadata: TileSetMetadata) throws {
        try writer.finish(metadata: metadata)
        let manager = FileManager.default
        switch kind {
        case .mbtiles, .folder:
            if manager.fileExists(atPath: finalPath) {
                // Swap: the old store stays until the new one is in place.
                let old = partialPath + ".old"
                try? manager.removeItem(atPath: old)
                try manager.moveItem(atPath: finalPath, toPath: old)
                try manager.moveItem(atPath: partialPath, toPath: finalPath)
                try? manager.removeItem(atPath: old)
            } else {
                try manager.moveItem(atPath: partialPath, toPath: finalPath)
            }
        case .pmtiles:
            let source = try MBTilesSource(path: partialPath)
            let pmtiles = try PMTilesStoreWriter(path: finalPath)  // writes a scratch file, renamed into place by finish
            try source.reader.forEachTile { tile, bytes in try pmtiles.write(tile, bytes: bytes) }
            try pmtiles.finish(metadata: metadata)
            try? manager.removeItem(atPath: partialPath)
        }
    }
}
