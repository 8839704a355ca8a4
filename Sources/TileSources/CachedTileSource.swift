import Foundation
import Synchronization
public import Canvas
public import TileMath
public import MBTiles

/// How long cached tiles live and how much room they take.
public struct CachePolicy: Hashable, Sendable {
    /// Freshness when the server gives none (no Cache-Control or Expires), seconds.
    public var defaultMaxAge: Double = 7 * 24 * 3600
    /// Freshness is never shorter than this, seconds: some servers send max-age=0 for
    /// tiles that change yearly, and a tile server must not refetch every request.
    public var minimumMaxAge: Double = 60
    /// Tiles are evicted, least recently used first, when the cache grows past this.
    public var maxBytes: Int? = 512 << 20
    /// Serve an expired copy when the upstream is unavailable (MapProxy's behaviour).
    public var serveStale = true

    public init() {}
}

/// A remote source with a disk cache in front (one MBTiles file per pixel density:
/// `cache.mbtiles`, `cache@2x.mbtiles`), MapProxy-style:
/// a fresh copy is served without asking; an expired one is revalidated with
/// If-None-Match / If-Modified-Since; when the upstream is down the expired copy is served
/// (`provenance: .stale`); and concurrent requests for one tile share one fetch.
public final class CachedTileSource: TileSource {
    public let upstream: RemoteTileSource
    public let policy: CachePolicy
    public let cachePath: String
    /// One cache file per pixel density, opened on first use.
    private let caches: Mutex<[Int: TileCacheStore]>
    private let inFlight = InFlight<TileRequest, TileResult>()
    private let stores = StoreCounter()

    public var metadata: TileSetMetadata { upstream.metadata }

    /// Opens (or creates) the cache files beside `cachePath`.
    public init(upstream: RemoteTileSource, cachePath: String, policy: CachePolicy = CachePolicy()) throws(TileSourceError) {
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
        let now = Date().timeIntervalSince1970
        let cached = try cache.entry(request.tile, now: now)
        if let cached, cached.expiresAt > now, let format = ImageFormat(sniffing: cached.bytes) {
            return .tile(TileData(bytes: cached.bytes, format: format))
        }
        let outcome = try await upstream.fetch(request, etag: cached?.etag, lastModified: cached?.lastModified)
        switch outcome {
        case .tile(let data, let directives):
            if !directives.noStore {
                try cache.store(request.tile, bytes: data.bytes, expiresAt: expiry(directives, now: now),
                                etag: directives.etag, lastModified: directives.lastModified, now: now)
                try await enforceSize(cache)
            }
            return .tile(data)
        case .notModified(let directives):
            guard let cached, let format = ImageFormat(sniffing: cached.bytes) else {
                // A 304 for a copy we do not have: ask again without validators.
                return try await upstream.tile(request)
            }
            try cache.refresh(request.tile, expiresAt: expiry(directives, now: now), now: now)
            return .tile(TileData(bytes: cached.bytes, format: format))
        case .noTile:
            return .noTile
        case .unavailable(let retryAfter):
            if policy.serveStale, let cached, let format = ImageFormat(sniffing: cached.bytes) {
                return .tile(TileData(bytes: cached.bytes, format: format, provenance: .stale))
            }
            return .unavailable(retryAfter: retryAfter)
        }
    }

    private func expiry(_ directives: CacheDirectives, now: Double) -> Double {
        if directives.noCache { return now }
        return now + max(policy.minimumMaxAge, directives.maxAge ?? policy.defaultMaxAge)
    }

    /// Every 200 stores, evicts least recently used tiles past the size cap.
    private func enforceSize(_ cache: TileCacheStore) async throws {
        guard let maxBytes = policy.maxBytes, await stores.increment() % 200 == 0 else { return }
        try cache.prune(maxBytes: maxBytes)
    }
}

/// Concurrent requests for the same tile share one load.
/// One load for many concurrent askers of the same key: the first starts it, the others
/// wait for its result.
public actor InFlight<Key: Hashable & Sendable, Value: Sendable> {
    private var tasks: [Key: Task<Value, Error>] = [:]

    public init() {}

    public func run(_ key: Key, _ load: @escaping @Sendable () async throws -> Value) async throws -> Value {
        if let task = tasks[key] { return try await task.value }
        let task = Task { try await load() }
        tasks[key] = task
        defer { tasks[key] = nil }
        return try await task.value
    }
}

actor StoreCounter {
    private var count = 0
    func increment() -> Int {
        count += 1
        return count
    }
}

