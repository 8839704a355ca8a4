import Foundation
import Glibc
import Testing
import TestSupport
@testable import SharedCache

/// The shared cache against a real redis-server on 127.0.0.1, including the ways Redis goes
/// wrong in production: down, back, full, read-only, slow. Serialized: the timing checks
/// should not compete with each other for the two cores.
@Suite(.serialized, .enabled(if: RedisServerProcess.isInstalled, Comment(rawValue: RedisServerProcess.missingMessage)))
struct RedisTileCacheTests {
    /// A cache on `server`, connected before the test goes on. Its timeout is a generous 1 s
    /// unless `configure` says otherwise: on two cores shared with other builds (load 10-20)
    /// a thread can wait more than the 50 ms default for a CPU, and only the tests about
    /// timeouts should see timeouts.
    func connectedCache(_ server: RedisServerProcess, _ configure: (inout RedisTileCache.Options) -> Void = { _ in }) async throws -> RedisTileCache {
        var options = RedisTileCache.Options()
        options.timeout = .seconds(1)
        configure(&options)
        let cache = try RedisTileCache(server.url, options: options)
        let available = await cache.waitUntilAvailable(timeout: .seconds(5))
        #expect(available, "could not connect to \(server.url): \(cache.lastFailure ?? "no failure recorded")")
        return cache
    }

    /// Bytes like a PNG's: every byte value, NULs included, `count` long.
    static func tileBytes(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    @Test func binaryValuesComeBackByteForByte() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server)
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d] + Self.tileBytes(20_000)
        let values: [(String, [UInt8])] = [("png", png), ("nuls", [UInt8](repeating: 0, count: 1_000)), ("empty", []),
                                           ("every-byte", (0...255).map { UInt8($0) })]
        for (key, bytes) in values {
            await cache.set(key: key, bytes: bytes, ttl: .seconds(60))
        }
        for (key, bytes) in values {
            let back = await cache.get(key: key)
            #expect(back?.count == bytes.count && back == bytes, "value \(key) changed on its way through Redis")
        }
        #expect(server.cli("STRLEN", "png") == String(png.count))
        let counters = cache.counters
        #expect(counters.stores == UInt64(values.count))
        #expect(counters.hits == UInt64(values.count))
        #expect(counters.errors == 0 && counters.timeouts == 0)
    }

    @Test func anAbsentKeyIsAMissNotAnError() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server)
        let value = await cache.get(key: "tilekit:v1:nothing-here")
        #expect(value == nil)
        #expect(cache.counters.misses == 1)
        #expect(cache.counters.errors == 0)
        #expect(cache.counters.isUp)
    }

    @Test func storesExpireAfterTheirTTL() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server)
        let stored = ContinuousClock.now
        await cache.set(key: "short", bytes: [1, 2, 3], ttl: .milliseconds(2_500))
        // PX, not EX: the TTL is kept to the millisecond (2500 is no whole number of seconds).
        let remaining = try #require(Int(server.cli("PTTL", "short")))
        #expect((1...2_500).contains(remaining), "PTTL \(remaining) ms after SET ... PX 2500")
        // Poll until Redis has expired it; it must not vanish before its TTL.
        let expired = try await eventually(every: .milliseconds(20)) { await cache.get(key: "short") == nil }
        #expect(expired, "still there \(ContinuousClock.now - stored) after a 2.5 s TTL")
        // A TTL under a millisecond stores nothing (a max-age of 0 is not cacheable).
        await cache.set(key: "zero", bytes: [1], ttl: .zero)
        #expect(server.cli("EXISTS", "zero") == "0")
    }

    @Test func aDeadRedisCostsNoTimePerCall() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server)
        await cache.set(key: "k", bytes: [1], ttl: .seconds(60))
        server.kill()
        // The first call finds the connection closed: answered at once, then the worker
        // tries to reconnect (refused) and marks Redis down.
        let first = await cache.get(key: "k")
        #expect(first == nil)
        #expect(cache.counters.timeouts == 0, "the first call after the kill waited for a timeout: \(cache.counters)")
        #expect(try await eventually(every: .milliseconds(5)) { !cache.isAvailable })
        // Costs no time: every call is skipped without touching the network (counted).
        let calls = 10_000
        for i in 0..<calls {
            _ = await cache.get(key: "k\(i)")
            await cache.set(key: "k\(i)", bytes: [1], ttl: .seconds(1))
        }
        let counters = cache.counters
        #expect(counters.failures[.connection, default: 0] >= 1)
        #expect(counters.skipped >= UInt64(calls * 2 - 10))
        #expect(counters.droppedStores >= UInt64(calls - 5))
        #expect(!counters.isUp)
        #expect(cache.lastFailure?.isEmpty == false)
    }

    @Test func reconnectsOnlyAfterTheIntervalAndHitsAgain() async throws {
        let server = try RedisServerProcess()
        // Long enough that restarting Redis on a loaded machine still falls within it.
        let interval = Duration.seconds(3)
        let cache = try await connectedCache(server) { $0.reconnectInterval = interval }
        server.kill()
        _ = await cache.get(key: "k")
        try #require(try await eventually(every: .milliseconds(2)) { !cache.isAvailable })
        let down = ContinuousClock.now
        let restarted = try RedisServerProcess(port: server.port)
        // Redis is back, but the cache waits out its interval: no call tries it before.
        let early = await cache.get(key: "k")
        let earlyAfter = ContinuousClock.now - down, skippedEarly = cache.counters.skipped
        #expect(early == nil)
        if earlyAfter < interval {
            #expect(skippedEarly >= 1, "a call \(earlyAfter) after Redis went down tried it before the interval")
        }
        // (No tight bound on when it came back: on a loaded machine the polling may notice
        // late. That no call tried before the interval is `early` and `skipped`.)
        let back = try await eventually(every: .milliseconds(5)) { cache.isAvailable }
        #expect(back, "not back \(ContinuousClock.now - down) after Redis went down: \(cache.lastFailure ?? "")")
        await cache.set(key: "k", bytes: [7, 0, 7], ttl: .seconds(60))
        let value = await cache.get(key: "k")
        #expect(value == [7, 0, 7])
        #expect(restarted.cli("EXISTS", "k") == "1")
        #expect(cache.counters.reconnects >= 1)
    }

    @Test func aFullRedisDropsStoresAndStillAnswersReads() async throws {
        let server = try RedisServerProcess(["--maxmemory", "2mb", "--maxmemory-policy", "noeviction"])
        let cache = try await connectedCache(server)
        let tile = Self.tileBytes(100_000)
        for i in 0..<40 {
            await cache.set(key: "big\(i)", bytes: tile, ttl: .seconds(60))
        }
        let counters = cache.counters
        #expect(counters.failures[.full, default: 0] >= 1, "Redis never said OOM: \(counters)")
        #expect(counters.droppedStores == counters.failures[.full, default: 0])
        #expect(counters.stores + counters.droppedStores == 40)
        #expect(cache.isAvailable, "a full Redis is still up for reads")
        #expect(cache.lastFailure?.hasPrefix("OOM") == true)
        if counters.stores > 0 {
            let first = await cache.get(key: "big0")
            #expect(first?.count == tile.count && first == tile, "the first tile stored did not come back whole")
        }
    }

    @Test func aReplicaRefusesStoresAsReadOnly() async throws {
        let primary = try RedisServerProcess()
        let replica = try RedisServerProcess(["--replicaof", "127.0.0.1", String(primary.port)])
        let cache = try await connectedCache(replica)
        await cache.set(key: "k", bytes: [1], ttl: .seconds(60))
        #expect(cache.counters.failures[.readOnly, default: 0] == 1)
        #expect(cache.counters.droppedStores == 1)
        #expect(cache.isAvailable)
    }

    @Test func aSlowRedisCostsOneTimeoutThenNothing() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server) { $0.timeout = .milliseconds(50) }
        server.cli("SET", "k", "ab")
        // Polled: a loaded machine may miss 50 ms.
        let warm = try await eventually(every: .milliseconds(20)) { await cache.get(key: "k") == Array("ab".utf8) }
        #expect(warm)
        // The warm-up's own misses may have counted timeouts: what follows counts from here.
        let earlier = cache.counters.timeouts
        // Another client makes Redis sleep; a second cache with its own connections shows
        // when the sleep has begun: its PING gets no answer in 200 ms, which on loopback
        // means Redis is stuck, not that the machine is busy.
        let watcher = try await connectedCache(server) { $0.timeout = .milliseconds(200) }  // connected before Redis sleeps
        let sleeper = try server.cliInBackground("DEBUG", "SLEEP", "4")
        defer { sleeper.waitUntilExit() }
        let deadline = ContinuousClock.now + .seconds(3)
        while await watcher.ping(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(watcher.counters.timeouts >= 1, "Redis did not start sleeping: \(watcher.counters)")

        // One timeout (the cache's own 50 ms deadline, counted), not a wait for Redis's 4 s.
        var value = await cache.get(key: "k")
        #expect(value == nil)
        #expect(cache.counters.timeouts == earlier + 1, "\(cache.counters); \(cache.lastFailure ?? "")")
        #expect(!cache.isAvailable)
        // The call after a timeout does not try Redis: it is skipped, not timed out again.
        value = await cache.get(key: "k")
        #expect(cache.counters.timeouts == earlier + 1)
        #expect(cache.counters.skipped >= 1)
        // When Redis wakes up the cache comes back by itself.
        let back = try await eventually(every: .milliseconds(20)) { await cache.get(key: "k") == Array("ab".utf8) }
        #expect(back, "not back after the sleep: \(cache.counters); \(cache.lastFailure ?? "")")
    }

    @Test func anUnreachableRedisIsReportedAndSkipped() async throws {
        let port = try RedisServerProcess.freePort()
        let cache = try RedisTileCache("redis://127.0.0.1:\(port)")
        let available = await cache.waitUntilAvailable(timeout: .seconds(5))
        #expect(!available)
        #expect(cache.lastFailure?.contains("127.0.0.1:\(port)") == true)
        #expect(cache.lastFailure?.contains("refused") == true, "\(cache.lastFailure ?? "nil")")
        // Skipped without trying the network (counted as such, no new failure).
        let before = cache.counters
        let value = await cache.get(key: "k")
        #expect(value == nil)
        #expect(cache.counters.skipped == before.skipped + 1 && cache.counters.failures == before.failures)
        #expect(cache.counters.failures[.connection, default: 0] >= 1)
        let pinged = await cache.ping()
        #expect(!pinged)
    }

    @Test func passwordAndDatabaseFromTheURL() async throws {
        let server = try RedisServerProcess(["--requirepass", "s3cret"], password: "s3cret")
        var options = RedisTileCache.Options()
        options.timeout = .milliseconds(200)
        let cache = try RedisTileCache("redis://:s3cret@127.0.0.1:\(server.port)/3", options: options)
        let available = await cache.waitUntilAvailable(timeout: .seconds(5))
        #expect(available, "\(cache.lastFailure ?? "")")
        await cache.set(key: "in-three", bytes: [3], ttl: .seconds(60))
        #expect(server.cli("-n", "3", "EXISTS", "in-three") == "1")
        #expect(server.cli("-n", "0", "EXISTS", "in-three") == "0")

        let wrong = try RedisTileCache("redis://:nope@127.0.0.1:\(server.port)")
        let wrongAvailable = await wrong.waitUntilAvailable(timeout: .seconds(5))
        #expect(!wrongAvailable)
        #expect(wrong.lastFailure?.contains("WRONGPASS") == true, "\(wrong.lastFailure ?? "nil")")
        #expect(wrong.lastFailure?.contains("nope") == false, "the password leaked into a message")
        #expect(wrong.counters.failures[.reply, default: 0] >= 1)
    }

    @Test func pingAnswersForReadiness() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server)
        let up = await cache.ping()
        #expect(up)
        server.kill()
        // The first ping finds the dead connection; later ones answer false at once.
        _ = await cache.ping()
        _ = try await eventually(every: .milliseconds(5)) { !cache.isAvailable }
        let down = await cache.ping()
        #expect(!down)
    }

    @Test func manyConcurrentCallersGetTheirOwnValues() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server) { $0.timeout = .seconds(2) }
        let count = 300
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<count {
                group.addTask { await cache.set(key: "c\(i)", bytes: Self.tileBytes(2_000 + i, seed: UInt8(i % 256)), ttl: .seconds(60)) }
            }
        }
        let wrong = await withTaskGroup(of: Int?.self) { group in
            for i in 0..<count {
                group.addTask {
                    let value = await cache.get(key: "c\(i)")
                    return value == Self.tileBytes(2_000 + i, seed: UInt8(i % 256)) ? nil : i
                }
            }
            var wrong = [Int]()
            for await result in group { if let result { wrong.append(result) } }
            return wrong
        }
        #expect(wrong.isEmpty, "keys answered with another key's bytes or nothing: \(wrong.sorted().prefix(10)); \(cache.counters); \(cache.lastFailure ?? "")")
        #expect(cache.counters.hits == UInt64(count))
    }

    @Test func callsBeyondTheWaitingLimitFailAtOnceAsBusy() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server) {
            $0.connections = 1
            $0.maxWaitingCalls = 1
            $0.timeout = .milliseconds(500)
        }
        let tile = Self.tileBytes(50_000)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<50 { group.addTask { await cache.set(key: "b\(i)", bytes: tile, ttl: .seconds(60)) } }
        }
        let counters = cache.counters
        #expect(counters.stores + counters.droppedStores == 50)
        #expect(counters.failures[.busy, default: 0] == counters.droppedStores)
        #expect(counters.stores >= 1)
        #expect(cache.isAvailable, "busy is not down")
    }

    @Test func countersReadAsPrometheusText() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server)
        await cache.set(key: "k", bytes: [1], ttl: .seconds(5))
        _ = await cache.get(key: "k")
        _ = await cache.get(key: "absent")
        let text = cache.counters.prometheusText
        for line in ["tilekit_shared_cache_hits_total 1", "tilekit_shared_cache_misses_total 1", "tilekit_shared_cache_stores_total 1",
                     "tilekit_shared_cache_errors_total{kind=\"timeout\"} 0", "tilekit_shared_cache_errors_total{kind=\"full\"} 0",
                     "tilekit_shared_cache_up 1", "# TYPE tilekit_shared_cache_reconnects_total counter"] {
            #expect(text.contains(line + "\n"), "missing \(line) in:\n\(text)")
        }
    }
}

extension RedisTileCacheTests {
    /// hiredis writes with write(2): a write to a connection Redis has reset raises SIGPIPE,
    /// which kills the process unless the worker threads block it. A value of several
    /// megabytes needs many writes, so the later ones meet the reset.
    @Test func aRedisKilledDuringALargeWriteDoesNotKillTheProcess() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server) {
            $0.connections = 1
            $0.timeout = .seconds(2)
        }
        let warm = await cache.ping()
        #expect(warm)
        server.kill()
        await cache.set(key: "huge", bytes: Self.tileBytes(6 << 20), ttl: .seconds(60))
        #expect(cache.counters.droppedStores == 1)
        #expect(cache.counters.failures[.connection, default: 0] >= 1)
    }
}

extension RedisTileCacheTests {
    /// The worker threads of this process (named tilekit-redis-N), from /proc.
    static func workerThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("tilekit-redis-")
        }.count
    }

    static func waitForWorkerThreads(_ count: Int) async throws -> Int {
        _ = try await eventually { workerThreads() == count }
        return workerThreads()
    }

    @Test func releasingTheCacheEndsItsThreads() async throws {
        let server = try RedisServerProcess()
        _ = try await Self.waitForWorkerThreads(0)  // caches of earlier tests may still be closing
        var cache: RedisTileCache? = try await connectedCache(server) { $0.connections = 3 }
        #expect(try await Self.waitForWorkerThreads(3) == 3)
        let stored = await cache?.ping()
        #expect(stored == true)
        cache = nil
        #expect(try await Self.waitForWorkerThreads(0) == 0, "worker threads outlived their cache")
        #expect(server.cli("CLIENT", "LIST").split(separator: "\n").count == 1, "connections left open: \(server.cli("CLIENT", "LIST"))")
    }
}

extension RedisTileCacheTests {
    @Test func lookupTellsAMissFromAnUnavailableRedis() async throws {
        let server = try RedisServerProcess()
        let cache = try await connectedCache(server)
        await cache.set(key: "k", bytes: [0, 1], ttl: .seconds(60))
        let hit = await cache.lookup(key: "k")
        let miss = await cache.lookup(key: "absent")
        #expect(hit == .hit([0, 1]))
        #expect(miss == .miss)
        #expect(hit.cacheStatus().member == "tilekit-redis; hit")
        #expect(miss.cacheStatus(stored: true).member == "tilekit-redis; fwd=miss; stored")
        server.kill()
        // The first call after the kill fails on the connection, unless the cache's own
        // probe noticed first (then it is skipped): either way a bypass, never a miss.
        let failed = await cache.lookup(key: "k")
        #expect(failed == .unavailable(.connection) || failed == .unavailable(nil), "\(failed)")
        #expect(failed.cacheStatus().member.hasPrefix("tilekit-redis; fwd=bypass; detail=unavailable"))
        try #require(try await eventually(every: .milliseconds(2)) { !cache.isAvailable })
        let skipped = await cache.lookup(key: "k")
        #expect(skipped == .unavailable(nil))
        #expect(skipped.cacheStatus().member == "tilekit-redis; fwd=bypass; detail=unavailable")
    }

    /// A host that completes the TCP handshake (the kernel does it) but never answers, like
    /// a hung Redis or a black-holed proxy: the probe is a PING, so it does not count as up.
    @Test func aServerThatAcceptsButNeverAnswersIsNotUp() async throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        } && listen(fd, 16) == 0
        try #require(listening)
        var options = RedisTileCache.Options()
        options.timeout = .milliseconds(30)
        let cache = RedisTileCache(url: RedisURL(host: "127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port))), options: options)
        let available = await cache.waitUntilAvailable(timeout: .seconds(5))
        #expect(!available)
        #expect(cache.counters.timeouts >= 1)
        #expect(cache.lastFailure?.contains("PING") == true, "\(cache.lastFailure ?? "nil")")
        let before = cache.counters
        let value = await cache.get(key: "k")
        #expect(value == nil)
        #expect(cache.counters.skipped == before.skipped + 1 && cache.counters.timeouts == before.timeouts)
    }
}

extension RedisTileCacheTests {
    @Test func aPortOutOfRangeBuiltInCodeIsAFailureNotATrap() async {
        let cache = RedisTileCache(url: RedisURL(host: "127.0.0.1", port: 70_000))
        let available = await cache.waitUntilAvailable(timeout: .seconds(5))
        #expect(!available)
        #expect(cache.lastFailure?.contains("port 70000 is not in 1-65535") == true, "\(cache.lastFailure ?? "nil")")
    }
}
