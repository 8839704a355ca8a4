import Foundation
import Synchronization

/// Where static images are rendered: at most `capacity` at once, on threads of their own.
///
/// A static image can take seconds of cairo work. Rendered on the cooperative pool (one
/// thread per core), a few of them would stall every game stream and tile render; here they
/// run on their own threads under a budget, and a request beyond it is refused at once
/// (503 with Retry-After) instead of queueing until its client gives up.
final class RenderPool: TaskExecutor, Sendable {
    let capacity: Int
    private let running = Mutex(0)
    private let queue = DispatchQueue(label: "tilekit.static-renders", qos: .userInitiated, attributes: .concurrent)

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Runs `work` on the pool's threads if the budget allows; nil when it is spent.
    func run<T: Sendable>(_ work: @Sendable () async throws -> T) async rethrows -> T? {
        let admitted = running.withLock { count -> Bool in
            guard count < capacity else { return false }
            count += 1
            return true
        }
        guard admitted else { return nil }
        defer {
            running.withLock { $0 -= 1 }
            // A static image frees tens of megabytes at once; glibc keeps freed memory in its
            // arenas, so without a trim a long-running server's RSS stays at its high-water
            // mark after every burst of renders.
            ServerMemory.releaseFreedMemory()
        }
        return try await withTaskExecutorPreference(self) { try await work() }
    }

    var inUse: Int { running.withLock { $0 } }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
