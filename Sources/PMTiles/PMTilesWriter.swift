import Foundation
public import TileMath
import Compression

/// Writes a PMTiles v3 file: tiles are appended to a scratch file as they come, repeated
/// tiles stored once, and `finish` lays out header, root directory, metadata, leaf
/// directories and the tile data (clustered: in tile id order) into a temporary file that
/// is renamed over `path`. Until then `path` is untouched.
///
/// Both scratch files sit beside `path` with names derived from it (`scratchPaths(for:)`), so
/// a later writer of the same path, or a sweep of what a killed run left, finds them. A failed
/// or abandoned writer removes them. One writer per path at a time.
public final class PMTilesWriter {
    public let path: String
    /// Largest compressed root directory: the header and root must fit in the first 16 KB.
    let rootLimit: Int
    private let scratchPath: String
    private let layoutPath: String
    private let scratch: Int32
    private var scratchLength: UInt64 = 0
    /// Stored contents: offset and length in the scratch file.
    private var contents: [(offset: UInt64, length: UInt32)] = []
    private var contentIndex: [ContentDigest: Int] = [:]
    private var tiles: [UInt64: Int] = [:]

    /// The scratch files of a writer of `path`: the tile contents as they come
    /// (`.NAME.tiles.tmp`) and the file being laid out (`.NAME.tmp`).
    public static func scratchPaths(for path: String) -> (tiles: String, layout: String) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        return (folder.appendingPathComponent(".\(url.lastPathComponent).tiles.tmp").path,
                folder.appendingPathComponent(".\(url.lastPathComponent).tmp").path)
    }

    public init(path: String, rootLimit: Int = 16384 - PMTilesHeader.size) throws(PMTilesError) {
        self.path = path
        self.rootLimit = rootLimit
        (scratchPath, layoutPath) = Self.scratchPaths(for: path)
        // Left by a killed run. An earlier writer of this process still holding the scratch
        // file keeps reading its own (now unnamed) copy through its descriptor.
        unlink(layoutPath)
        unlink(scratchPath)
        scratch = open(scratchPath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard scratch >= 0 else { throw Self.failure(errno, scratchPath) }
    }

    deinit {
        // Only our own scratch file: a later writer of the same path may have made a new one.
        var mine = stat(), named = stat()
        if fstat(scratch, &mine) == 0, stat(scratchPath, &named) == 0, mine.st_dev == named.st_dev, mine.st_ino == named.st_ino {
            unlink(scratchPath)
        }
        close(scratch)
    }

    /// A failed system call as the module's I/O error: the cause in words, then the file.
    static func failure(_ code: Int32, _ file: String) -> PMTilesError {
        let text = String(cString: strerror(code))
        return .io((text.first?.lowercased() ?? "") + text.dropFirst() + " (writing \(file))")
    }

    public var tileCount: Int { tiles.count }
    public var uniqueContentCount: Int { contents.count }

    public func write(_ tile: TileID, bytes: [UInt8]) throws {
        let key = ContentDigest(bytes)
        if let existing = contentIndex[key] {
            tiles[tile.pmtilesID] = existing
            return
        }
        guard let length = UInt32(exactly: bytes.count) else { throw PMTilesError.io("tile \(tile) is \(bytes.count) bytes, more than a PMTiles entry can hold") }
        let failure = bytes.withUnsafeBytes { Self.writeAll(scratch, $0) }
        guard failure == 0 else { throw Self.failure(failure, scratchPath) }
        contents.append((scratchLength, length))
        scratchLength += UInt64(length)
        contentIndex[key] = contents.count - 1
        tiles[tile.pmtilesID] = contents.count - 1
    }

    public func contains(_ tile: TileID) -> Bool { tiles[tile.pmtilesID] != nil }

    /// Lays the file out and renames it into place. `header` supplies the type, zooms,
    /// bounds and centre; offsets and counts are filled in here.
    public func finish(header template: PMTilesHeader, metadataJSON: [UInt8]) throws {
        // Clustered: contents laid out in the order their first tile id appears.
        let ids = tiles.keys.sorted()
        var finalOffset = [Int: UInt64]()
        var order = [Int]()
        var dataLength: UInt64 = 0
        var entries = [PMTilesEntry]()
        for id in ids {
            guard let content = tiles[id] else { continue }
            if finalOffset[content] == nil {
                finalOffset[content] = dataLength
                order.append(content)
                dataLength += UInt64(contents[content].length)
            }
            let offset = finalOffset[content] ?? 0
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

        let out = open(layoutPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard out >= 0 else { throw Self.failure(errno, layoutPath) }
        var isOpen = true
        do {
            let head = (header.bytes + root + metadata + leaves).withUnsafeBytes { Self.writeAll(out, $0) }
            guard head == 0 else { throw Self.failure(head, layoutPath) }
            // Contents in clustered order, copied from the scratch file a block at a time.
            var block = [UInt8](repeating: 0, count: 1 << 20)
            for content in order {
                let (offset, length) = contents[content]
                var done = 0
                while done < Int(length) {
                    let want = min(block.count, Int(length) - done)
                    let got = block.withUnsafeMutableBytes { pread(scratch, $0.baseAddress, want, off_t(offset) + off_t(done)) }
                    guard got > 0 else { throw got < 0 ? Self.failure(errno, scratchPath) : PMTilesError.io("short read of \(scratchPath)") }
                    let failure = block.withUnsafeBytes { Self.writeAll(out, UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
                    guard failure == 0 else { throw Self.failure(failure, layoutPath) }
                    done += got
                }
            }
            guard fsync(out) == 0 else { throw Self.failure(errno, layoutPath) }
            // close reports deferred write errors on some file systems (NFS).
            isOpen = false
            guard close(out) == 0 else { throw Self.failure(errno, layoutPath) }
        } catch {
            if isOpen { close(out) }
            unlink(layoutPath)
            throw error
        }
        if let code = AtomicRename.rename(layoutPath, over: path) {
            unlink(layoutPath)
            throw Self.failure(code, path)
        }
        // The scratch copy is no longer needed (deinit would remove it too, later).
        unlink(scratchPath)
    }

    /// Writes the whole buffer, resuming after short writes and interruptions; the errno of a failure, else 0.
    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < buffer.count, let base = buffer.baseAddress {
            let count = Glibc.write(fd, base + offset, buffer.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += count
        }
        return 0
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
