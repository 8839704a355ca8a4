import Foundation
import Synchronization

/// Where a streamed body is written (server-sent events). Chunks wait here until
/// the adapter's thread takes them; `isClosed` turns true when the client has gone or the
/// server stops.
///
/// No thread waits for a chunk: when the buffer is empty, the adapter's pull pauses the
/// connection (HTTPServer suspends it in libmicrohttpd), and the next `write` (or `close`)
/// wakes it. A stream therefore costs memory and a socket, never a worker thread. The core
/// owns this type; the adapter only attaches its pause and wake-up.
public final class ResponseStream: Sendable {
    struct State {
        var chunks = [UInt8]()
        var finished = false
        var closed = false
        /// The connection waits (suspended) for the next chunk.
        var suspended = false
        var lastWrite = ContinuousClock.now
    }
    private let state = Mutex(State())
    /// How the adapter pauses and wakes the connection this stream is sent on; set once,
    /// by `attach`, before the adapter first pulls.
    nonisolated(unsafe) private var connection: (suspend: @Sendable () -> Void, resume: @Sendable () -> Void)?
    /// Bytes buffered beyond this close the stream: a client that reads nothing cannot make
    /// the server hold an unbounded backlog.
    static let maxBufferedBytes = 1 << 20

    package init() {}

    /// Called by the adapter before it first pulls: `suspend` pauses the connection (called
    /// under this stream's lock, inside `pull`), `resume` wakes it (from any thread).
    package func attach(suspend: @escaping @Sendable () -> Void, resume: @escaping @Sendable () -> Void) {
        connection = (suspend, resume)
    }

    public func write(_ text: String) { write(Array(text.utf8)) }

    public func write(_ bytes: [UInt8]) {
        let resume = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            if s.chunks.count + bytes.count > Self.maxBufferedBytes {
                s.closed = true
            } else {
                s.chunks += bytes
                s.lastWrite = .now
            }
            return s.wakeUp()
        }
        if resume { resumeConnection() }
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    /// The producer is done: what is buffered is sent, then the body ends.
    package func finish() {
        if state.withLock({ s -> Bool in s.finished = true; return s.wakeUp() }) { resumeConnection() }
    }

    /// The client went away or the server stops: the body ends now.
    package func close() {
        if state.withLock({ s -> Bool in s.closed = true; return s.wakeUp() }) { resumeConnection() }
    }

    /// An SSE comment after `quiet` of silence, so proxies keep the connection.
    package func pingIfQuiet(_ quiet: Duration, now: ContinuousClock.Instant) {
        let due = state.withLock { now - $0.lastWrite >= quiet && !$0.closed && !$0.finished }
        if due { write(": ping\n\n") }
    }

    /// The adapter's pull, on its thread: copies up to `max` bytes into `buffer`. Returns
    /// the count, 0 after suspending the connection until there is more, or nil at the end.
    package func pull(into buffer: UnsafeMutableRawPointer, max: Int) -> Int? {
        state.withLock { s -> Int? in
            if !s.chunks.isEmpty && !s.closed {
                let n = Swift.min(max, s.chunks.count)
                s.chunks.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: n) }
                s.chunks.removeFirst(n)
                return n
            }
            if s.finished || s.closed { return nil }
            // Suspending inside the pull is what libmicrohttpd documents for "no data yet";
            // the lock makes a write between the check and the suspension impossible.
            connection?.suspend()
            s.suspended = true
            return 0
        }
    }

    private func resumeConnection() {
        connection?.resume()
    }
}

extension ResponseStream.State {
    /// Whether the connection waits and must be resumed (then it no longer waits).
    fileprivate mutating func wakeUp() -> Bool {
        defer { suspended = false }
        return suspended
    }
}
