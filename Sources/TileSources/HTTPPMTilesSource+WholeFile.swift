import Foundation
import Synchronization
public import PMTiles

extension HTTPPMTilesSource {
    /// A reader of the whole file for walks that cannot await (`TileStore.forEachTile` and
    /// `statistics`: `tilekit info`, `tilekit convert`), with the same checks as a local
    /// file's. It reads ahead in ranges of 1 MiB: a clustered file lays out its leaves, and
    /// its tiles, in the order a walk visits them, so one request serves many reads. Each
    /// request blocks the calling thread; a file replaced or lost during the walk ends it
    /// with `PMTilesError.io` (which `TileStore` reports as `unreadable`).
    public func wholeFileReader() throws(TileSourceError) -> PMTilesReader {
        let archive = try archiveBlocking()
        do {
            return try PMTilesReader(storage: ReadAheadStorage(reader: reader, archive: archive), name: name)
        } catch {
            if case .io(let reason) = error { throw .unreadable(path: name, reason: reason) }
            throw .corrupt(path: name, reason: error.reason)
        }
    }
}

/// Range reads of one version of a remote file, through a few recent chunks (the file's
/// first bytes, read when it was opened, among them).
final class ReadAheadStorage: PMTilesStorage {
    static let chunkBytes = 1 << 20
    /// Chunks kept besides the first bytes: one in the leaves and one in the tiles.
    static let chunkCount = 2

    let reader: HTTPRangeReader
    let version: RemoteFileVersion
    private let head: [UInt8]
    /// Recent chunks, newest last.
    private let chunks = Mutex([(offset: UInt64, bytes: [UInt8])]())

    var size: UInt64 { version.size }

    init(reader: HTTPRangeReader, archive: HTTPPMTilesSource.Archive) {
        self.reader = reader
        version = archive.version
        head = archive.head
    }

    func read(offset: UInt64, length: Int) throws(PMTilesError) -> [UInt8] {
        guard length > 0 else { return [] }
        if let bytes = Self.slice(head, at: 0, offset: offset, length: length) { return bytes }
        if let bytes = chunks.withLock({ chunks in chunks.lazy.compactMap { Self.slice($0.bytes, at: $0.offset, offset: offset, length: length) }.first }) {
            return bytes
        }
        // Directories are bounded by PMTilesLimits, tiles by the source's body limit.
        let limit = max(reader.options.maxBodyBytes, PMTilesLimits.directoryBytes)
        guard length <= limit else { throw .io("a read of \(length) bytes at offset \(offset) is above the limit of \(limit)") }
        guard offset < size, UInt64(length) <= size - offset else {
            throw .io("bytes \(HTTPRangeReader.span(offset: offset, length: length)) lie beyond the file's \(size) bytes")
        }
        let want = Int(min(UInt64(max(length, Self.chunkBytes)), size - offset))
        let answer: RangeAnswer
        do { answer = try reader.readBlocking(offset: offset, length: want, expecting: version) } catch {
            switch error {
            case .unreadable(_, let reason), .corrupt(_, let reason): throw .io(reason)
            default: throw .io(error.description)
            }
        }
        switch answer {
        case .bytes(let bytes, _):
            guard bytes.count == want else { throw .io("asked for \(want) bytes at offset \(offset), received \(bytes.count)") }
            chunks.withLock { chunks in
                chunks.append((offset, bytes))
                if chunks.count > Self.chunkCount { chunks.removeFirst() }
            }
            return Array(bytes[0..<length])
        case .replaced(let why): throw .io("the file changed while it was read: \(why)")
        case .missing(let status): throw .io("the file went away while it was read (HTTP \(status))")
        case .unavailable(_, let reason): throw .io(reason)
        }
    }

    /// `length` bytes from `offset` when `bytes`, read from `start`, hold them all.
    private static func slice(_ bytes: [UInt8], at start: UInt64, offset: UInt64, length: Int) -> [UInt8]? {
        guard offset >= start else { return nil }
        let skip = offset - start
        guard skip <= UInt64(bytes.count), UInt64(length) <= UInt64(bytes.count) - skip else { return nil }
        return Array(bytes[Int(skip)..<Int(skip) + length])
    }
}
