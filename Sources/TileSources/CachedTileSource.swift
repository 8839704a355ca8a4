import Foundation
import Synchronization
import Canvas
import TileMath
import MBTiles

/// How long cached tiles live and how much room they take.
public struct CachePolicy: Hashable, Sendable {
    /// Freshness when the server gives none (no Cache-Control or Expires).
    public var defaultMaxAge: Duration = .seconds(7 * 24 * 3600)
    /// Freshness is never shorter than this, whatever max-age the upstream sends (but
    /// `no-cache` and `no-store` are always honoured). Zero honours the upstream; raise it
    /// for servers that send max-age=0 on tiles that change yearly.
    public var minimumMaxAge: Duration = .zero
    /// How long a stale copy, served because the upstream is down or answered garbage, may
    /// be reused before the upstream is asked again.
    public var staleMaxAge: Duration = .seconds(30)
    /// Tiles are evicted, least recently used first, when the cache grows past this.
    public var maxBytes: Int? = 512 << 20
    /// Serve an expired copy when the upstream is unavailable (MapProxy's behaviour).
    public var serveStale = true

    public init() {}
}

/// A remote source with a disk cache in front (one MBTiles file per pixel density:
/// `cache.mbtiles`, `cache@2x.mbtiles`), MapProxy-style:
/// a fresh copy is served without asking; an expired one is revalidated with
/// If-None-Match / If-Modified-Since; when the upstream is down, or answers with something
/// that is not a good tile, the expired copy is served (`provenance: .stale`) and kept;
/// and concurrent requests for one tile share one fetch.
///
/// Only tiles the upstream validated (`RemoteTileSource.validated`) are stored, with the
/// upstream's freshness (RFC 9111): `max-age`/`Expires` set the expiry, `no-cache` stores
/// the tile already expired (revalidated before each use), `no-store` keeps nothing and
/// removes an older copy. Every tile answered carries its freshness for the caches above.
public final class CachedTileSource: TileSource {
    public let upstream: RemoteTileSource
    public let policy: CachePolicy
    public let cachePath: String
    /// One cache file per pixel density, opened on first use.
    private let caches: Mutex<[Int: TileCacheStore]>
    private let inFlight = InFlight<TileRequest, TileResult>()
    private let stores = StoreCounter()
    /// The clock; tests move it.
    private let now: @Sendable () -> EpochSeconds

    public var metadata: TileSetMetadata { upstream.metadata }

    /// Opens (or creates) the cache files beside `cachePath`.
    public convenience init(upstream: RemoteTileSource, cachePath: String, policy: CachePolicy = CachePolicy()) throws(TileSourceError) {
        try self.init(upstream: upstream, cachePath: cachePath, policy: policy, now: { Date().timeIntervalSince1970 })
    }

    init(upstream: RemoteTileSource, cachePath: String, policy: CachePolicy, now: @escaping @Sendable () -> EpochSeconds) throws(TileSourceError) {
        self.now = now
        self.upstream = upstream
        self.policy = policy
        self.cachePath = cachePath
        let folder = URL(fileURLWithPath: cachePath).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: cachePath, reason: (error as NSError).localizedDescription)
        }
        var caches = [Int: TileCacheStore]()
        for scale in 1...4 {
            let path = Self.path(cachePath, scale: scale)
            guard scale == 1 || FileManager.default.fileExists(atPath: path) else { continue }
            do { caches[scale] = try TileCacheStore(path: path) } catch { throw .unwritable(path: path, reason: error.message) }
        }
        self.caches = Mutex(caches)
    }

    static func path(_ base: String, scale: Int) -> String {
        guard scale > 1 else { return base }
        let url = URL(fileURLWithPath: base)
        return url.deletingPathExtension().path + "@\(scale)x." + (url.pathExtension.isEmpty ? "mbtiles" : url.pathExtension)
    }

    /// The cache file for a pixel density, created on first use.
    func cache(scale: Int) throws -> TileCacheStore {
        try caches.withLock { caches in
            if let cache = caches[scale] { return cache }
            let cache = try TileCacheStore(path: Self.path(cachePath, scale: scale))
            caches[scale] = cache
            return cache
        }
    }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        try await inFlight.run(request) { try await self.load(request) }
    }

    /// Empties the cache (every density).
    public func clear() throws {
        for scale in 1...4 where scale == 1 || FileManager.default.fileExists(atPath: Self.path(cachePath, scale: scale)) {
            try cache(scale: scale).clear()
        }
    }

    private func load(_ request: TileRequest) async throws -> TileResult {
        let cache = try cache(scale: request.scale)
        let now = self.now()
        let copy = try cache.entry(request.tile, now: now).flatMap { entry in
            ImageFormat(sniffing: entry.bytes).map { (entry: entry, format: $0) }
        }
        if let copy, copy.entry.expiresAt > now {
            return .tile(TileData(bytes: copy.entry.bytes, format: copy.format, freshness: Freshness(expiresAt: copy.entry.expiresAt)))
        }
        let outcome: FetchOutcome
        do {
            outcome = try await upstream.fetch(request, etag: copy?.entry.etag, lastModified: copy?.entry.lastModified)
        } catch let error as RemoteTileError where error.isBadAnswer {
            // Garbage never replaces the good copy; the upstream is asked again once the
            // stale copy's short freshness ends.
            if policy.serveStale, let copy { return stale(copy.entry, copy.format, now: now) }
            throw error
        }
        switch outcome {
        case .tile(var data, let directives):
            if directives.noStore {
                try cache.remove(request.tile)  // the upstream says keep nothing: not even the older copy
            } else {
                let expiresAt = expiry(directives, now: now)
                try cache.store(request.tile, bytes: data.bytes, expiresAt: expiresAt,
                                etag: directives.etag, lastModified: directives.lastModified, now: now)
                data.freshness = Freshness(expiresAt: expiresAt, noCache: directives.noCache)
                try await enforceSize(cache)
            }
            return .tile(data)
        case .notModified(let directives):
            guard let copy else {
                // A 304 for a copy we do not have: ask again without validators.
                return try await upstream.tile(request)
            }
            let expiresAt = expiry(directives, now: now)
            if directives.noStore {
                try cache.remove(request.tile)
            } else {
                try cache.refresh(request.tile, expiresAt: expiresAt, now: now)
            }
            return .tile(TileData(bytes: copy.entry.bytes, format: copy.format,
                                  freshness: Freshness(expiresAt: expiresAt, noStore: directives.noStore, noCache: directives.noCache)))
        case .noTile:
            return .noTile
        case .unavailable(let retryAfter):
            if policy.serveStale, let copy { return stale(copy.entry, copy.format, now: now) }
            return .unavailable(retryAfter: retryAfter)
        }
    }

    /// The kept copy, past its freshness, reusable for `staleMaxAge` (so the caches above
    /// ask again soon, and the tile comes back fresh once the upstream recovers).
    private func stale(_ entry: TileCacheStore.Entry, _ format: ImageFormat, now: EpochSeconds) -> TileResult {
        .tile(TileData(bytes: entry.bytes, format: format, provenance: .stale,
                       freshness: Freshness(expiresAt: now.rounded(.down) + Self.wholeSeconds(policy.staleMaxAge.seconds))))
    }

    /// When (whole seconds) a tile fetched at `now` expires.
    private func expiry(_ directives: CacheDirectives, now: EpochSeconds) -> EpochSeconds {
        let start = now.rounded(.down)
        if directives.noCache { return start }
        let lifetime = directives.maxAgeSeconds ?? policy.defaultMaxAge.seconds
        return start + max(Self.wholeSeconds(policy.minimumMaxAge.seconds), Self.wholeSeconds(lifetime))
    }

    /// A duration as whole seconds in [0, `Freshness.longest`]; NaN is 0, so no setting or
    /// header makes an expiry that cannot be stored.
    private static func wholeSeconds(_ seconds: Double) -> Double {
        seconds.isNaN ? 0 : min(max(0, seconds), Freshness.longest).rounded(.down)
    }

    /// Every 200 stores, evicts least recently used tiles past the size cap.
    private func enforceSize(_ cache: TileCacheStore) async throws {
        guard let maxBytes = policy.maxBytes, await stores.increment() % 200 == 0 else { return }
        try cache.prune(maxBytes: maxBytes)
    }
}

actor StoreCounter {
    private var count = 0
    func increment() -> Int {
        count += 1
        return count
    }
}

