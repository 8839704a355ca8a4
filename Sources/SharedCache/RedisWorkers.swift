internal import CHiredis
import Foundation
import Synchronization

/// The threads that talk to Redis: each owns one hiredis connection and takes jobs from a
/// shared queue, so a caller never blocks a thread of Swift's cooperative pool on a socket.
///
/// Why threads of their own: hiredis' synchronous API blocks in `read(2)` until Redis answers
/// or the socket timeout passes. On the 2-core machines TileKit targets the cooperative pool
/// has 2 threads; a `get` that blocked one of them for a 50 ms timeout would stall every
/// other request's rendering for that long, and two at once would stall the whole server.
/// Keeping the timeout "too small to hurt" does not work either: a loaded machine misses a
/// small timeout (tests here saw threads wait over 50 ms for a CPU at load 15-20), so the
/// budget that protects requests must be spent off their threads. Here a caller suspends on
/// a continuation (its thread goes back to the pool) and a worker does the blocking.
///
/// What the hop costs, measured on loopback with a 20 KB value, one caller at a time, 10,000
/// each (RedisTileCacheBenchmark, debug build, 2 busy cores at load ~12): GET p50 32 µs,
/// SET p50 41 µs, against p50 23 µs for redis-benchmark's C client on the same machine
/// (`-d 20000 -c 1`): about 10 µs, two thread wake-ups. From 16 concurrent tasks over the
/// default 4 connections: 10,000-21,000 GETs/s depending on the load of the machine.
///
/// The workers also connect and probe off the request path: after a failure the job is
/// answered first and the reconnect happens afterwards, so no caller waits for a TCP
/// handshake to a dead host.
final class RedisWorkers: Sendable {
    let url: RedisURL
    let options: RedisTileCache.Options
    let health: RedisHealth
    let counters: RedisCounterCells
    let queue: RedisJobQueue
    private let stopped = Atomic<Bool>(false)

    init(url: RedisURL, options: RedisTileCache.Options, counters: RedisCounterCells) {
        self.url = url
        self.options = options
        self.counters = counters
        health = RedisHealth(reconnectInterval: options.reconnectInterval)
        queue = RedisJobQueue(limit: options.maxWaitingCalls)
    }

    func start() {
        for index in 0..<options.connections {
            let thread = Thread { [self] in run(name: "tilekit-redis-\(index)") }
            thread.start()
        }
    }

    /// Stops the workers (each closes its connection as it leaves) and answers every queued
    /// job with `.skipped`.
    func stop() {
        stopped.store(true, ordering: .releasing)
        for job in queue.close(waking: options.connections) { job.finish(.skipped) }
    }

    /// What one worker thread keeps between jobs.
    private struct Worker {
        var connection: RedisConnection?
        /// Whether `connection` has answered at least once: a connection that dies before
        /// its first answer means Redis is not really there, so it is not retried at once.
        var answered = false
        /// `health.outageCount` when `connection` was opened.
        var openedAfterOutages: UInt64 = 0
        var everConnected = false

        /// Drops a connection opened before the latest outage (Redis may have restarted
        /// since: its socket would fail the next call).
        mutating func dropIfOlderThan(outages: UInt64) {
            if connection != nil, openedAfterOutages != outages { connection = nil }
        }
    }

    private func run(name: String) {
        _ = tk_redis_name_thread(String(name.utf8.prefix(15)) ?? "tilekit-redis")
        _ = tk_redis_block_sigpipe()
        var worker = Worker()
        // While disconnected a worker wakes this often to see whether a probe is due.
        let poll = min(options.reconnectInterval, .milliseconds(50))
        while !stopped.load(ordering: .acquiring) {
            maintain(&worker)
            let wait: Duration = worker.connection != nil && health.isUp ? .seconds(1) : poll
            guard let job = queue.next(waitingAtMost: wait) else { continue }
            serve(job, &worker)
        }
    }

    private func serve(_ job: RedisJob, _ worker: inout Worker) {
        guard ContinuousClock.now - job.enqueued <= options.timeout else { return job.finish(.failed(.busy)) }
        guard health.isUp else { return job.finish(.skipped) }
        worker.dropIfOlderThan(outages: health.outageCount)
        if worker.connection == nil {
            // Redis answered another worker moments ago, so this connect should be quick;
            // it is still held to the call's timeout, not the longer connect timeout.
            if let fault = connect(&worker, timeout: min(options.connectTimeout, options.timeout)) {
                health.markDown(fault)
                return job.finish(.failed(fault.kind))
            }
        }
        guard let connection = worker.connection else { return job.finish(.skipped) }
        switch connection.run(job.command.arguments) {
        case .success(let reply):
            worker.answered = true
            let outcome = Self.outcome(of: reply, for: job.command)
            if case .error(let message) = reply { health.note(RedisFault(kind: RedisConnection.kind(ofErrorReply: message), message: message)) }
            job.finish(outcome)
        case .failure(let fault):
            worker.connection = nil
            // A timeout means Redis is slow: leave it alone for an interval. A connection
            // closed after it had worked (an idle timeout, a restart) is replaced at once
            // by `maintain`, after the caller has its answer.
            if fault.kind == .timeout || !worker.answered { health.markDown(fault) } else { health.note(fault) }
            job.finish(.failed(fault.kind))
        }
    }

    /// Opens a connection when Redis is up and this worker has none, or probes when Redis is
    /// down and the interval has passed. Runs between jobs, never while a caller waits.
    private func maintain(_ worker: inout Worker) {
        if health.isUp {
            worker.dropIfOlderThan(outages: health.outageCount)
            guard worker.connection == nil else { return }
            if let fault = connect(&worker, timeout: options.connectTimeout) {
                counters.count(fault.kind)
                health.markDown(fault)
            }
        } else if health.claimProbe() {
            // A probe is a round trip, not just a connect: the kernel completes a TCP
            // handshake even for a Redis that is stuck (DEBUG SLEEP, a long script).
            worker.connection = nil
            if let fault = connect(&worker, timeout: options.connectTimeout) ?? ping(&worker) {
                counters.count(fault.kind)
                health.markDown(fault)
            } else {
                health.markUp()
            }
        }
    }

    /// PINGs this worker's connection; nil when Redis answered PONG.
    private func ping(_ worker: inout Worker) -> RedisFault? {
        guard let connection = worker.connection else { return RedisFault(kind: .connection, message: "no connection") }
        switch connection.run([Array("PING".utf8)]) {
        case .success(.status("PONG")):
            worker.answered = true
            return nil
        case .success(let other):
            worker.connection = nil
            return RedisFault(kind: .protocolError, message: "PING to \(url): unexpected answer \(other)")
        case .failure(let fault):
            worker.connection = nil
            return RedisFault(kind: fault.kind, message: "PING to \(url): \(fault.message)")
        }
    }

    /// Opens this worker's connection, or returns what went wrong (the caller counts it and
    /// marks Redis down).
    private func connect(_ worker: inout Worker, timeout: Duration) -> RedisFault? {
        // Read first: an outage declared while connecting makes this connection suspect.
        let outages = health.outageCount
        switch RedisConnection.open(url, connectTimeout: timeout, ioTimeout: options.timeout) {
        case .success(let connection):
            if worker.everConnected || outages > 0 { counters.reconnects.wrappingAdd(1, ordering: .relaxed) }
            worker.connection = connection
            worker.openedAfterOutages = outages
            worker.answered = false
            worker.everConnected = true
            return nil
        case .failure(let fault):
            return fault
        }
    }

    static func outcome(of reply: RedisConnection.Reply, for command: RedisJob.Command) -> RedisJob.Outcome {
        switch (command, reply) {
        case (.get, .bytes(let bytes)): return .value(bytes)
        case (.get, .null): return .absent
        case (.set, .status("OK")): return .stored
        case (.ping, .status("PONG")): return .pong
        case (_, .error(let message)): return .failed(RedisConnection.kind(ofErrorReply: message))
        default: return .failed(.protocolError)
        }
    }
}
