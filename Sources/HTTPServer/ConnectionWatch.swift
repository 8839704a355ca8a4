import Foundation
import Synchronization
import TileMath
import TileServer
import CMicroHTTPDShim

/// One client connection as the watch sees it. `onHangup` is read and written only inside
/// `ConnectionWatch.connections.withLock`; the deadline is atomic.
final class WatchedConnection: @unchecked Sendable {  // onHangup behind ConnectionWatch's lock
    let fd: Int32
    /// When the request in progress must be complete (headers, then body), as nanoseconds
    /// after `ConnectionWatch.epoch` plus one; 0 while a handler works or a response is sent.
    /// Bytes that trickle in do not move it: that is what stops slowloris, which
    /// libmicrohttpd's idle timeout does not. Atomic, not behind the lock: it is set two or
    /// three times a request, and with one lock for every connection, a connection thread
    /// preempted while holding it stalled the other's requests for a time slice (p99).
    let deadline = Atomic<Int64>(0)
    /// Called when the client hangs up while its request waits (suspended) for a handler or
    /// a stream: the work is abandoned and the connection resumed so it can be closed.
    var onHangup: (@Sendable () -> Void)?

    init(fd: Int32) { self.fd = fd }
}

/// Deadlines and hang-ups for every open connection, checked by one thread a few times a
/// second. libmicrohttpd cannot see a suspended connection's socket, and its timeout is an
/// idle timeout that each byte restarts, so both are watched here.
final class ConnectionWatch: Sendable {
    private let connections = Mutex<[ObjectIdentifier: WatchedConnection]>([:])
    private let running = Atomic<Bool>(true)
    private let interval: Duration
    let headerTimeout: Duration
    let bodyTimeout: Duration
    /// Streams to ping when quiet (SSE comments keep proxies from dropping them).
    let streams = Mutex<[ObjectIdentifier: ResponseStream]>([:])

    init(headerTimeout: Duration, bodyTimeout: Duration, interval: Duration = .milliseconds(200)) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.interval = interval
        _ = Self.epoch  // before any deadline is stored, so none is counted from before it
    }

    var count: Int { connections.withLock { $0.count } }

    /// What deadlines are counted from.
    static let epoch = ContinuousClock.now

    /// `instant` as a deadline's atomic value (never 0, which is none).
    static func stored(_ instant: ContinuousClock.Instant) -> Int64 {
        let (seconds, attoseconds) = (instant - epoch).components
        return max(1, seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000 &+ 1)
    }

    func opened(fd: Int32) -> WatchedConnection {
        let connection = WatchedConnection(fd: fd)
        connection.deadline.store(Self.stored(.now + headerTimeout), ordering: .relaxed)
        connections.withLock { $0[ObjectIdentifier(connection)] = connection }
        return connection
    }

    /// Called before libmicrohttpd closes the socket, so the watch never touches a reused fd.
    func closed(_ connection: WatchedConnection) {
        connections.withLock {
            $0[ObjectIdentifier(connection)] = nil
            connection.onHangup = nil
        }
    }

    /// The next request must be complete `after` from now (nil: no deadline).
    func setDeadline(_ connection: WatchedConnection, after: Duration?) {
        connection.deadline.store(after.map { Self.stored(.now + $0) } ?? 0, ordering: .relaxed)
    }

    func watchHangup(_ connection: WatchedConnection, _ action: (@Sendable () -> Void)?) {
        connections.withLock { _ in connection.onHangup = action }
    }

    func start() {
        let thread = Thread { [self] in
            while running.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: interval.seconds)
                sweep()
            }
        }
        thread.name = "tilekit.connection-watch"
        thread.start()
    }

    func stop() { running.store(false, ordering: .relaxed) }

    /// Closes connections past their deadline and reports hang-ups. Sockets are touched
    /// only under the lock, while libmicrohttpd cannot have closed them.
    func sweep(now: ContinuousClock.Instant = .now) {
        var hungUp = [@Sendable () -> Void]()
        connections.withLock { all in
            var watched = [(WatchedConnection, pollfd)]()
            let passed = Self.stored(now)
            for connection in all.values {
                let deadline = connection.deadline.load(ordering: .relaxed)
                // Shut only if no new request set another deadline meanwhile.
                if deadline != 0, deadline <= passed,
                   connection.deadline.compareExchange(expected: deadline, desired: 0, ordering: .relaxed).exchanged {
                    shutdown(connection.fd, Int32(SHUT_RDWR))
                }
                if connection.onHangup != nil {
                    watched.append((connection, pollfd(fd: connection.fd, events: Int16(TK_POLLRDHUP), revents: 0)))
                }
            }
            guard !watched.isEmpty else { return }
            var fds = watched.map(\.1)
            guard poll(&fds, nfds_t(fds.count), 0) > 0 else { return }
            for (index, fd) in fds.enumerated() where fd.revents & Int16(TK_POLLRDHUP | POLLHUP | POLLERR) != 0 {
                let connection = watched[index].0
                if let action = connection.onHangup { hungUp.append(action) }
                connection.onHangup = nil
            }
        }
        for action in hungUp { action() }
        for stream in streams.withLock({ Array($0.values) }) { stream.pingIfQuiet(.seconds(10), now: now) }
    }
}
