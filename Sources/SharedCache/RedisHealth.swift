import Synchronization

/// Whether Redis is worth asking, shared by the callers and the worker threads.
///
/// Up: calls are queued for the workers. Down (after a timeout, or when a connection attempt
/// failed): calls return at once, costing one atomic load, and no worker talks to Redis until
/// `reconnectInterval` has passed; then exactly one worker probes (PING on its connection or a
/// new connection). Success brings everything back up; failure waits another interval. So a
/// dead Redis costs one connection attempt per interval, on a worker thread, not on a request.
final class RedisHealth: Sendable {
    private struct State {
        var nextProbe: ContinuousClock.Instant
        var probing = false
        var probed = false
        var lastFailure: String?
    }

    private let up = Atomic<Bool>(false)
    private let outages = Atomic<UInt64>(0)
    private let state: Mutex<State>
    let reconnectInterval: Duration

    /// Starts down, with the first probe due at once.
    init(reconnectInterval: Duration) {
        self.reconnectInterval = reconnectInterval
        state = Mutex(State(nextProbe: .now))
    }

    var isUp: Bool { up.load(ordering: .acquiring) }

    /// How many times Redis has been marked down. A connection opened before the latest
    /// outage may be to a Redis that has since died or restarted: workers replace it.
    var outageCount: UInt64 { outages.load(ordering: .acquiring) }

    /// Whether a first probe has finished (either way).
    var hasProbed: Bool { state.withLock { $0.probed } }

    var lastFailure: String? { state.withLock { $0.lastFailure } }

    func markUp() {
        state.withLock { s in
            s.probing = false
            s.probed = true
        }
        up.store(true, ordering: .releasing)
    }

    /// Redis failed: leave it alone for a reconnect interval from now.
    func markDown(_ fault: RedisFault) {
        outages.wrappingAdd(1, ordering: .acquiringAndReleasing)
        up.store(false, ordering: .releasing)
        state.withLock { s in
            s.nextProbe = .now + reconnectInterval
            s.probing = false
            s.probed = true
            s.lastFailure = fault.message
        }
    }

    /// Records a failure that does not take Redis down (a full Redis, one lost connection).
    func note(_ fault: RedisFault) {
        state.withLock { $0.lastFailure = fault.message }
    }

    /// True for the one caller that should probe now: Redis is down, the interval has passed
    /// and no other worker is probing. The caller must then call `markUp` or `markDown`.
    func claimProbe() -> Bool {
        guard !isUp else { return false }
        return state.withLock { s in
            guard !s.probing, ContinuousClock.now >= s.nextProbe else { return false }
            s.probing = true
            return true
        }
    }
}
