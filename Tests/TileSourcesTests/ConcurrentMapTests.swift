import Synchronization
import Testing
import TileSources

/// `Array.concurrentMap(maxInFlight:)`: the bound, the order, and the first error.
@Suite struct ConcurrentMapTests {
    struct Failure: Error, Equatable { let item: Int }

    /// The first `limit` tasks wait for one another (so the bound is reached, not merely
    /// allowed), and every task counts what is running: a helper that started more than the
    /// bound would be seen above it.
    @Test(.timeLimit(.minutes(1)), arguments: [1, 3, 8])
    func neverRunsMoreThanTheBound(limit: Int) async throws {
        let state = Mutex((running: 0, most: 0, gateOpen: false))
        let results = try await Array(0..<40).concurrentMap(maxInFlight: limit) { item in
            state.withLock {
                $0.running += 1
                $0.most = max($0.most, $0.running)
                if $0.running == limit { $0.gateOpen = true }
            }
            while !state.withLock({ $0.gateOpen }) { await Task.yield() }
            for _ in 0..<(item % 5) { await Task.yield() }
            state.withLock { $0.running -= 1 }
            return item
        }
        #expect(results == Array(0..<40))
        #expect(state.withLock { $0.most } == limit)
    }

    /// Items that finish out of order (later ones sooner) still come back in order.
    @Test func keepsTheElementsOrder() async throws {
        let results = try await Array(0..<30).concurrentMap(maxInFlight: 4) { item in
            for _ in 0..<(30 - item) { await Task.yield() }
            return "tile \(item)"
        }
        #expect(results == (0..<30).map { "tile \($0)" })
    }

    /// Item 1 fails at once: item 0, still running, is cancelled, no later item starts, and
    /// the caller gets item 1's error.
    @Test(.timeLimit(.minutes(1))) func theFirstErrorCancelsTheRest() async throws {
        let state = Mutex((started: [Int](), cancelled: [Int]()))
        await #expect(throws: Failure(item: 1)) {
            _ = try await Array(0..<10).concurrentMap(maxInFlight: 2) { item in
                state.withLock { $0.started.append(item) }
                if item == 1 { throw Failure(item: 1) }
                do {
                    try await Task.sleep(for: .seconds(600))
                } catch {
                    state.withLock { $0.cancelled.append(item) }
                    throw error
                }
                return item
            }
        }
        #expect(state.withLock { $0.started.sorted() } == [0, 1])
        #expect(state.withLock { $0.cancelled } == [0])
    }

    /// `take` says stop at item 2's result: items 0-3 were in flight, finish uncancelled and
    /// are handed over; item 4 and later never start.
    @Test(.timeLimit(.minutes(1))) func takeStopsTheStartsAndTheRunningFinish() async throws {
        let state = Mutex((started: [Int](), cancelled: [Int](), stopped: false))
        var taken = [Int]()
        try await Array(0..<10).concurrentForEach(maxInFlight: 4, { item in
            state.withLock { $0.started.append(item) }
            // Item 2 finishes first; the others wait until `take` has said stop.
            if item != 2 { while !state.withLock({ $0.stopped }) { await Task.yield() } }
            if Task.isCancelled { state.withLock { $0.cancelled.append(item) } }
            return item
        }) { index, item in
            #expect(index == item)
            taken.append(item)
            if item == 2 { state.withLock { $0.stopped = true } }
            return item != 2
        }
        #expect(taken.first == 2 && taken.sorted() == [0, 1, 2, 3])
        #expect(state.withLock { $0.started.sorted() } == [0, 1, 2, 3])
        #expect(state.withLock { $0.cancelled } == [])
    }

    @Test func anEmptyArrayOrABoundBelowOne() async throws {
        #expect(try await [Int]().concurrentMap(maxInFlight: 4) { $0 } == [])
        #expect(try await [1, 2, 3].concurrentMap(maxInFlight: 0) { $0 * 2 } == [2, 4, 6])
    }
}
