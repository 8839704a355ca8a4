/// The 127-byte PMTiles v3 header, little-endian.
public struct PMTilesHeader: Hashable, Sendable {
    public enum Compression: UInt8, Sendable { case unknown = 0, none = 1, gzip = 2, brotli = 3, zstd = 4 }
    public enum TileType: UInt8, Sendable { case unknown = 0, mvt = 1, png = 2, jpeg = 3, webp = 4, avif = 5 }

    public static let size = 127

    public var rootOffset: UInt64 = 0, rootLength: UInt64 = 0
    public var metadataOffset: UInt64 = 0, metadataLength: UInt64 = 0
    public var leafDirectoryOffset: UInt64 = 0, leafDirectoryLength: UInt64 = 0
    public var tileDataOffset: UInt64 = 0, tileDataLength: UInt64 = 0
    public var addressedTiles: UInt64 = 0, tileEntries: UInt64 = 0, tileContents: UInt64 = 0
    public var clustered = false
    public var internalCompression: Compression = .gzip
    public var tileCompression: Compression = .none
    public var tileType: TileType = .png
    public var minZoom: UInt8 = 0, maxZoom: UInt8 = 0
    /// Bounds and centre in degrees × 10^7.
    public var minLonE7: Int32 = -1_800_000_000, minLatE7: Int32 = -850_511_287
    public var maxLonE7: Int32 = 1_800_000_000, maxLatE7: Int32 = 850_511_287
    public var centerZoom: UInt8 = 0
    public var centerLonE7: Int32 = 0, centerLatE7: Int32 = 0

    public init() {}

    public init(parsing bytes: [UInt8]) throws(PMTilesError) {
        guard bytes.count >= Self.size, bytes.prefix(7).elementsEqual("PMTiles".utf8) else { throw .notPMTiles }
        guard bytes[7] == 3 else { throw .unsupportedVersion(Int(bytes[7])) }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        func i32(_ at: Int) -> Int32 { Int32(bitPattern: (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }) }
        rootOffset = u64(8); rootLength = u64(16)
        metadataOffset = u64(24); metadataLength = u64(32)
        leafDirectoryOffset = u64(40); leafDirectoryLength = u64(48)
        tileDataOffset = u64(56); tileDataLength = u64(64)
        addressedTiles = u64(72); tileEntries = u64(80); tileContents = u64(88)
        clustered = bytes[96] == 1
        internalCompression = Compression(rawValue: bytes[97]) ?? .unknown
        tileCompression = Compression(rawValue: bytes[98]) ?? .unknown
        tileType = TileType(rawValue: bytes[99]) ?? .unknown
        minZoom = bytes[100]; maxZoom = bytes[101]
        minLonE7 = i32(102); minLatE7 = i32(106); maxLonE7 = i32(110); maxLatE7 = i32(114)
        centerZoom = bytes[118]; centerLonE7 = i32(119); centerLatE7 = i32(123)
    }

    public var bytes: [UInt8] {
        var out = Array("PMTiles".utf8) + [3]
        func u64(_ v: UInt64) { for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        func i32(_ v: Int32) { let u = UInt32(bitPattern: v); for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: u >> (8 * UInt32(i)))) } }
        u64(rootOffset); u64(rootLength); u64(metadataOffset); u64(metadataLength)
        u64(leafDirectoryOffset); u64(leafDirectoryLength); u64(tileDataOffset); u64(tileDataLength)
        u64(addressedTiles); u64(tileEntries); u64(tileContents)
        out += [clustered ? 1 : 0, internalCompression.rawValue, tileCompression.rawValue, tileType.rawValue, minZoom, maxZoom]
        i32(minLonE7); i32(minLatE7); i32(maxLonE7); i32(maxLatE7)
        out.append(centerZoom)
        i32(centerLonE7); i32(centerLatE7)
        return out
    }
}

/// Checks of the header against the file it came from, before any of its numbers is used.
extension PMTilesHeader {
    /// The header and root directory lie in the first 16 KiB (spec v3: "Root Directory").
    public static let rootRegion: UInt64 = 16_384

    /// Throws `PMTilesError.invalid` naming the field and its value when a zoom lies outside
    /// the spec's 0-31 (or minzoom is above maxzoom), or a section (root directory, metadata,
    /// leaf directories, tile data) does not lie within the file's `fileSize` bytes; after this
    /// every `offset + length` of the header is known not to overflow.
    public func validate(fileSize: UInt64, file: String) throws(PMTilesError) {
        func invalid(_ field: String, _ value: UInt64, _ reason: String) -> PMTilesError {
            .invalid(file: file, field: field, value: value, reason: reason)
        }
        for (name, zoom) in [("minzoom", minZoom), ("maxzoom", maxZoom)] where zoom > PMTilesID.maxZoom {
            throw invalid(name, UInt64(zoom), "is outside the zooms 0-\(PMTilesID.maxZoom) of the spec")
        }
        guard minZoom <= maxZoom else { throw invalid("minzoom", UInt64(minZoom), "is above maxzoom \(maxZoom)") }
        guard rootLength > 0 else { throw invalid("root directory length", 0, "leaves the file without a root directory") }
        try Self.checkSection("root directory", offset: rootOffset, length: rootLength, within: fileSize, file: file)
        guard rootOffset + rootLength <= Self.rootRegion else {
            throw invalid("root directory length", rootLength, "at offset \(rootOffset) ends beyond the first \(Self.rootRegion) bytes, where the spec keeps it")
        }
        guard metadataLength <= PMTilesLimits.metadataBytes else {
            throw invalid("metadata length", metadataLength, "exceeds the limit of \(PMTilesLimits.metadataBytes) bytes")
        }
        try Self.checkSection("metadata", offset: metadataOffset, length: metadataLength, within: fileSize, file: file)
        try Self.checkSection("leaf directories", offset: leafDirectoryOffset, length: leafDirectoryLength, within: fileSize, file: file)
        try Self.checkSection("tile data", offset: tileDataOffset, length: tileDataLength, within: fileSize, file: file)
    }

    /// Throws unless `offset + length <= size`, without computing a sum that could overflow.
    static func checkSection(_ name: String, offset: UInt64, length: UInt64, within size: UInt64, sizeName: String = "file size",
                             file: String) throws(PMTilesError) {
        guard length <= size else {
            throw .invalid(file: file, field: "\(name) length", value: length, reason: "exceeds the \(sizeName) \(size)")
        }
        guard offset <= size - length else {
            throw .invalid(file: file, field: "\(name) offset", value: offset, reason: "plus its length \(length) exceeds the \(sizeName) \(size)")
        }
    }
}

public enum PMTilesError: Error, Equatable, Sendable, CustomStringConvertible {
    case notPMTiles
    case unsupportedVersion(Int)
    case unsupportedCompression(String)
    /// A number read from the file is out of its range: `field` names it (with the directory
    /// and entry it belongs to), `value` is what the file says and `reason` what is wrong.
    case invalid(file: String, field: String, value: UInt64, reason: String)
    case corrupt(String)
    case io(String)

    /// The message without the file's name (for callers that name the file themselves).
    public var reason: String {
        switch self {
        case .notPMTiles: return "not a PMTiles file (no \"PMTiles\" magic)"
        case .unsupportedVersion(let v): return "PMTiles version \(v) is not supported (only 3)"
        case .unsupportedCompression(let what): return "unsupported compression: \(what)"
        case .invalid(_, let field, let value, let reason): return "not a valid PMTiles file: \(field) \(value) \(reason)"
        case .corrupt(let reason): return "corrupt PMTiles: \(reason)"
        case .io(let reason): return reason
        }
    }

    public var description: String {
        if case .invalid(let file, _, _, _) = self, !file.isEmpty { return "\(file): \(reason)" }
        return reason
    }
}
