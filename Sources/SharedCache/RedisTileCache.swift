/// A tile cache shared by every TileKit process that points at one Redis server: what one
/// instance renders, the others read (MapProxy's Redis cache, for TileKit).
///
/// Redis is a cache, never a dependency. Nothing here throws once the cache exists: a `get`
/// that cannot be answered in time is a miss, a `set` that cannot be stored is dropped, and
/// each failure is counted by kind in `counters` (for `/metrics`).
///
/// - Every call waits at most `Options.timeout` (default 50 ms) for a connection to free up,
///   then at most that long for a connect (rare: only when a worker lost its connection) and
///   for each socket read or write: a stuck Redis costs one call about the timeout (56 ms
///   measured with 50 ms), then nothing (below).
/// - After a timeout or a failed connection Redis counts as down: calls return at once
///   without touching the network until `Options.reconnectInterval` (default 1 s) has
///   passed, when one worker probes it again in the background. A dead Redis therefore costs
///   a request nothing but an atomic load.
/// - A full Redis (`maxmemory` with `noeviction`: `-OOM command not allowed`) and a replica
///   (`-READONLY`) answer quickly with an error: the store is dropped and counted; reads go on.
/// - Values are binary-safe (PNG bytes with NULs); keys come from `TileCacheKey`.
///
/// The blocking hiredis calls run on `Options.connections` threads of their own, each with
/// one connection (see `RedisWorkers` for why and what it costs). Callers suspend.
///
/// In a tile server it sits between the memory cache and rendering, inside the one fetch
/// that concurrent requests for a tile share:
///
/// ```swift
/// let key = TileCacheKey(map: name, definition: definitionHash, layer: layerID, tile: tile,
///                        scale: scale, format: format.fileExtension).description
/// switch await shared.lookup(key: key) {
/// case .hit(let bytes): ...                        // keep in memory, answer
/// case .miss, .unavailable: ...                    // render, keep in memory, then:
///     Task { await shared.set(key: key, bytes: bytes, ttl: .seconds(maxAge)) }
/// }
/// ```
public final class RedisTileCache: Sendable {
    /// How long to wait and how many connections to keep. Values out of range are clamped
    /// (documented per field) rather than refused: a cache setting never stops a server.
    public struct Options: Sendable, Equatable {
        /// The longest a call waits in the queue for a connection, and the longest each read
        /// or write on the socket may take. 1 ms...10 s; default 50 ms.
        public var timeout: Duration = .milliseconds(50)
        /// The longest a TCP connect may take when no call waits for it: the first connection
        /// and probes after a failure, both made by a worker between calls. A worker that must
        /// connect while a call waits holds that connect to `timeout`. Resolving a host name
        /// is not bounded. 1 ms...10 s; default 250 ms.
        public var connectTimeout: Duration = .milliseconds(250)
        /// How long Redis is left alone after a failure before one probe. 10 ms...5 min; default 1 s.
        public var reconnectInterval: Duration = .seconds(1)
        /// Connections, each with its own thread. 1...64; default 4.
        public var connections: Int = 4
        /// Calls that may wait for a connection; beyond it a call fails at once as `busy`.
        /// 1...100,000; default 1,024.
        public var maxWaitingCalls: Int = 1_024
        /// Values larger than this are not sent (they count as dropped stores): writing them
        /// would not fit in the timeout. 1 byte...512 MiB; default 8 MiB.
        public var maxValueBytes: Int = 8 << 20

        public init() {}

        /// The same options with every value moved into its documented range.
        var clamped: Options {
            var o = self
            o.timeout = Self.clamp(timeout, .milliseconds(1), .seconds(10))
            o.connectTimeout = Self.clamp(connectTimeout, .milliseconds(1), .seconds(10))
            o.reconnectInterval = Self.clamp(reconnectInterval, .milliseconds(10), .seconds(300))
            o.connections = min(max(connections, 1), 64)
            o.maxWaitingCalls = min(max(maxWaitingCalls, 1), 100_000)
            o.maxValueBytes = min(max(maxValueBytes, 1), 512 << 20)
            return o
        }

        private static func clamp(_ value: Duration, _ low: Duration, _ high: Duration) -> Duration {
            min(max(value, low), high)
        }
    }

    public let url: RedisURL
    public let options: Options
    private let workers: RedisWorkers
    private let cells = RedisCounterCells()

    /// Starts the worker threads, which connect in the background: until the first
    /// connection is made (see `waitUntilAvailable`) calls are skipped like calls to a Redis
    /// that is down.
    public init(url: RedisURL, options: Options = Options()) {
        self.url = url
        self.options = options.clamped
        workers = RedisWorkers(url: url, options: self.options, counters: cells)
        workers.start()
    }

    /// Parses `text` (`redis://HOST:PORT[/DB]`) and starts; throws only for a bad URL.
    public convenience init(_ text: String, options: Options = Options()) throws(SharedCacheError) {
        self.init(url: try RedisURL(parsing: text), options: options)
    }

    deinit { workers.stop() }

    // MARK: - The cache

    /// The bytes stored under `key`, or nil: not there, expired, or Redis down, slow or
    /// failing (each counted). `lookup` tells those apart.
    public func get(key: String) async -> [UInt8]? {
        if case .hit(let bytes) = await lookup(key: key) { return bytes }
        return nil
    }

    /// What Redis has under `key`: the bytes, a miss, or nothing known because Redis is down,
    /// slow or failing (counted). The difference matters for `Cache-Status`.
    public func lookup(key: String) async -> SharedCacheLookup {
        switch await perform(.get(key: Array(key.utf8))) {
        case .value(let bytes):
            cells.hits.wrappingAdd(1, ordering: .relaxed)
            return .hit(bytes)
        case .absent:
            cells.misses.wrappingAdd(1, ordering: .relaxed)
            return .miss
        case .failed(let failure):
            return .unavailable(failure)
        case .skipped, .stored, .pong:
            return .unavailable(nil)
        }
    }

    /// Stores `bytes` under `key` for `ttl` (`SET key value PX ms`), or drops it (counted)
    /// when Redis is down, slow, full or read-only. A `ttl` under 1 ms stores nothing (the
    /// layer's max-age is 0: not cacheable); a `ttl` above 1 year is cut to 1 year.
    public func set(key: String, bytes: [UInt8], ttl: Duration) async {
        guard let milliseconds = Self.milliseconds(ttl) else { return }
        guard bytes.count <= options.maxValueBytes else {
            cells.droppedStores.wrappingAdd(1, ordering: .relaxed)
            return
        }
        if await perform(.set(key: Array(key.utf8), value: bytes, milliseconds: milliseconds)) == .stored {
            cells.stores.wrappingAdd(1, ordering: .relaxed)
        } else {
            cells.droppedStores.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Whether Redis answers a PING now, for readiness probes (`/ready`). While Redis is down
    /// (between probes) this is false at once, without a network round trip.
    public func ping() async -> Bool {
        await perform(.ping) == .pong
    }

    /// Whether the last call or probe reached Redis; free to read (no network).
    public var isAvailable: Bool { workers.health.isUp }

    /// Waits until the first connection attempt has finished, or `timeout`; returns
    /// `isAvailable`. For startup, so the server can log "connected" or why not.
    public func waitUntilAvailable(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !workers.health.isUp, !workers.health.hasProbed, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
        return workers.health.isUp
    }

    /// What hiredis or Redis said about the most recent failure (no password in it), for logs.
    public var lastFailure: String? { workers.health.lastFailure }

    /// A snapshot of the counters.
    public var counters: RedisCacheCounters { cells.snapshot(isUp: workers.health.isUp) }

    // MARK: - Calls

    /// Hands `command` to a worker and suspends until it is answered; returns `.skipped` at
    /// once while Redis is down.
    private func perform(_ command: RedisJob.Command) async -> RedisJob.Outcome {
        guard workers.health.isUp else {
            cells.skipped.wrappingAdd(1, ordering: .relaxed)
            return .skipped
        }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<RedisJob.Outcome, Never>) in
            let job = RedisJob(command: command, enqueued: .now, finish: { continuation.resume(returning: $0) })
            if !workers.queue.submit(job) { job.finish(.failed(.busy)) }
        }
        switch outcome {
        case .failed(let kind): cells.count(kind)
        case .skipped: cells.skipped.wrappingAdd(1, ordering: .relaxed)
        default: break
        }
        return outcome
    }

    /// `ttl` in whole milliseconds for `PX`: nil under 1 ms, at most one year.
    static func milliseconds(_ ttl: Duration) -> Int64? {
        let (seconds, attoseconds) = ttl.components
        guard seconds >= 0 else { return nil }
        let year: Int64 = 365 * 24 * 3600 * 1000
        guard seconds < year / 1000 else { return year }
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds >= 1 ? milliseconds : nil
    }
}
