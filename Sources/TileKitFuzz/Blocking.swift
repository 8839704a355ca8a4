import Foundation

/// Runs async work to completion from synchronous code. libFuzzer and the replay call the
/// targets on the main thread, which is not one of Swift's cooperative threads, so waiting
/// here cannot starve the work it waits for.
func waitFor<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let result = ResultBox<T>()
    Task.detached {
        result.value = await work()
        result.done.signal()
    }
    result.done.wait()
    // The semaphore orders the write before this read.
    return result.value!
}

/// Carries a result from a task to the thread waiting for it; `done` orders the one write
/// before the one read, which is what makes the unchecked Sendable safe.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
    let done = DispatchSemaphore(value: 0)
}
