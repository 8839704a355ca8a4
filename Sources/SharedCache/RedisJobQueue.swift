import Dispatch
import Synchronization

/// One call waiting for a worker: the command, when it was asked, and how to answer.
struct RedisJob: Sendable {
    enum Command: Sendable {
        case get(key: [UInt8])
        case set(key: [UInt8], value: [UInt8], milliseconds: Int64)
        case ping

        var arguments: [[UInt8]] {
            switch self {
            case .get(let key): return [Array("GET".utf8), key]
            case .set(let key, let value, let milliseconds): return [Array("SET".utf8), key, value, Array("PX".utf8), Array(String(milliseconds).utf8)]
            case .ping: return [Array("PING".utf8)]
            }
        }
    }

    enum Outcome: Sendable, Equatable {
        case value([UInt8])
        case absent
        case stored
        case pong
        case failed(RedisFailure)
        /// Not sent: Redis is down, or the cache is closing.
        case skipped
    }

    let command: Command
    let enqueued: ContinuousClock.Instant
    /// Called exactly once, on a worker thread (or on the caller's, when the job is refused).
    let finish: @Sendable (Outcome) -> Void
}

/// A bounded first-in first-out queue of jobs with a counting semaphore the workers sleep
/// on: one signal per job, plus one per worker when the queue closes.
final class RedisJobQueue: Sendable {
    private struct State {
        var jobs = [RedisJob]()
        var head = 0
        var closed = false
        var count: Int { jobs.count - head }
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Adds `job`; false when the queue is full or closed (the caller then answers it).
    func submit(_ job: RedisJob) -> Bool {
        let accepted = state.withLock { s in
            guard !s.closed, s.count < limit else { return false }
            s.jobs.append(job)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// The oldest job, waiting up to `wait` for one; nil on timeout or once closed.
    func next(waitingAtMost wait: Duration) -> RedisJob? {
        let nanoseconds = Int(clamping: wait.components.seconds &* 1_000_000_000 &+ wait.components.attoseconds / 1_000_000_000)
        guard available.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else { return nil }
        return state.withLock { s in
            guard s.count > 0 else { return nil }
            let job = s.jobs[s.head]
            s.head += 1
            if s.head == s.jobs.count {
                s.jobs.removeAll(keepingCapacity: true)
                s.head = 0
            } else if s.head >= 64, s.head * 2 >= s.jobs.count {
                s.jobs.removeFirst(s.head)
                s.head = 0
            }
            return job
        }
    }

    /// Refuses new jobs, wakes `workers` sleeping workers and returns the jobs still queued.
    func close(waking workers: Int) -> [RedisJob] {
        let left = state.withLock { s in
            s.closed = true
            let left = Array(s.jobs[s.head...])
            s.jobs = []
            s.head = 0
            return left
        }
        for _ in 0..<workers { available.signal() }
        return left
    }
}
