import Foundation
import Synchronization
public import TileMath
import Compression

/// Reads a PMTiles v3 file with positional reads: safe from many tasks at once.
public final class PMTilesReader: Sendable {
    public let path: String
    public let header: PMTilesHeader
    /// The metadata JSON (decompressed).
    public let metadataJSON: [UInt8]
    private let descriptor: Int32
    private let root: [PMTilesEntry]
    /// Leaf directories read so far, by offset; a small cache shared by all readers.
    private let leaves = Mutex([UInt64: [PMTilesEntry]]())

    public init(path: String) throws(PMTilesError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("\(path): \(String(cString: strerror(errno)))") }
        descriptor = fd
        do throws(PMTilesError) {
            let headerBytes = try Self.read(fd, offset: 0, length: PMTilesHeader.size)
            header = try PMTilesHeader(parsing: headerBytes)
            guard header.internalCompression == .gzip || header.internalCompression == .none else {
                throw PMTilesError.unsupportedCompression("internal \(header.internalCompression)")
            }
            guard header.tileCompression == .none || header.tileCompression == .unknown else {
                throw PMTilesError.unsupportedCompression("tiles \(header.tileCompression) (raster tiles are stored uncompressed)")
            }
            let rootBytes = try Self.read(fd, offset: header.rootOffset, length: Int(header.rootLength))
            root = try PMTilesDirectory.deserialize(rootBytes)
            let metadataBytes = try Self.read(fd, offset: header.metadataOffset, length: Int(header.metadataLength))
            if header.internalCompression == .gzip, !metadataBytes.isEmpty {
                do { metadataJSON = try Gzip.decompress(metadataBytes) } catch { throw PMTilesError.corrupt("metadata: \(error.reason)") }
            } else {
                metadataJSON = metadataBytes
            }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// The bytes of a tile, or nil when the file has none.
    public func tile(_ tile: TileID) throws(PMTilesError) -> [UInt8]? {
        let id = tile.pmtilesID
        var directory = root
        for _ in 0..<4 {  // the spec allows at most three levels of leaves
            guard let entry = PMTilesDirectory.find(directory, id) else { return nil }
            if entry.runLength > 0 {
                return try Self.read(descriptor, offset: header.tileDataOffset + entry.offset, length: Int(entry.length))
            }
            directory = try leaf(at: entry.offset, length: Int(entry.length))
        }
        throw .corrupt("leaf directories nested more than three deep")
    }

    /// Calls `body` for every addressed tile, in tile id order (runs expanded).
    public func forEachTile(_ body: (TileID, [UInt8]) throws -> Void) throws {
        func walk(_ entries: [PMTilesEntry], depth: Int) throws {
            guard depth < 4 else { throw PMTilesError.corrupt("leaf directories nested more than three deep") }
            for entry in entries {
                if entry.runLength == 0 {
                    try walk(try leaf(at: entry.offset, length: Int(entry.length)), depth: depth + 1)
                    continue
                }
                let bytes = try Self.read(descriptor, offset: header.tileDataOffset + entry.offset, length: Int(entry.length))
                for id in entry.tileID..<(entry.tileID + UInt64(entry.runLength)) {
                    guard let tile = TileID(pmtilesID: id) else { continue }
                    try body(tile, bytes)
                }
            }
        }
        try walk(root, depth: 0)
    }

    private func leaf(at offset: UInt64, length: Int) throws(PMTilesError) -> [PMTilesEntry] {
        if let cached = leaves.withLock({ $0[offset] }) { return cached }
        let entries = try PMTilesDirectory.deserialize(try Self.read(descriptor, offset: header.leafDirectoryOffset + offset, length: length))
        leaves.withLock { cache in
            if cache.count > 256 { cache.removeAll() }
            cache[offset] = entries
        }
        return entries
    }

    static func read(_ fd: Int32, offset: UInt64, length: Int) throws(PMTilesError) -> [UInt8] {
        guard length > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, length - done, off_t(offset) + off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw .corrupt("file ends before byte \(offset + UInt64(length))") }
            done += n
        }
        return buffer
    }
}
