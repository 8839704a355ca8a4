import Foundation
public import TileMath
import Compression

/// Writes a PMTiles v3 file: tiles are appended to a scratch file as they come, repeated
/// tiles stored once, and `finish` lays out header, root directory, metadata, leaf
/// directories and the tile data (clustered: in tile id order) into a temporary file that
/// is renamed over `path`. Until then `path` is untouched.
public final class PMTilesWriter {
    public let path: String
    /// Largest compressed root directory: the header and root must fit in the first 16 KB.
    let rootLimit: Int
    private let scratchPath: String
    private let scratch: FileHandle
    private var scratchLength: UInt64 = 0
    /// Stored contents: offset and length in the scratch file.
    private var contents: [(offset: UInt64, length: UInt32)] = []
    private var contentIndex: [ContentDigest: Int] = [:]
    private var tiles: [UInt64: Int] = [:]

    public init(path: String, rootLimit: Int = 16384 - PMTilesHeader.size) throws(PMTilesError) {
        self.path = path
        self.rootLimit = rootLimit
        scratchPath = path + ".tiles-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        guard FileManager.default.createFile(atPath: scratchPath, contents: nil),
              let handle = FileHandle(forWritingAtPath: scratchPath) else {
            throw .io("\(path): cannot create \(scratchPath): \(String(cString: strerror(errno)))")
        }
        scratch = handle
    }

    deinit {
        try? scratch.close()
        unlink(scratchPath)
    }

    public var tileCount: Int { tiles.count }
    public var uniqueContentCount: Int { contents.count }

    public func write(_ tile: TileID, bytes: [UInt8]) throws {
        let key = ContentDigest(bytes)
        if let existing = contentIndex[key] {
            tiles[tile.pmtilesID] = existing
            return
        }
        try scratch.write(contentsOf: Data(bytes))
        contents.append((scratchLength, UInt32(bytes.count)))
        scratchLength += UInt64(bytes.count)
        contentIndex[key] = contents.count - 1
        tiles[tile.pmtilesID] = contents.count - 1
    }

    public func contains(_ tile: TileID) -> Bool { tiles[tile.pmtilesID] != nil }

    /// Lays the file out and renames it into place. `header` supplies the type, zooms,
    /// bounds and centre; offsets and counts are filled in here.
    public func finish(header template: PMTilesHeader, metadataJSON: [UInt8]) throws {
        try scratch.synchronize()
        let reader = try FileHandle(forReadingFrom: URL(fileURLWithPath: scratchPath))
        defer { try? reader.close() }

        // Clustered: contents laid out in the order their first tile id appears.
        let ids = tiles.keys.sorted()
        var finalOffset = [Int: UInt64]()
        var order = [Int]()
        var dataLength: UInt64 = 0
        var entries = [PMTilesEntry]()
        for id in ids {
            let content = tiles[id]!
            if finalOffset[content] == nil {
                finalOffset[content] = dataLength
                order.append(content)
                dataLength += UInt64(contents[content].length)
            }
            let offset = finalOffset[content]!
            if var last = entries.last, last.offset == offset, last.tileID + UInt64(last.runLength) == id {
                last.runLength += 1
                entries[entries.count - 1] = last
            } else {
                entries.append(PMTilesEntry(tileID: id, offset: offset, length: contents[content].length, runLength: 1))
            }
        }

        let (root, leaves) = directories(entries)
        let metadata = Gzip.compress(metadataJSON)
        var header = template
        header.rootOffset = UInt64(PMTilesHeader.size)
        header.rootLength = UInt64(root.count)
        header.metadataOffset = header.rootOffset + header.rootLength
        header.metadataLength = UInt64(metadata.count)
        header.leafDirectoryOffset = header.metadataOffset + header.metadataLength
        header.leafDirectoryLength = UInt64(leaves.count)
        header.tileDataOffset = header.leafDirectoryOffset + header.leafDirectoryLength
        header.tileDataLength = dataLength
        header.addressedTiles = UInt64(ids.count)
        header.tileEntries = UInt64(entries.count)
        header.tileContents = UInt64(order.count)
        header.clustered = true
        header.internalCompression = .gzip
        header.tileCompression = .none

        let temporary = path + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
              let out = FileHandle(forWritingAtPath: temporary) else {
            throw PMTilesError.io("\(path): cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        do {
            try out.write(contentsOf: Data(header.bytes + root + metadata + leaves))
            for content in order {
                let (offset, length) = contents[content]
                try reader.seek(toOffset: offset)
                guard let data = try reader.read(upToCount: Int(length)), data.count == Int(length) else {
                    throw PMTilesError.io("\(scratchPath): short read")
                }
                try out.write(contentsOf: data)
            }
            try out.synchronize()
            try out.close()
        } catch {
            try? out.close()
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw PMTilesError.io("\(path): \(reason)")
        }
        // The scratch copy is no longer needed; deinit would remove it too, later.
        unlink(scratchPath)
    }

    /// One root directory when it fits the limit; otherwise leaves of growing size until
    /// the root that points at them fits (as go-pmtiles does).
    func directories(_ entries: [PMTilesEntry]) -> (root: [UInt8], leaves: [UInt8]) {
        let single = PMTilesDirectory.serialize(entries)
        if single.count <= rootLimit { return (single, []) }
        var leafSize = max(4096 / 16, entries.count / 3500)
        if rootLimit >= 16384 - PMTilesHeader.size { leafSize = max(4096, leafSize) }
        while true {
            var rootEntries = [PMTilesEntry]()
            var leaves = [UInt8]()
            var start = 0
            while start < entries.count {
                let chunk = Array(entries[start..<min(entries.count, start + leafSize)])
                let serialized = PMTilesDirectory.serialize(chunk)
                rootEntries.append(PMTilesEntry(tileID: chunk[0].tileID, offset: UInt64(leaves.count), length: UInt32(serialized.count), runLength: 0))
                leaves += serialized
                start += leafSize
            }
            let root = PMTilesDirectory.serialize(rootEntries)
            if root.count <= rootLimit { return (root, leaves) }
            leafSize += leafSize / 5 + 1
        }
    }
}
