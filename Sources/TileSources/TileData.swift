public import Canvas
public import TileMath

/// Encoded tile bytes and what they are.
public struct TileData: Hashable, Sendable {
    public var bytes: [UInt8]
    public var format: ImageFormat
    /// How the tile came to be; the viewer's debug mode marks what was not native.
    public var provenance: Provenance

    public init(bytes: [UInt8], format: ImageFormat, provenance: Provenance = .native) {
        self.bytes = bytes
        self.format = format
        self.provenance = provenance
    }

    /// Where a tile's pixels came from.
    public enum Provenance: Hashable, Sendable {
        /// The source had this very tile.
        case native
        /// Scaled up from the matching part of an ancestor (zoom above the native maximum).
        case overzoomed(from: TileID)
        /// Scaled down from descendants (zoom below the native minimum).
        case underzoomed(from: Int)
        /// The layer's fallback tile, drawn where the source has none.
        case fallback
        /// Drawn from several layers.
        case composed
        /// Served from a cache past its freshness because the upstream is down.
        case stale
    }
}

/// What asking a source for a tile gives: a tile, or one of the two kinds of absence.
///
/// Absent is not failed: `noTile` is permanent (outside the bounds or zoom range, a 404
/// upstream: asking again will not help), `unavailable` is transient (the upstream is
/// down or slow: ask again after `retryAfter`). A failure (a corrupt store, a disk
/// error) is thrown instead.
public enum TileResult: Hashable, Sendable {
    case tile(TileData)
    case noTile
    case unavailable(retryAfter: Duration?)

    public var data: TileData? {
        if case .tile(let data) = self { return data }
        return nil
    }
}

/// One request: which tile, and at what pixel density (1 for 256 px tiles of a 256 px
/// tile set, 2 for @2x).
public struct TileRequest: Hashable, Sendable {
    public var tile: TileID
    public var scale: Int

    public init(_ tile: TileID, scale: Int = 1) {
        precondition((1...4).contains(scale), "scale \(scale) is out of range [1, 4]")
        self.tile = tile
        self.scale = scale
    }
}

extension TileResult {
    /// The answer of a store for bytes it holds (or nil): a tile when they are an image,
    /// otherwise an error naming the store and the tile.
    static func stored(_ bytes: [UInt8]?, in path: String, tile: TileID) throws(TileSourceError) -> TileResult {
        guard let bytes else { return .noTile }
        guard let format = ImageFormat(sniffing: bytes) else {
            throw .corrupt(path: path, reason: "tile \(tile) is not a PNG, JPEG or WebP image")
        }
        return .tile(TileData(bytes: bytes, format: format))
    }
}
