import Foundation
import Synchronization
import TileMath
import TileServer
import CMicroHTTPDShim

/// One client connection as the watch sees it. Its mutable fields are read and written only
/// inside `ConnectionWatch.connections.withLock`.
final class WatchedConnection: @unchecked Sendable {  // fields behind ConnectionWatch's lock
    let fd: Int32
    /// When the request in progress must be complete (headers, then body); nil while a
    /// handler works or a response is sent. Bytes that trickle in do not move it: that is
    /// what stops slowloris, which libmicrohttpd's idle timeout does not.
    var deadline: ContinuousClock.Instant?
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
    }

    var count: Int { connections.withLock { $0.count } }

    func opened(fd: Int32) -> WatchedConnection {
        let connection = WatchedConnection(fd: fd)
        connections.withLock {
            connection.deadline = .now + headerTimeout
            $0[ObjectIdentifier(connection)] = connection
        }
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
        connections.withLock { _ in connection.deadline = after.map { .now + $0 } }
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
            for connection in all.values {
                if let deadline = connection.deadline, deadline <= now {
                    connection.deadline = nil
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
