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

    static func deserialize(_ compressed: [UInt8]) throws(PMTilesError) -> [PMTilesEntry] {
        let bytes: [UInt8]
        do { bytes = try Gzip.decompress(compressed) } catch { throw .corrupt("directory: \(error.reason)") }
        var index = 0
        func varint() throws(PMTilesError) -> UInt64 {
            var value: UInt64 = 0, shift: UInt64 = 0
            while true {
                guard index < bytes.count, shift < 64 else { throw .corrupt("directory ends inside a varint") }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        let count = Int(try varint())
        guard count <= bytes.count else { throw .corrupt("directory claims \(count) entries in \(bytes.count) bytes") }
        var entries = [PMTilesEntry](repeating: PMTilesEntry(tileID: 0, offset: 0, length: 0, runLength: 0), count: count)
        var last: UInt64 = 0
        for i in 0..<count { last += try varint(); entries[i].tileID = last }
        for i in 0..<count { entries[i].runLength = UInt32(truncatingIfNeeded: try varint()) }
        for i in 0..<count { entries[i].length = UInt32(truncatingIfNeeded: try varint()) }
        for i in 0..<count {
            let value = try varint()
            if i > 0, value == 0 {
                entries[i].offset = entries[i - 1].offset + UInt64(entries[i - 1].length)
            } else {
                guard value > 0 else { throw .corrupt("first directory entry has offset 0") }
                entries[i].offset = value - 1
            }
        }
        return entries
    }

    /// The entry covering a tile id (a run containing it, or the leaf pointer before it).
    static func find(_ entries: [PMTilesEntry], _ id: UInt64) -> PMTilesEntry? {
        var low = 0, high = entries.count - 1
        while low <= high {
            let middle = (low + high) >> 1
            if entries[middle].tileID < id { low = middle + 1 } else if entries[middle].tileID > id { high = middle - 1 } else { return entries[middle] }
        }
        guard high >= 0 else { return nil }
        let candidate = entries[high]
        if candidate.runLength == 0 { return candidate }
        return id - candidate.tileID < UInt64(candidate.runLength) ? candidate : nil
    }
}
