import Foundation

/// Politeness towards one host: at most `limit` requests in flight, and requests started
/// no closer together than `1 / requestsPerSecond`. Waiters are served in arrival order.
actor HostGate {
    let limit: Int
    let interval: Duration?
    private var inFlight = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var nextStart = ContinuousClock.now

    init(limit: Int, requestsPerSecond: Double?) {
        self.limit = max(1, limit)
        interval = requestsPerSecond.map { .seconds(1 / max($0, 0.001)) }
    }

    /// Waits for a free slot and the rate limit, then takes the slot.
    func acquire() async {
        if inFlight >= limit {
            await withCheckedContinuation { waiters.append($0) }  // release() hands its slot over
        } else {
            inFlight += 1
        }
        if let interval {
            let now = ContinuousClock.now
            let start = max(now, nextStart)
            nextStart = start + interval
            if start > now { try? await Task.sleep(until: start, clock: .continuous) }
        }
    }

    func release() {
        if waiters.isEmpty {
            inFlight -= 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}

/// The gates of every host a source talks to.
actor HostGates {
    let limit: Int
    let requestsPerSecond: Double?
    private var gates: [String: HostGate] = [:]

    init(limit: Int, requestsPerSecond: Double?) {
        self.limit = limit
        self.requestsPerSecond = requestsPerSecond
    }

    func gate(for host: String) -> HostGate {
        if let gate = gates[host] { return gate }
        let gate = HostGate(limit: limit, requestsPerSecond: requestsPerSecond)
        gates[host] = gate
        return gate
    }
}
