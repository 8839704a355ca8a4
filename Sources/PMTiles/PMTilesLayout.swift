import Compression

/// A PMTiles v3 header checked against its file, and the steps of reading through it, apart
/// from how the bytes arrive: `PMTilesReader` reads them with `pread`, TileSources' HTTP
/// reader with range requests. Both take every number of the file through these checks.
///
/// A lookup walks from the root: `step` says whether a directory holds the tile, lacks it,
/// or points at a leaf (`leafRange`, then `leaf` to parse what was read and `checkLeaf`
/// to confirm the leaf holds only the ids its pointer covers), at most
/// `PMTilesLimits.leafDepth` leaves deep.
package struct PMTilesLayout: Sendable {
    /// The file's path or URL, for errors.
    package let file: String
    package let header: PMTilesHeader
    /// The ids the header's zooms number: no entry may reach past them.
    package let ids: Range<UInt64>

    /// Checks the header at the start of `head` (the file's first bytes: at least the
    /// header's 127 unless the file is shorter) against the file's `fileSize`.
    package init(head: [UInt8], fileSize: UInt64, file: String) throws(PMTilesError) {
        guard fileSize >= UInt64(PMTilesHeader.size), head.count >= PMTilesHeader.size else {
            guard head.starts(with: "PMTiles".utf8) else { throw .notPMTiles }
            throw .invalid(file: file, field: "file size", value: fileSize, reason: "is smaller than the \(PMTilesHeader.size)-byte header")
        }
        header = try PMTilesHeader(parsing: Array(head.prefix(PMTilesHeader.size)))
        try header.validate(fileSize: fileSize, file: file)
        guard header.internalCompression == .gzip || header.internalCompression == .none else {
            throw .unsupportedCompression("internal \(header.internalCompression)")
        }
        guard header.tileCompression == .none || header.tileCompression == .unknown else {
            throw .unsupportedCompression("tiles \(header.tileCompression) (raster tiles are stored uncompressed)")
        }
        self.file = file
        ids = PMTilesID.first(ofZoom: Int(header.minZoom))..<PMTilesID.first(ofZoom: Int(header.maxZoom) + 1)
    }

    /// Where the root directory lies; validate() bounded it to the first 16 KiB.
    package var rootRange: (offset: UInt64, length: Int) { (header.rootOffset, Int(header.rootLength)) }

    /// Where the metadata lies; validate() bounded it to `PMTilesLimits.metadataBytes`.
    package var metadataRange: (offset: UInt64, length: Int) { (header.metadataOffset, Int(header.metadataLength)) }

    package func root(_ bytes: [UInt8]) throws(PMTilesError) -> [PMTilesEntry] {
        try PMTilesDirectory.deserialize(bytes, context(name: "root directory"))
    }

    /// The metadata JSON from its stored bytes (decompressed when the header says gzip).
    package func metadata(_ stored: [UInt8]) throws(PMTilesError) -> [UInt8] {
        guard header.internalCompression == .gzip, !stored.isEmpty else { return stored }
        do { return try Gzip.decompress(stored, limit: Int(PMTilesLimits.metadataBytes)) } catch {
            throw .invalid(file: file, field: "metadata length", value: header.metadataLength, reason: "does not hold gzip metadata: \(error.reason)")
        }
    }

    /// What a directory says about tile id `id`.
    package enum Step: Sendable {
        /// The run holding the tile.
        case tile(PMTilesEntry)
        /// The file has no such tile.
        case absent
        /// The tile, if any, is in the leaf this entry points at, which may hold only `ids`.
        case leaf(PMTilesEntry, ids: Range<UInt64>)
    }

    /// One step of a lookup in `directory`, reached `depth` leaves below the root, which may
    /// hold the ids below `bound`.
    package func step(_ directory: [PMTilesEntry], id: UInt64, bound: UInt64, depth: Int) throws(PMTilesError) -> Step {
        guard ids.contains(id), let index = PMTilesDirectory.find(directory, id) else { return .absent }
        let entry = directory[index]
        if entry.runLength > 0 { return .tile(entry) }
        guard depth < PMTilesLimits.leafDepth else { throw tooDeep(entry) }
        // A leaf holds the ids from its pointer up to the next entry's.
        return .leaf(entry, ids: entry.tileID..<(index + 1 < directory.count ? directory[index + 1].tileID : bound))
    }

    /// Where the bytes of a tile entry lie. deserialize checked offset + length against the
    /// tile data length, which validate checked against the file size: no overflow.
    package func tileRange(_ entry: PMTilesEntry) -> (offset: UInt64, length: Int) {
        (header.tileDataOffset + entry.offset, Int(entry.length))
    }

    /// Where the leaf a pointer names lies, refused beyond `PMTilesLimits.directoryBytes`.
    package func leafRange(_ pointer: PMTilesEntry) throws(PMTilesError) -> (offset: UInt64, length: Int) {
        guard Int(pointer.length) <= PMTilesLimits.directoryBytes else {
            throw .invalid(file: file, field: "\(Self.leafName(pointer)) length", value: UInt64(pointer.length),
                           reason: "exceeds the limit of \(PMTilesLimits.directoryBytes) bytes")
        }
        // deserialize checked offset + length against the leaf section, validate the section.
        return (header.leafDirectoryOffset + pointer.offset, Int(pointer.length))
    }

    /// Parses a leaf read from `leafRange(pointer)`, against all the header's ids so that a
    /// cached copy serves any pointer at it; `checkLeaf` checks a pointer's own range.
    package func leaf(_ bytes: [UInt8], of pointer: PMTilesEntry) throws(PMTilesError) -> [PMTilesEntry] {
        try PMTilesDirectory.deserialize(bytes, context(name: Self.leafName(pointer)))
    }

    /// Throws unless the leaf `pointer` names holds at least one entry and only `ids`.
    package func checkLeaf(_ entries: [PMTilesEntry], of pointer: PMTilesEntry, ids: Range<UInt64>) throws(PMTilesError) {
        let name = Self.leafName(pointer)
        guard let first = entries.first, let last = entries.last else {
            throw .invalid(file: file, field: "\(name) entry count", value: 0, reason: "is empty")
        }
        guard first.tileID >= ids.lowerBound else {
            throw .invalid(file: file, field: "\(name) entry 0 tile id", value: first.tileID,
                           reason: "is below the tile id \(ids.lowerBound) of the entry pointing at it")
        }
        let end = last.tileID + UInt64(max(last.runLength, 1))
        guard end <= ids.upperBound else {
            throw .invalid(file: file, field: "\(name) entry \(entries.count - 1) tile id", value: last.tileID,
                           reason: "reaches past \(ids.upperBound), the tile id of the entry after the one pointing at it")
        }
    }

    package func tooDeep(_ entry: PMTilesEntry) -> PMTilesError {
        .invalid(file: file, field: "leaf directory at offset \(entry.offset) depth", value: UInt64(PMTilesLimits.leafDepth + 1),
                 reason: "exceeds the \(PMTilesLimits.leafDepth) levels of leaves a lookup follows")
    }

    private static func leafName(_ pointer: PMTilesEntry) -> String { "leaf directory at offset \(pointer.offset)" }

    private func context(name: String) -> PMTilesDirectory.Context {
        PMTilesDirectory.Context(file: file, name: name, gzip: header.internalCompression == .gzip,
                                 tileDataLength: header.tileDataLength, leafDirectoryLength: header.leafDirectoryLength, ids: ids)
    }
}
