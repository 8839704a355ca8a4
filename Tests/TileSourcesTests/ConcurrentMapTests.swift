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

    @Test func anEmptyArrayOrABoundBelowOne() async throws {
        #expect(try await [Int]().concurrentMap(maxInFlight: 4) { $0 } == [])
        #expect(try await [1, 2, 3].concurrentMap(maxInFlight: 0) { $0 * 2 } == [2, 4, 6])
    }
}
