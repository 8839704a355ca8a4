import Foundation

/// Runs async work to completion from synchronous code, on the calling thread.
///
/// libFuzzer and the replay call the targets on the main thread, which is not one of
/// Swift's cooperative threads. The work runs as a task that prefers `CallerThreadExecutor`:
/// its jobs (and those of the default actors it calls, and of its child tasks) are queued
/// to this thread, which runs them until the task is done. Before, every input hopped to
/// the cooperative pool and back, and every `await` could hop again; on a busy machine each
/// hop waits for a core, and a store target spent most of its time waiting. Work that
/// chooses its own threads (the static images' `RenderPool`, the pyramid's row prefetcher)
/// still does; its continuations come back here.
func waitFor<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let executor = CallerThreadExecutor()
    let result = ResultBox<T>()
    Task(executorPreference: executor) {
        result.value = await work()
        executor.finish()
    }
    executor.runJobs()
    // `finish` (under the executor's lock) orders the one write before this read.
    return result.value!
}

/// A task executor whose jobs run on the thread that calls `runJobs`, until `finish`.
private final class CallerThreadExecutor: TaskExecutor, @unchecked Sendable {  // state behind `condition`
    private let condition = NSCondition()
    private var jobs = [UnownedJob]()
    private var finished = false

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Runs queued jobs in order, waiting for more (from other threads) until `finish`.
    func runJobs() {
        var next = 0
        while true {
            condition.lock()
            while next == jobs.count && !finished { condition.wait() }
            guard next < jobs.count else {
                condition.unlock()
                return
            }
            let job = jobs[next]
            next += 1
            if next == jobs.count {  // keep the queue from growing over a long run
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Carries a result from a task to the thread waiting for it; the executor's lock orders
/// the one write before the one read, which is what makes the unchecked Sendable safe.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
