import Compression

/// One directory entry: a run of `runLength` consecutive tile ids sharing the bytes at
/// `offset` (relative to the tile data section), or with `runLength` 0 a pointer to a leaf
/// directory at `offset` (relative to the leaf directory section).
public struct PMTilesEntry: Hashable, Sendable {
    public var tileID: UInt64
    public var offset: UInt64
    public var length: UInt32
    public var runLength: UInt32

    public init(tileID: UInt64, offset: UInt64, length: UInt32, runLength: UInt32) {
        self.tileID = tileID
        self.offset = offset
        self.length = length
        self.runLength = runLength
    }
}

/// Directory (de)serialisation: column-wise varints (id deltas, run lengths, lengths,
/// offsets with 0 meaning "right after the previous entry"), then compressed.
enum PMTilesDirectory {
    static func serialize(_ entries: [PMTilesEntry]) -> [UInt8] {
        var out = [UInt8]()
        func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 { out.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
            out.append(UInt8(v))
        }
        varint(UInt64(entries.count))
        var last: UInt64 = 0
        for e in entries { varint(e.tileID - last); last = e.tileID }
        for e in entries { varint(UInt64(e.runLength)) }
        for e in entries { varint(UInt64(e.length)) }
        for (i, e) in entries.enumerated() {
            if i > 0, e.offset == entries[i - 1].offset + UInt64(entries[i - 1].length) { varint(0) } else { varint(e.offset + 1) }
        }
        return Gzip.compress(out)
    }

    /// Where a directory sits and what its entries may point at: every check of an entry
    /// needs these.
    struct Context {
        /// The file, for errors.
        var file: String
        /// "root directory" or "leaf directory at offset N", for errors.
        var name: String
        /// Whether the directory bytes are gzip (the header's internal compression).
        var gzip: Bool
        /// Tile entries point into the tile data section, leaf entries into the leaf section.
        var tileDataLength: UInt64
        var leafDirectoryLength: UInt64
        /// The ids the entries (with their runs) must lie in: a leaf holds only the ids
        /// between its pointer and the next, and no directory goes past the header's maxzoom.
        var ids: Range<UInt64>
    }

    /// Parses a directory, checking every number before it is used: varints of at most 10
    /// bytes, an entry count the bytes can hold, ids strictly increasing within `ids` without
    /// overflow, runs that neither overlap the next entry nor reach past the ids, and
    /// offsets plus lengths within their section.
    static func deserialize(_ stored: [UInt8], _ context: Context) throws(PMTilesError) -> [PMTilesEntry] {
        func invalid(_ field: String, _ value: UInt64, _ reason: String) -> PMTilesError {
            .invalid(file: context.file, field: "\(context.name) \(field)", value: value, reason: reason)
        }
        let bytes: [UInt8]
        if context.gzip {
            do { bytes = try Gzip.decompress(stored, limit: PMTilesLimits.directoryBytes) } catch {
                throw invalid("length", UInt64(stored.count), "does not hold a gzip directory: \(error.reason)")
            }
        } else {
            bytes = stored
        }
        var index = 0
        func varint() throws(PMTilesError) -> UInt64 {
            let start = index
            var value: UInt64 = 0
            for shift in stride(from: UInt64(0), to: 70, by: 7) {
                guard index < bytes.count else { throw invalid("byte", UInt64(start), "starts a varint that the directory ends inside") }
                let byte = bytes[index]
                index += 1
                // The tenth byte holds the 64th bit only: anything more does not fit.
                guard shift < 63 || byte <= 1 else { throw invalid("byte", UInt64(start), "starts a varint longer than 64 bits") }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
            }
            throw invalid("byte", UInt64(start), "starts a varint longer than 10 bytes")
        }
        let declared = try varint()
        // Each entry takes at least one byte in each of its four columns.
        let room = UInt64(bytes.count - index) / 4
        guard declared <= PMTilesLimits.directoryEntries else {
            throw invalid("entry count", declared, "exceeds the limit of \(PMTilesLimits.directoryEntries) entries")
        }
        guard declared <= room else {
            throw invalid("entry count", declared, "needs at least \(declared * 4) bytes but \(bytes.count - index) follow it")
        }
        let count = Int(declared)
        var entries = [PMTilesEntry](repeating: PMTilesEntry(tileID: 0, offset: 0, length: 0, runLength: 0), count: count)
        var last: UInt64 = 0
        for i in 0..<count {
            let delta = try varint()
            guard i == 0 || delta > 0 else { throw invalid("entry \(i) tile id delta", 0, "repeats the previous tile id \(last)") }
            let (id, overflow) = last.addingReportingOverflow(delta)
            guard !overflow else { throw invalid("entry \(i) tile id delta", delta, "overflows the tile id after \(last)") }
            guard context.ids.contains(id) else {
                throw invalid("entry \(i) tile id", id, "is outside the ids \(context.ids.lowerBound)..<\(context.ids.upperBound) this directory may hold")
            }
            entries[i].tileID = id
            last = id
        }
        for i in 0..<count {
            let run = try varint()
            guard let runLength = UInt32(exactly: run) else { throw invalid("entry \(i) run length", run, "exceeds \(UInt32.max)") }
            entries[i].runLength = runLength
        }
        for i in 0..<count {
            let value = try varint()
            guard let length = UInt32(exactly: value) else { throw invalid("entry \(i) length", value, "exceeds \(UInt32.max)") }
            guard length > 0 else { throw invalid("entry \(i) length", 0, "is empty") }
            entries[i].length = length
        }
        for i in 0..<count {
            let value = try varint()
            if i > 0, value == 0 {
                // 0: right after the previous entry's bytes.
                let previous = entries[i - 1]
                let (offset, overflow) = previous.offset.addingReportingOverflow(UInt64(previous.length))
                guard !overflow else { throw invalid("entry \(i) offset", 0, "follows entry \(i - 1) at \(previous.offset) + \(previous.length), which overflows") }
                entries[i].offset = offset
            } else {
                guard value > 0 else { throw invalid("entry 0 offset", 0, "means \"after the previous entry\" but there is none") }
                entries[i].offset = value - 1
            }
        }
        for (i, entry) in entries.enumerated() {
            let isLeaf = entry.runLength == 0
            try PMTilesHeader.checkSection("\(context.name) entry \(i)", offset: entry.offset, length: UInt64(entry.length),
                                           within: isLeaf ? context.leafDirectoryLength : context.tileDataLength,
                                           sizeName: isLeaf ? "leaf directories length" : "tile data length", file: context.file)
            // The ids are below 2^63 and a run below 2^32: the sum cannot overflow.
            let end = entry.tileID + UInt64(max(entry.runLength, 1))
            let limit = i + 1 < count ? entries[i + 1].tileID : context.ids.upperBound
            guard end <= limit else {
                throw invalid("entry \(i) run length", UInt64(entry.runLength),
                              "from tile id \(entry.tileID) reaches past \(i + 1 < count ? "the next entry's tile id" : "the last id this directory may hold,") \(limit)")
            }
        }
        return entries
    }

    /// The index of the entry covering a tile id: a run containing it, or the leaf pointer
    /// before it. Entries are sorted by id (as `deserialize` checked).
    static func find(_ entries: [PMTilesEntry], _ id: UInt64) -> Int? {
        var low = 0, high = entries.count - 1
        while low <= high {
            let middle = (low + high) >> 1
            if entries[middle].tileID < id { low = middle + 1 } else if entries[middle].tileID > id { high = middle - 1 } else { return middle }
        }
        guard high >= 0 else { return nil }
        let candidate = entries[high]
        if candidate.runLength == 0 { return high }
        return id - candidate.tileID < UInt64(candidate.runLength) ? high : nil
    }
}

/// Bounds on what a PMTiles file may make a reader allocate or do, far above what real
/// files need (a planet's leaves hold some 10^5 entries, its metadata a few MB).
public enum PMTilesLimits {
    /// Largest metadata, compressed or not.
    public static let metadataBytes: UInt64 = 32 << 20
    /// Largest directory, compressed or not.
    public static let directoryBytes = 32 << 20
    /// Most entries in one directory.
    public static let directoryEntries: UInt64 = 1 << 21
    /// Most levels of leaf directories under the root; the spec's writers use one, and
    /// "in practice" never more than three.
    public static let leafDepth = 3
    /// Leaf entries kept in the reader's cache (about 24 bytes each).
    public static let cachedLeafEntries = 1 << 22
}
