import Foundation
import Synchronization
public import TileServer
import CMicroHTTPD
import CMicroHTTPDShim

/// How much a client may take: connections, time and bytes.
public struct HTTPServerLimits: Sendable {
    /// Threads that run libmicrohttpd's epoll loops (and fast answers: cached tiles, and
    /// tiles read at once from local stores, which never wait on a lock or a slow file).
    /// Handlers run as tasks and never hold one of these threads, so the number of cores is enough.
    public var threads = max(2, ProcessInfo.processInfo.activeProcessorCount)
    /// Largest request body; a larger `Content-Length` is refused before the body is read.
    public var maxBodyBytes = 1 << 20
    /// How long a handler may take before the client gets 503 (the work is then cancelled).
    public var handlerTimeout: Duration = .seconds(30)
    /// From a connection's start (or its previous response) to a complete request line and
    /// headers. Bytes that trickle in do not extend it (slowloris).
    public var headerTimeout: Duration = .seconds(10)
    /// From complete headers to a complete body.
    public var bodyTimeout: Duration = .seconds(30)
    /// libmicrohttpd's own timeout for a connection that neither sends nor reads.
    public var idleTimeout: Duration = .seconds(30)
    /// Open connections in all; nil: the process's file-descriptor limit (raised to its hard
    /// limit at start) less a reserve for files and upstream sockets.
    public var maxConnections: Int?
    /// Open connections from one address; nil: half of `maxConnections`.
    public var maxConnectionsPerClient: Int?

    public init() {}
}

/// HTTP/1.1 with keep-alive on libmicrohttpd: epoll threads (one daemon each, tk_mhd.c) that
/// parse requests and send responses, and handlers that run as tasks while their connection
/// is suspended.
///
/// How a request flows: libmicrohttpd calls `access` once with the head (checked for strict
/// framing and a too-large `Content-Length` here, so the body is never read and no
/// `100 Continue` is sent), then with each piece of the body, then once more with none. On
/// that last call a `fast` handler may answer on the spot (a memory-cache hit, `/health`);
/// otherwise the handler starts as a task and the connection is suspended, costing no thread.
/// The task's answer resumes the connection, libmicrohttpd calls `access` again, and the
/// answer is queued. Answers are never queued on the first call of a good request:
/// libmicrohttpd treats those as early and closes the connection, which costs keep-alive.
public final class HTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse
    public typealias FastHandler = @Sendable (HTTPRequest) -> HTTPResponse?

    final class Context: Sendable {
        let handler: Handler
        let fast: FastHandler?
        let limits: HTTPServerLimits
        let watch: ConnectionWatch
        /// Requests whose answer is not yet queued.
        let inFlight = Atomic<Int>(0)
        /// Exchanges alive (request line read, completion not yet called): a leak shows here.
        let exchanges = ExchangeCount()
        let stopping = Atomic<Bool>(false)
        /// Exchanges whose handler runs, to answer them when the server stops.
        let running = Mutex<[ObjectIdentifier: Exchange]>([:])
        init(handler: @escaping Handler, fast: FastHandler?, limits: HTTPServerLimits) {
            self.handler = handler
            self.fast = fast
            self.limits = limits
            watch = ConnectionWatch(headerTimeout: limits.headerTimeout, bodyTimeout: limits.bodyTimeout)
        }
    }

    nonisolated(unsafe) private let daemon: OpaquePointer
    private let context: Context
    nonisolated(unsafe) private let contextPointer: UnsafeMutableRawPointer
    public let port: Int
    public let host: String
    /// The connection limit in force.
    public let maxConnections: Int
    private let stopped = Atomic<Bool>(false)

    /// Starts listening. `host` nil listens on every interface; port 0 lets the system pick.
    public init(host: String?, port: Int, limits: HTTPServerLimits = HTTPServerLimits(),
                fast: FastHandler? = nil, handler: @escaping Handler) throws(HTTPServerError) {
        let address: String?
        switch host {
        case nil: address = nil
        case "localhost"?: address = "127.0.0.1"
        case let h?:
            var probe = in_addr()
            guard inet_pton(AF_INET, h, &probe) == 1 else { throw .badHost(h) }
            address = h
        }
        guard (0...65535).contains(port) else { throw .cannotStart(host: host ?? "0.0.0.0", port: port) }
        let total = max(16, limits.maxConnections ?? Self.raiseDescriptorLimit() - 256)
        let perClient = max(1, min(total, limits.maxConnectionsPerClient ?? total / 2))
        maxConnections = total
        context = Context(handler: handler, fast: fast, limits: limits)
        contextPointer = Unmanaged.passRetained(context).toOpaque()
        let pointer = contextPointer
        let started = (address ?? "").withCString { text -> OpaquePointer? in
            var settings = tk_mhd_settings(ipv4_address: address == nil ? nil : text, port: UInt16(port),
                                           threads: UInt32(max(1, min(limits.threads, 64))),
                                           connection_limit: UInt32(total), per_client_limit: UInt32(perClient),
                                           idle_timeout_seconds: UInt32(max(1, limits.idleTimeout.components.seconds)),
                                           listen_backlog: 4096)
            return tk_mhd_start(&settings, HTTPServer.access, pointer, HTTPServer.completed, HTTPServer.notify, HTTPServer.target)
        }
        guard let started else {
            Unmanaged<Context>.fromOpaque(contextPointer).release()
            throw .cannotStart(host: host ?? "0.0.0.0", port: port)
        }
        daemon = started
        self.port = Int(tk_mhd_port(started))
        self.host = address ?? "0.0.0.0"
        context.watch.start()
    }

    /// The old shape: threads, body limit and handler timeout only.
    public convenience init(host: String?, port: Int, threads: Int, maxBodyBytes: Int = 1 << 20, timeout: Duration = .seconds(30),
                            fast: FastHandler? = nil, handler: @escaping Handler) throws(HTTPServerError) {
        var limits = HTTPServerLimits()
        limits.threads = threads
        limits.maxBodyBytes = maxBodyBytes
        limits.handlerTimeout = timeout
        try self.init(host: host, port: port, limits: limits, fast: fast, handler: handler)
    }

    /// Open client connections.
    public var connections: Int { context.watch.count }

    /// Open client connections on each of the server's threads: a new connection goes to the
    /// thread for the CPU it came in on, or past 16 over an even share to the one with the
    /// most room. Empty once the server is stopping (not to be read during
    /// `stop()`, which frees what it reads).
    public var connectionsPerThread: [Int] {
        guard !stopped.load(ordering: .acquiring) else { return [] }
        var counts = [Int32](repeating: 0, count: 64)
        let threads = counts.withUnsafeMutableBufferPointer { tk_mhd_thread_connections(daemon, $0.baseAddress, UInt32($0.count)) }
        return counts.prefix(Int(threads)).map(Int.init)
    }

    /// Requests begun and not yet completed.
    var openExchanges: Int { context.exchanges.value.load(ordering: .acquiring) }

    /// Stops accepting at once, lets answers in flight finish (up to `grace`), ends streams,
    /// answers what is still running with 503, then closes every connection.
    public func stop(grace: Duration = .seconds(10)) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        context.stopping.store(true, ordering: .releasing)
        tk_mhd_quiesce(daemon)
        for stream in context.watch.streams.withLock({ Array($0.values) }) { stream.close() }
        waitForAnswers(until: .now + grace)
        // Nothing may stay suspended when the daemon stops (libmicrohttpd aborts on that).
        for exchange in context.running.withLock({ Array($0.values) }) {
            exchange.complete(.text(503, "the server is stopping", headers: [("Retry-After", "5"), ("Connection", "close")]))
        }
        waitForAnswers(until: .now + .seconds(2))
        context.watch.stop()
        tk_mhd_stop(daemon)
        Unmanaged<Context>.fromOpaque(contextPointer).release()
    }

    private func waitForAnswers(until deadline: ContinuousClock.Instant) {
        while context.inFlight.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
            usleep(10_000)
        }
    }

    deinit { stop() }

    /// Raises the soft file-descriptor limit to the hard one and returns it.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(min(limit.rlim_cur, 1 << 20))
    }

    // MARK: - libmicrohttpd callbacks

    private static let notify: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
        guard let cls, let connection, let socketContext else { return }
        let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
        if code.rawValue == 0 {  // MHD_CONNECTION_NOTIFY_STARTED
            let watched = context.watch.opened(fd: tk_mhd_connection_fd(connection))
            socketContext.pointee = Unmanaged.passRetained(watched).toOpaque()
        } else if let pointer = socketContext.pointee {
            let watched = Unmanaged<WatchedConnection>.fromOpaque(pointer).takeRetainedValue()
            context.watch.closed(watched)
            socketContext.pointee = nil
        }
    }

    private static func watched(_ connection: OpaquePointer) -> WatchedConnection? {
        tk_mhd_socket_context(connection).map { Unmanaged<WatchedConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The request line is read: its target, query included, starts the exchange.
    private static let target: tk_mhd_target_callback = { cls, target, connection in
        guard let cls, let connection else { return nil }
        let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
        let exchange = Exchange(connection: connection, target: target.map { String(cString: $0) } ?? "", count: context.exchanges)
        return Unmanaged.passRetained(exchange).toOpaque()
    }

    private static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadSize, state in
        guard let cls, let connection, let state, let uploadSize, let existing = state.pointee else { return MHDConstants.no }
        let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
        let exchange = Unmanaged<Exchange>.fromOpaque(existing).takeUnretainedValue()
        // `head` sets both, once the head is accepted.
        guard let watched = exchange.watched, let head = exchange.head else {
            return HTTPServer.head(exchange, connection, context, method: method, version: version)
        }
        if uploadSize.pointee > 0 {
            let size = uploadSize.pointee
            uploadSize.pointee = 0
            if exchange.refused { return MHDConstants.yes }  // the rest of a refused body, discarded
            guard exchange.body.count + size <= context.limits.maxBodyBytes else {
                refuseGrowingBody(exchange, watched, context)
                return MHDConstants.yes
            }
            if let uploadData {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) {
                    exchange.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                }
            }
            return MHDConstants.yes
        }
        if exchange.refused { return MHDConstants.no }  // its 413 is sent: close
        if exchange.started { return deliverOrSuspend(exchange, watched, connection, context) }  // resumed: the answer is there
        return begin(exchange, head, watched, path: url.map { String(cString: $0) } ?? "/", connection, context)
    }

    /// The first call: the request line and headers are complete; the body is not read yet.
    private static func head(_ exchange: Exchange, _ connection: OpaquePointer, _ context: Context,
                             method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?) -> MHD_Result {
        let head = RequestHead(method: method.map { String(cString: $0) } ?? "", target: exchange.target,
                               version: version.map { String(cString: $0) } ?? "",
                               headers: headerList(connection), receivedBytes: Int(exactly: tk_mhd_header_size(connection)).flatMap { $0 > 0 ? $0 : nil })
        guard let watched = watched(connection) else { return MHDConstants.no }
        if let problem = head.framingProblem() {
            return queue(.text(400, "bad request: \(problem)", headers: [("Connection", "close")]), on: connection, context)
        }
        if let length = head.contentLength, length > context.limits.maxBodyBytes {
            return queue(tooLarge(context), on: connection, context)
        }
        context.watch.setDeadline(watched, after: head.hasBody ? context.limits.bodyTimeout : nil)
        exchange.head = head
        exchange.watched = watched
        return MHDConstants.yes
    }

    /// A body without a declared length grew past the limit. libmicrohttpd cannot queue an
    /// answer while a body arrives, so the 413 is written to the socket directly (nothing
    /// else is being sent on it: the previous response is complete and the next has not
    /// begun), the sending side is shut, and what the client still sends is read and dropped
    /// for a short while before the socket closes (nginx's lingering close): closing at once
    /// would reset the connection and could destroy the 413 before the client reads it.
    private static func refuseGrowingBody(_ exchange: Exchange, _ watched: WatchedConnection, _ context: Context) {
        exchange.refused = true
        exchange.body = []
        let message = "request body is larger than \(context.limits.maxBodyBytes) bytes\n"
        let answer = Array("HTTP/1.1 413 Content Too Large\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(message.utf8.count)\r\n\r\n\(message)".utf8)
        _ = answer.withUnsafeBytes { send(watched.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        shutdown(watched.fd, Int32(SHUT_WR))
        context.watch.setDeadline(watched, after: .seconds(2))
    }

    private static func tooLarge(_ context: Context) -> HTTPResponse {
        .text(413, "request body is larger than \(context.limits.maxBodyBytes) bytes", headers: [("Connection", "close")])
    }

    /// The last call of a request: answer now (fast) or start the handler and suspend.
    private static func begin(_ exchange: Exchange, _ head: RequestHead, _ watched: WatchedConnection, path: String,
                              _ connection: OpaquePointer, _ context: Context) -> MHD_Result {
        context.watch.setDeadline(watched, after: nil)
        // The head holds the headers already (read once, in `head`), and a target without
        // `?` has no arguments: libmicrohttpd is asked again only for a query.
        let query = exchange.target.utf8.contains(UInt8(ascii: "?")) ? arguments(connection) : [:]
        let request = HTTPRequest(method: head.method, path: path, query: query, headers: lookup(head), body: exchange.body)
        exchange.body = []
        if let fast = context.fast, let response = fast(request) { return queue(response, on: connection, context) }
        if context.stopping.load(ordering: .acquiring) {
            return queue(.text(503, "the server is stopping", headers: [("Retry-After", "5"), ("Connection", "close")]), on: connection, context)
        }
        exchange.started = true
        context.inFlight.add(1, ordering: .relaxed)
        context.running.withLock { $0[ObjectIdentifier(exchange)] = exchange }
        let handler = context.handler
        let work = Task {
            let response = await handler(request)
            exchange.complete(response)
        }
        let timeout = context.limits.handlerTimeout
        exchange.setTimer(Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            exchange.complete(.text(503, "request took longer than \(timeout.components.seconds) s", headers: [("Retry-After", "5")]))
            work.cancel()
        })
        context.watch.watchHangup(watched) {
            work.cancel()
            exchange.complete(.text(499, "the client went away", headers: [("Connection", "close")]))
        }
        return deliverOrSuspend(exchange, watched, connection, context)
    }

    /// Queues the answer if the handler has given it, or suspends the connection until it does.
    private static func deliverOrSuspend(_ exchange: Exchange, _ watched: WatchedConnection, _ connection: OpaquePointer,
                                         _ context: Context) -> MHD_Result {
        guard exchange.suspendUntilAnswered(), let answer = exchange.takeAnswer() else { return MHDConstants.yes }
        context.watch.watchHangup(watched, nil)
        context.running.withLock { $0[ObjectIdentifier(exchange)] = nil }
        defer { context.inFlight.subtract(1, ordering: .releasing) }
        return queue(answer, on: connection, context)
    }

    private static func queue(_ response: HTTPResponse, on connection: OpaquePointer, _ context: Context) -> MHD_Result {
        let made: OpaquePointer?
        var stream: ResponseStream?
        var response = response
        if let producer = response.stream {
            // An event stream ends its connection: clients open a new one to listen again,
            // and a stopping server is not kept waiting by an idle keep-alive.
            response.headers.append(("Connection", "close"))
            let s = ResponseStream()
            // Resumed only while suspended, and closed (never resumed again) by the free
            // callback below, before libmicrohttpd lets the connection go.
            nonisolated(unsafe) let suspended = connection
            s.attach(suspend: { MHD_suspend_connection(suspended) }, resume: { tk_mhd_resume(suspended) })
            stream = s
            made = streamed(s, producer, context)
        } else {
            made = body(response.body)
        }
        guard let made else { return MHDConstants.no }
        for (name, value) in response.headers { _ = MHD_add_response_header(made, name, value) }
        let result = MHD_queue_response(connection, UInt32(response.status), made)
        MHD_destroy_response(made)
        if let stream, result == MHDConstants.yes, let watched = watched(connection) {
            context.watch.watchHangup(watched) { stream.close() }
        }
        return result
    }

    /// A response that libmicrohttpd sends from the body's own bytes, without copying them (a
    /// cached tile's bytes are shared with the cache): the box keeps the array alive, never
    /// mutated, so its storage stays where it is, until libmicrohttpd frees the response.
    private static func body(_ bytes: [UInt8]) -> OpaquePointer? {
        guard !bytes.isEmpty else { return MHD_create_response_from_buffer(0, nil, MHDConstants.mustCopy) }
        let box = BodyBox(bytes)
        let start = box.bytes.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
        let retained = Unmanaged.passRetained(box).toOpaque()
        let made = MHD_create_response_from_buffer_with_free_callback_cls(box.bytes.count, start, { cls in
            if let cls { Unmanaged<BodyBox>.fromOpaque(cls).release() }
        }, retained)
        if made == nil { Unmanaged<BodyBox>.fromOpaque(retained).release() }
        return made
    }

    /// A response whose body libmicrohttpd pulls from a `ResponseStream` that a task fills.
    private static func streamed(_ stream: ResponseStream, _ producer: @escaping @Sendable (ResponseStream) async -> Void,
                                 _ context: Context) -> OpaquePointer? {
        context.watch.streams.withLock { $0[ObjectIdentifier(stream)] = stream }
        if context.stopping.load(ordering: .acquiring) { stream.close() }
        Task {
            await producer(stream)
            stream.finish()
        }
        let box = StreamBox(stream: stream, watch: context.watch)
        return MHD_create_response_from_callback(UInt64.max, 4096, { cls, _, buffer, max in
            guard let cls, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
            let box = Unmanaged<StreamBox>.fromOpaque(cls).takeUnretainedValue()
            guard let count = box.stream.pull(into: UnsafeMutableRawPointer(buffer), max: max) else { return -1 }  // END_OF_STREAM
            return count
        }, Unmanaged.passRetained(box).toOpaque(), { cls in
            guard let cls else { return }
            let box = Unmanaged<StreamBox>.fromOpaque(cls).takeRetainedValue()
            box.stream.close()
            _ = box.watch.streams.withLock { $0.removeValue(forKey: ObjectIdentifier(box.stream)) }
        })
    }

    final class StreamBox: Sendable {
        let stream: ResponseStream
        let watch: ConnectionWatch
        init(stream: ResponseStream, watch: ConnectionWatch) {
            self.stream = stream
            self.watch = watch
        }
    }

    private static let completed: MHD_RequestCompletedCallback = { cls, connection, state, _ in
        if let cls, let connection, let watched = watched(connection) {
            let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
            context.watch.watchHangup(watched, nil)
            context.watch.setDeadline(watched, after: context.limits.headerTimeout)  // keep-alive: the next request
        }
        guard let state, let pointer = state.pointee else { return }
        Unmanaged<Exchange>.fromOpaque(pointer).release()
        state.pointee = nil
    }

    /// Every header in order, duplicates kept (libmicrohttpd keeps them in a list).
    private static func headerList(_ connection: OpaquePointer) -> [(name: String, value: String)] {
        final class Collector { var headers = [(name: String, value: String)]() }
        let collector = Collector()
        _ = MHD_get_connection_values(connection, MHDConstants.headers, { cls, _, key, value in
            guard let cls, let key else { return MHDConstants.yes }
            let collector = Unmanaged<Collector>.fromOpaque(cls).takeUnretainedValue()
            collector.headers.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
            return MHDConstants.yes
        }, Unmanaged.passUnretained(collector).toOpaque())
        return collector.headers
    }

    /// The head's headers by lowercased name, the last of a repeated one winning.
    private static func lookup(_ head: RequestHead) -> [String: String] {
        var headers = [String: String](minimumCapacity: head.headers.count)
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        return headers
    }

    /// The query arguments of the request. They arrive still encoded (the
    /// shim keeps them so) and are decoded here, `+` as a space.
    private static func arguments(_ connection: OpaquePointer) -> [String: String] {
        final class Collector { var values = [String: String]() }
        let collector = Collector()
        let pointer = Unmanaged.passUnretained(collector).toOpaque()
        _ = MHD_get_connection_values(connection, MHDConstants.arguments, { cls, _, key, value in
            guard let cls, let key else { return MHDConstants.yes }
            let collector = Unmanaged<Collector>.fromOpaque(cls).takeUnretainedValue()
            let name = String(cString: key), text = value.map { String(cString: $0) } ?? ""
            collector.values[name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name] =
                text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text
            return MHDConstants.yes
        }, pointer)
        return collector.values
    }
}

/// One request on one connection, from its request line to its answer. `head`, `watched`,
/// A response body held for libmicrohttpd (see `HTTPServer.body`).
final class BodyBox: Sendable {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// `body`, `started` and `refused` are touched only on libmicrohttpd's thread for this connection (the
/// calls of `access` never overlap); the answer and the suspension are behind `state`.
final class Exchange: @unchecked Sendable {  // see above: thread-confined fields, the rest behind `state`
    nonisolated(unsafe) let connection: OpaquePointer
    /// The request target as it came, query included.
    let target: String
    /// Set by the first call of `access`, when the head is complete and accepted.
    var head: RequestHead?
    var watched: WatchedConnection?
    var body = [UInt8]()
    var started = false
    /// Its body grew past the limit and a 413 was written: the rest is dropped.
    var refused = false

    private enum Phase { case waiting, suspended, answered(HTTPResponse), delivered }
    private struct State {
        var phase = Phase.waiting
        /// The handler's time limit, cancelled by the answer.
        var timer: Task<Void, Never>?
    }
    private let state = Mutex(State())

    private let count: ExchangeCount

    init(connection: OpaquePointer, target: String, count: ExchangeCount) {
        self.connection = connection
        self.target = target
        self.count = count
        count.value.add(1, ordering: .relaxed)
    }

    deinit { count.value.subtract(1, ordering: .releasing) }

    /// Gives the answer (the first one wins) and resumes the connection if it waits.
    func complete(_ response: HTTPResponse) {
        let (resume, timer) = state.withLock { s -> (Bool?, Task<Void, Never>?) in
            let resume: Bool
            switch s.phase {
            case .waiting: resume = false
            case .suspended: resume = true
            case .answered, .delivered: return (nil, nil)
            }
            s.phase = .answered(response)
            defer { s.timer = nil }
            return (resume, s.timer)
        }
        timer?.cancel()
        if resume == true { tk_mhd_resume(connection) }
    }

    func setTimer(_ timer: Task<Void, Never>) {
        let answered = state.withLock { s -> Bool in
            guard case .waiting = s.phase else { return true }
            s.timer = timer
            return false
        }
        if answered { timer.cancel() }
    }

    /// Suspends the connection unless the answer is already there; true when it is.
    func suspendUntilAnswered() -> Bool {
        state.withLock { s in
            guard case .waiting = s.phase else { return true }
            MHD_suspend_connection(connection)
            s.phase = .suspended
            return false
        }
    }

    /// The answer, once.
    func takeAnswer() -> HTTPResponse? {
        state.withLock { s in
            guard case .answered(let response) = s.phase else { return nil }
            s.phase = .delivered
            return response
        }
    }
}

final class ExchangeCount: Sendable {
    let value = Atomic<Int>(0)
}

/// libmicrohttpd's closed C enums, which Swift imports without their constant names.
enum MHDConstants {
    static let no = MHD_Result(rawValue: 0)!
    static let yes = MHD_Result(rawValue: 1)!
    static let headers = MHD_ValueKind(rawValue: 1)!  // MHD_HEADER_KIND
    static let arguments = MHD_ValueKind(rawValue: 8)!  // MHD_GET_ARGUMENT_KIND
    static let mustCopy = MHD_ResponseMemoryMode(rawValue: 2)!  // MHD_RESPMEM_MUST_COPY
}
