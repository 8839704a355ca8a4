import Foundation
import Canvas
import MapProjects
import SharedCache

/// The shared (Redis) tier between the memory cache and rendering, and the `Cache-Status`
/// header (RFC 9211) that says which tier answered.
extension TileServer {
    /// The tile's key in the shared cache, or nil when there is no shared cache.
    func sharedKey(_ key: TileKey) -> String? {
        guard options.sharedCache != nil, let definition = definitions[key.map] else { return nil }
        return TileCacheKey(map: key.map, definition: definition, layer: key.layer.isEmpty ? nil : key.layer, tile: key.tile,
                            scale: key.scale, format: key.format.fileExtension).description
    }

    /// A tile another server put in the shared cache, now kept in memory too. Empty bytes
    /// mean "no tile here".
    func remember(_ key: TileKey, sharedHit bytes: [UInt8]) -> CachedTile {
        var entry = bytes.isEmpty
            ? CachedTile(bytes: [], etag: "", format: nil, provenance: "none")
            : CachedTile(bytes: bytes, etag: EntityTag.of(bytes), format: key.format, provenance: "shared cache")
        entry.shared = .hit("tilekit-redis")
        cache.set(key, entry, cost: bytes.count + 128)
        return entry
    }

    /// Stores a rendered (or fetched) tile in the shared cache, for as long as the layer's
    /// max-age and the upstream's freshness allow, without making the client wait; returns
    /// the shared tier's `Cache-Status` entry.
    func share(_ entry: CachedTile, key: String, lookup: SharedCacheLookup, maxAgeSeconds maxAge: Int) -> CacheStatus.Entry {
        let ttl = entry.freshness.secondsLeft(now: Date().timeIntervalSince1970).map { min($0, maxAge) } ?? maxAge
        guard let sharedCache = options.sharedCache, entry.freshness.isReusable, ttl > 0, case .miss = lookup else {
            return lookup.cacheStatus()
        }
        let bytes = entry.bytes
        Task { await sharedCache.set(key: key, bytes: bytes, ttl: .seconds(ttl)) }
        return lookup.cacheStatus(stored: true)
    }

    /// A memory hit's `Cache-Status`, the same on every hit: made once, not on each request.
    static let memoryHitStatus = CacheStatus(lookupOrder: [.hit("tilekit-memory")]).headerValue

    /// `tilekit-memory; hit`, or the memory miss followed by what the shared cache said,
    /// nearest the origin first as RFC 9211 orders them.
    func cacheStatus(_ cached: CachedTile, fromMemory: Bool) -> String {
        if fromMemory { return Self.memoryHitStatus }
        guard let shared = cached.shared else { return cached.freshness.isReusable ? Self.memoryMissStatus.stored : Self.memoryMissStatus.notStored }
        let memory = CacheStatus.Entry.miss("tilekit-memory", stored: cached.freshness.isReusable)
        return CacheStatus(lookupOrder: [memory, shared]).headerValue
    }

    /// A memory miss's `Cache-Status` with no shared cache, made once (it was 0.9% of a
    /// server's CPU answering tiles from a file, made on each request).
    static let memoryMissStatus = (stored: CacheStatus(lookupOrder: [.miss("tilekit-memory", stored: true)]).headerValue,
                                   notStored: CacheStatus(lookupOrder: [.miss("tilekit-memory", stored: false)]).headerValue)

    /// `/ready`: 200 when the maps are open (they are, once the server exists) and the shared
    /// cache, if any, answers; 503 otherwise, so a load balancer sends traffic elsewhere.
    func readiness() async -> HTTPResponse {
        guard let sharedCache = options.sharedCache else { return .text(200, "ready: \(order.count) maps open") }
        if await sharedCache.ping() { return .text(200, "ready: \(order.count) maps open, shared cache answers") }
        return .text(503, "not ready: the shared cache does not answer (\(sharedCache.lastFailure ?? "no answer"))", headers: [("Retry-After", "1")])
    }
}

/// What defines a map's tiles, hashed: its settings and layers, and every file they read
/// (small files by content, large stores by size and time). Editing map.json or a data file
/// changes the hash, and with it every shared-cache key, so no server serves renders of the
/// old definition. Paths are taken relative to the map's folder, so servers that keep the
/// same project in different places share their renders.
enum MapDefinition {
    static let contentLimit: Int64 = 64 << 20

    static func hash(_ project: MapProject) -> String {
        let folder = project.folder.path
        var parts = [Array(String(describing: project).replacingOccurrences(of: folder, with: "$MAP").utf8)]
        var files = [String]()
        for layer in project.layers {
            switch layer.source {
            case .store(let path, _): files.append(path)
            case .features(let paths): files += paths
            case .remote, .generated: break
            }
        }
        if let game = project.game { files += [game.pois] + game.routes.values.sorted() }
        for file in files {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
            let isFile = (attributes?[.type] as? FileAttributeType) == .typeRegular
            if isFile, size <= contentLimit, let data = FileManager.default.contents(atPath: file) {
                parts.append(Array(data))
            } else {
                let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                parts.append(Array("\(file.replacingOccurrences(of: folder, with: "$MAP"))\t\(size)\t\(modified)".utf8))
            }
        }
        return TileCacheKey.definitionHash(parts)
    }
}
