import Foundation

/// Threads for jobs that block (a socket exchange), kept a while after their job so the
/// next one does not start a thread of its own: starting one (clone, its stack's first
/// pages, Foundation's signal mask and name) cost about as much system time as the tile
/// exchange it ran, nine of them a snapshot.
///
/// A job never waits for another: it runs on an idle thread if one waits, else on a new
/// one. A thread idle for `idleLifetime` ends, and at most `maxIdle` wait at once, so a
/// burst of exchanges leaves nothing behind for long.
final class BlockingThreads: @unchecked Sendable {
    private let condition = NSCondition()
    /// Jobs handed to waiting threads and not yet taken; guarded by `condition`.
    private var handedOver: [@Sendable () -> Void] = []
    /// Threads waiting for a job and not yet promised one; guarded by `condition`.
    private var waiting = 0
    let maxIdle: Int
    let idleLifetime: TimeInterval
    private let name: String

    init(name: String, maxIdle: Int = 16, idleLifetime: TimeInterval = 10) {
        self.name = name
        self.maxIdle = maxIdle
        self.idleLifetime = idleLifetime
    }

    /// Runs `job` on a waiting thread, or on a new one.
    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        if waiting > 0 {
            waiting -= 1
            handedOver.append(job)
            condition.signal()
            condition.unlock()
            return
        }
        condition.unlock()
        let thread = Thread { [self] in loop(first: job) }
        thread.name = name
        thread.stackSize = 512 << 10
        thread.start()
    }

    /// Threads waiting for a job now (for tests).
    var idleThreads: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }

    private func loop(first: @escaping @Sendable () -> Void) {
        var job: (@Sendable () -> Void)? = first
        while let current = job {
            current()
            job = next()
        }
    }

    /// The next job handed to this thread, or nil when it should end.
    private func next() -> (@Sendable () -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        guard waiting < maxIdle else { return nil }
        waiting += 1
        let until = Date(timeIntervalSinceNow: idleLifetime)
        while handedOver.isEmpty {
            if !condition.wait(until: until), handedOver.isEmpty {
                waiting -= 1  // not promised a job: a submitter would have taken it off `waiting`
                return nil
            }
        }
        return handedOver.removeFirst()
    }
}
