import Synchronization

/// What the shared cache has done since it started, for `/metrics`. A snapshot: read it with
/// `RedisTileCache.counters`.
public struct RedisCacheCounters: Sendable, Equatable {
    /// `get` calls answered with bytes.
    public var hits: UInt64 = 0
    /// `get` calls Redis answered with "no such key".
    public var misses: UInt64 = 0
    /// `set` calls Redis stored.
    public var stores: UInt64 = 0
    /// `set` calls not stored for any reason (Redis down, full, slow, busy): never an error.
    public var droppedStores: UInt64 = 0
    /// Calls (get, set, ping) not sent because Redis was down and the reconnect interval had
    /// not passed: they cost no time.
    public var skipped: UInt64 = 0
    /// Failures by kind, including failed connection attempts.
    public var failures: [RedisFailure: UInt64] = [:]
    /// Connections opened to replace one that was lost or failed.
    public var reconnects: UInt64 = 0
    /// Whether Redis answered the last call or probe.
    public var isUp = false

    public init() {}

    public var timeouts: UInt64 { failures[.timeout, default: 0] }
    /// Every failure but timeouts.
    public var errors: UInt64 { failures.filter { $0.key != .timeout }.values.reduce(0, +) }

    /// The counters in Prometheus' text format, one metric family each, names prefixed with
    /// `tilekit_shared_cache_`.
    public var prometheusText: String {
        var out = ""
        func counter(_ name: String, _ help: String, _ value: UInt64) {
            out += "# HELP tilekit_shared_cache_\(name) \(help)\n# TYPE tilekit_shared_cache_\(name) counter\ntilekit_shared_cache_\(name) \(value)\n"
        }
        counter("hits_total", "Tiles found in the shared cache (Redis).", hits)
        counter("misses_total", "Tiles the shared cache did not have.", misses)
        counter("stores_total", "Tiles stored in the shared cache.", stores)
        counter("dropped_stores_total", "Tiles not stored in the shared cache because it was down, full, slow or busy.", droppedStores)
        counter("skipped_total", "Shared-cache calls not sent because Redis was down (waiting to reconnect).", skipped)
        counter("reconnects_total", "Connections to Redis opened to replace a lost one.", reconnects)
        out += "# HELP tilekit_shared_cache_errors_total Shared-cache failures by kind; none fails a request.\n"
        out += "# TYPE tilekit_shared_cache_errors_total counter\n"
        for kind in RedisFailure.allCases {
            out += "tilekit_shared_cache_errors_total{kind=\"\(kind.rawValue)\"} \(failures[kind, default: 0])\n"
        }
        out += "# HELP tilekit_shared_cache_up Whether Redis answered the last call or probe.\n# TYPE tilekit_shared_cache_up gauge\n"
        out += "tilekit_shared_cache_up \(isUp ? 1 : 0)\n"
        return out
    }
}

/// The live counters: one atomic each, so counting never takes a lock on the request path.
final class RedisCounterCells: Sendable {
    let hits = Atomic<UInt64>(0)
    let misses = Atomic<UInt64>(0)
    let stores = Atomic<UInt64>(0)
    let droppedStores = Atomic<UInt64>(0)
    let skipped = Atomic<UInt64>(0)
    let reconnects = Atomic<UInt64>(0)
    // One per RedisFailure case (Atomic cannot live in an array).
    private let timeouts = Atomic<UInt64>(0)
    private let connections = Atomic<UInt64>(0)
    private let full = Atomic<UInt64>(0)
    private let readOnly = Atomic<UInt64>(0)
    private let replies = Atomic<UInt64>(0)
    private let protocolErrors = Atomic<UInt64>(0)
    private let busy = Atomic<UInt64>(0)

    func count(_ failure: RedisFailure) {
        switch failure {
        case .timeout: timeouts.wrappingAdd(1, ordering: .relaxed)
        case .connection: connections.wrappingAdd(1, ordering: .relaxed)
        case .full: full.wrappingAdd(1, ordering: .relaxed)
        case .readOnly: readOnly.wrappingAdd(1, ordering: .relaxed)
        case .reply: replies.wrappingAdd(1, ordering: .relaxed)
        case .protocolError: protocolErrors.wrappingAdd(1, ordering: .relaxed)
        case .busy: busy.wrappingAdd(1, ordering: .relaxed)
        }
    }

    private func load(_ failure: RedisFailure) -> UInt64 {
        switch failure {
        case .timeout: timeouts.load(ordering: .relaxed)
        case .connection: connections.load(ordering: .relaxed)
        case .full: full.load(ordering: .relaxed)
        case .readOnly: readOnly.load(ordering: .relaxed)
        case .reply: replies.load(ordering: .relaxed)
        case .protocolError: protocolErrors.load(ordering: .relaxed)
        case .busy: busy.load(ordering: .relaxed)
        }
    }

    func snapshot(isUp: Bool) -> RedisCacheCounters {
        var counters = RedisCacheCounters()
        counters.hits = hits.load(ordering: .relaxed)
        counters.misses = misses.load(ordering: .relaxed)
        counters.stores = stores.load(ordering: .relaxed)
        counters.droppedStores = droppedStores.load(ordering: .relaxed)
        counters.skipped = skipped.load(ordering: .relaxed)
        counters.reconnects = reconnects.load(ordering: .relaxed)
        for kind in RedisFailure.allCases { counters.failures[kind] = load(kind) }
        counters.isUp = isUp
        return counters
    }
}
