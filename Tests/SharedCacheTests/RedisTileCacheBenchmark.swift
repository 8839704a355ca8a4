import Foundation
import Testing
import TestSupport
@testable import SharedCache

/// Latency of the shared cache on loopback: 10,000 sets then 10,000 gets of a 20 KB tile,
/// one at a time, with p50 and p99. Run with `TILEKIT_REDIS_BENCH=1 swift test --filter
/// RedisTileCacheBenchmark`; compare with `redis-benchmark -d 20000 -n 10000 -c 1 -t set,get`
/// (a C client without the thread hop).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["TILEKIT_REDIS_BENCH"] == "1" && RedisServerProcess.isInstalled,
                "set TILEKIT_REDIS_BENCH=1 to measure (needs redis-server)"))
struct RedisTileCacheBenchmark {
    static func percentiles(_ samples: [Duration]) -> String {
        let sorted = samples.sorted()
        func at(_ p: Double) -> String {
            let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
            return String(format: "%.1f µs", Double(sorted[index].components.attoseconds) / 1e12 + Double(sorted[index].components.seconds) * 1e6)
        }
        return "p50 \(at(0.5)), p90 \(at(0.9)), p99 \(at(0.99)), max \(at(1))"
    }

    @Test func loopbackLatencyOfA20KBTile() async throws {
        let server = try RedisServerProcess()
        var options = RedisTileCache.Options()
        options.timeout = .milliseconds(500)  // measure, do not drop
        let environment = ProcessInfo.processInfo.environment
        if let text = environment["TILEKIT_REDIS_BENCH_CONNECTIONS"], let connections = Int(text) { options.connections = connections }
        let tasks = environment["TILEKIT_REDIS_BENCH_TASKS"].flatMap { Int($0) } ?? 16
        let cache = try RedisTileCache(server.url, options: options)
        #expect(await cache.waitUntilAvailable(timeout: .seconds(5)))
        let tile = RedisTileCacheTests.tileBytes(20_000)
        let operations = 10_000
        var sets = [Duration]()
        var gets = [Duration]()
        sets.reserveCapacity(operations)
        gets.reserveCapacity(operations)
        let clock = ContinuousClock()
        for i in 0..<operations {
            let start = clock.now
            await cache.set(key: "bench:\(i)", bytes: tile, ttl: .seconds(300))
            sets.append(clock.now - start)
        }
        for i in 0..<operations {
            let start = clock.now
            let value = await cache.get(key: "bench:\(i)")
            gets.append(clock.now - start)
            if value?.count != tile.count { Issue.record("bench:\(i) came back with \(value?.count ?? -1) bytes") }
        }
        print("SET 20 KB x \(operations): \(Self.percentiles(sets))")
        print("GET 20 KB x \(operations): \(Self.percentiles(gets))")
        // The same from concurrent tasks, as a busy server would call it.
        let started = clock.now
        let concurrent = await withTaskGroup(of: [Duration].self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var samples = [Duration]()
                    for i in stride(from: t, to: operations, by: tasks) {
                        let start = clock.now
                        _ = await cache.get(key: "bench:\(i)")
                        samples.append(clock.now - start)
                    }
                    return samples
                }
            }
            var all = [Duration]()
            for await samples in group { all += samples }
            return all
        }
        let seconds = Double((clock.now - started).components.attoseconds) / 1e18 + Double((clock.now - started).components.seconds)
        print("GET 20 KB x \(operations), \(tasks) tasks, \(options.connections) connections: \(Self.percentiles(concurrent)), \(Int(Double(operations) / seconds)) gets/s")
        let counters = cache.counters
        print("counters: hits \(counters.hits), stores \(counters.stores), errors \(counters.errors), timeouts \(counters.timeouts), busy \(counters.failures[.busy] ?? 0)")
    }
}
