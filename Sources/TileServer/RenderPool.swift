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
            _ = glibcMallocTrim(0)
        }
        return try await withTaskExecutorPreference(self) { try await work() }
    }

    var inUse: Int { running.withLock { $0 } }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// glibc's `malloc_trim` (malloc.h), which the Glibc module does not export.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32

/// glibc's `mallopt` (malloc.h), not exported by the Glibc module either.
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32

public enum ServerMemory {
    /// Every allocation of 1 MiB or more gets pages of its own from the kernel and gives
    /// them back when freed. glibc starts at 128 KiB but raises the threshold to the size
    /// of each mmapped block freed (up to 32 MiB), so after the first static image its
    /// canvases (16 MiB at 2048x2048) come from the heap, and a long-running server's RSS
    /// then keeps whatever the heap's fragments hold. A fixed threshold stops that.
    /// Process-wide: `tilekit serve` calls it once at start.
    public static func returnLargeBuffersToTheSystem() {
        let M_MMAP_THRESHOLD: Int32 = -3  // malloc.h
        _ = glibcMallopt(M_MMAP_THRESHOLD, 1 << 20)
    }
}
