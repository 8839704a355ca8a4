import Foundation

/// Politeness towards one host: at most `limit` requests in flight, and requests started
/// no closer together than `1 / requestsPerSecond`. Waiters are served in arrival order,
/// and wait for a slot at most `patience`: behind a stalled upstream the queue would
/// otherwise grow without end, and every request in it would hang with it.
actor HostGate {
    let limit: Int
    let interval: Duration?
    /// The longest wait for a free slot; nil waits as long as it takes.
    let patience: Duration?
    private var inFlight = 0
    private var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    private var nextWaiter = 0
    private var nextStart = ContinuousClock.now

    init(limit: Int, requestsPerSecond: Double?, patience: Duration? = nil) {
        self.limit = max(1, limit)
        interval = requestsPerSecond.map { .seconds(1 / max($0, 0.001)) }
        self.patience = patience
    }

    /// Waits for a free slot (at most `patience`) and the rate limit, then takes the slot.
    /// False when no slot came free in time or the task was cancelled: nothing was taken.
    /// The rate limit's wait is bounded by itself: only the `limit` slot holders reserve
    /// start times, so it is at most `limit` intervals.
    func acquire() async -> Bool {
        if inFlight >= limit {
            let id = nextWaiter
            nextWaiter += 1
            let timer = patience.map { patience in
                Task { [weak self] in
                    try? await Task.sleep(for: patience)
                    await self?.giveUp(id)
                }
            }
            // release() hands its slot over with true; giveUp answers false.
            let granted = await withTaskCancellationHandler {
                await withCheckedContinuation { waiters.append((id, $0)) }
            } onCancel: {
                Task { await self.giveUp(id) }
            }
            timer?.cancel()
            guard granted else { return false }
        } else {
            inFlight += 1
        }
        if let interval {
            let now = ContinuousClock.now
            let start = max(now, nextStart)
            nextStart = start + interval
            if start > now { try? await Task.sleep(until: start, clock: .continuous) }
        }
        return true
    }

    func release() {
        if waiters.isEmpty {
            inFlight -= 1
        } else {
            waiters.removeFirst().continuation.resume(returning: true)
        }
    }

    /// Ends a wait that took too long (or was cancelled), if it is still waiting.
    private func giveUp(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: false)
    }
}

/// The gates of every host a source talks to.
actor HostGates {
    let limit: Int
    let requestsPerSecond: Double?
    let patience: Duration?
    private var gates: [String: HostGate] = [:]

    init(limit: Int, requestsPerSecond: Double?, patience: Duration? = nil) {
        self.limit = limit
        self.requestsPerSecond = requestsPerSecond
        self.patience = patience
    }

    func gate(for host: String) -> HostGate {
        if let gate = gates[host] { return gate }
        let gate = HostGate(limit: limit, requestsPerSecond: requestsPerSecond, patience: patience)
        gates[host] = gate
        return gate
    }
}
