public import Canvas
public import TileMath

/// Encoded tile bytes and what they are.
public struct TileData: Hashable, Sendable {
    public var bytes: [UInt8]
    public var format: ImageFormat
    /// How the tile came to be; the viewer's debug mode marks what was not native.
    public var provenance: Provenance
    /// How long the tile may be reused without asking its source again; the server's
    /// memory cache and the `Cache-Control` it sends follow it.
    public var freshness: Freshness
    /// The pixels of `bytes`, when the source has already decoded them (a remote tile is
    /// decoded to be checked before it is cached), so whoever draws the tile does not decode
    /// it again. Not part of equality: it is what `bytes` say.
    public var decoded: RGBAImage?

    public init(bytes: [UInt8], format: ImageFormat, provenance: Provenance = .native, freshness: Freshness = .unlimited,
                decoded: RGBAImage? = nil) {
        self.bytes = bytes
        self.format = format
        self.provenance = provenance
        self.freshness = freshness
        self.decoded = decoded
    }

    /// The tile's pixels: the ones already decoded if they are within `limits`, else `bytes`
    /// decoded (which also gives the error for a tile beyond them).
    public func image(limits: ImageLimits = .tile) throws(CanvasError) -> RGBAImage {
        if let decoded, limits.allows(width: decoded.width, height: decoded.height) { return decoded }
        return try RGBAImage(decoding: bytes, limits: limits)
    }

    public static func == (a: TileData, b: TileData) -> Bool {
        a.bytes == b.bytes && a.format == b.format && a.provenance == b.provenance && a.freshness == b.freshness
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
        hasher.combine(format)
        hasher.combine(provenance)
        hasher.combine(freshness)
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

/// How long a tile may be reused without asking its source again (RFC 9111 §4.2), as its
/// upstream said: local stores and drawn tiles are `unlimited` (the layer's max-age decides).
public struct Freshness: Hashable, Sendable {
    /// When (whole seconds) the tile becomes stale; nil: no limit from the source.
    public var expiresAt: EpochSeconds?
    /// Upstream `no-store`: no cache may keep the tile, and clients are told so.
    public var noStore: Bool
    /// Upstream `no-cache`: a cache may keep it but must ask again before each use.
    public var noCache: Bool

    public init(expiresAt: EpochSeconds? = nil, noStore: Bool = false, noCache: Bool = false) {
        self.expiresAt = expiresAt
        self.noStore = noStore
        self.noCache = noCache
    }

    /// No limit from the source.
    public static let unlimited = Freshness()

    /// True when a cache may keep the tile and reuse it without asking (not `no-store`
    /// nor `no-cache`).
    public var isReusable: Bool { !noStore && !noCache }

    /// The freshness of a tile made of several: the earliest expiry and every restriction
    /// (no-store in any part makes the whole no-store).
    public func combined(with other: Freshness) -> Freshness {
        let expiry: EpochSeconds? = switch (expiresAt, other.expiresAt) {
        case (nil, let x), (let x, nil): x
        case (let a?, let b?): Swift.min(a, b)
        }
        return Freshness(expiresAt: expiry, noStore: noStore || other.noStore, noCache: noCache || other.noCache)
    }

    /// Whole seconds left at `now`, 0 once expired; nil without a limit.
    public func secondsLeft(now: EpochSeconds) -> Int? {
        guard let expiresAt else { return nil }
        let left = expiresAt - now
        // expiresAt is finite and capped where it is made; this guard keeps Int() safe anyway.
        guard left.isFinite, left > 0 else { return 0 }
        return Int(Swift.min(left, Freshness.longest).rounded(.down))
    }

    /// The longest freshness kept: RFC 9111 §1.2.2 caps delta-seconds at 2^31.
    public static let longest: Double = 2_147_483_648
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
