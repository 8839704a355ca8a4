import Foundation
import Synchronization
import Testing
import TestSupport
@testable import TileSources

/// The threads upstream exchanges run on: kept between jobs, never making a job wait for
/// another, and ended when idle.
@Suite struct BlockingThreadsTests {
    @Test func aThreadIsKeptForTheNextJob() async throws {
        let threads = BlockingThreads(name: "test", idleLifetime: 60)
        let ran = Mutex<[String]>([])
        threads.run { ran.withLock { $0.append("first") } }
        #expect(try await eventually { threads.idleThreads == 1 })
        // The next job goes to the waiting thread: none waits while it runs.
        let release = DispatchSemaphore(value: 0)
        threads.run { release.wait(); ran.withLock { $0.append("second") } }
        #expect(threads.idleThreads == 0)
        release.signal()
        #expect(try await eventually { threads.idleThreads == 1 })
        #expect(ran.withLock { $0 } == ["first", "second"])
    }

    @Test func anIdleThreadEnds() async throws {
        let threads = BlockingThreads(name: "test", idleLifetime: 0.2)
        let done = Mutex(false)
        threads.run { done.withLock { $0 = true } }
        #expect(try await eventually { done.withLock { $0 } })
        #expect(try await eventually { threads.idleThreads == 0 })
        // And the next job starts a thread of its own.
        let again = Mutex(false)
        threads.run { again.withLock { $0 = true } }
        #expect(try await eventually { again.withLock { $0 } })
    }

    /// Jobs that block do not queue behind each other: each gets a thread.
    @Test func blockedJobsNeverWaitForEachOther() async throws {
        let threads = BlockingThreads(name: "test", maxIdle: 3, idleLifetime: 10)
        let release = DispatchSemaphore(value: 0)
        let started = Mutex(0)
        for _ in 0..<8 { threads.run { started.withLock { $0 += 1 }; release.wait() } }
        #expect(try await eventually { started.withLock { $0 } == 8 })
        for _ in 0..<8 { release.signal() }
        // At most `maxIdle` of the eight stay.
        #expect(try await eventually { threads.idleThreads == 3 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(threads.idleThreads == 3)
    }
}
