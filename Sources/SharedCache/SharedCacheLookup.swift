/// What the shared cache said about one key.
public enum SharedCacheLookup: Sendable, Equatable {
    /// Redis had the bytes.
    case hit([UInt8])
    /// Redis answered: no such key (never stored, expired or evicted).
    case miss
    /// Redis was not asked or did not answer: down (nil: skipped until the reconnect interval
    /// passes) or failed this call (timeout, connection, busy, ...).
    case unavailable(RedisFailure?)

    /// This lookup as the shared cache's `Cache-Status` entry; `stored` when the tile that
    /// was rendered instead is being stored in Redis.
    public func cacheStatus(cache name: String = "tilekit-redis", stored: Bool = false) -> CacheStatus.Entry {
        switch self {
        case .hit: return .hit(name)
        case .miss: return .miss(name, stored: stored)
        case .unavailable(let failure): return .bypass(name, detail: failure.map { "unavailable-\($0.rawValue)" } ?? "unavailable")
        }
    }
}
