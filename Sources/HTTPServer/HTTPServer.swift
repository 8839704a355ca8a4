import Foundation
import Dispatch
import Synchronization
import CMicroHTTPD
import CMicroHTTPDShim

/// A request as the handler sees it. `path` is still percent-encoded (it is parsed, never
/// decoded onto a file system); query values are decoded.
public struct HTTPRequest: Sendable {
    public var method: String
    public var path: String
    public var query: [String: String]
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// A body produced over time (server-sent events): written chunk by chunk while the
    /// client listens; `body` is ignored then.
    public var stream: (@Sendable (ResponseStream) async -> Void)?

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A streamed response: `producer` writes the body while the client listens.
    public init(status: Int, headers: [(String, String)] = [], stream producer: @escaping @Sendable (ResponseStream) async -> Void) {
        self.status = status
        self.headers = headers
        self.body = []
        self.stream = producer
    }

    /// A plain-text answer: errors say what was wrong.
    public static func text(_ status: Int, _ message: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers, body: Array((message + "\n").utf8))
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

public enum HTTPServerError: Error, CustomStringConvertible {
    case cannotStart(host: String, port: Int)
    case badHost(String)

    public var description: String {
        switch self {
        case .cannotStart(let host, let port): return "cannot listen on \(host):\(port) (in use, or not an address of this machine)"
        case .badHost(let host): return "host \"\(host)\" is not an IPv4 address (such as 127.0.0.1 or 0.0.0.0)"
        }
    }
}

/// Where a streamed body is written. Chunks wait here until libmicrohttpd's thread takes
/// them; `isClosed` turns true when the client has gone or the server stops.
public final class ResponseStream: @unchecked Sendable {  // all state behind `lock`
    private let lock = NSCondition()
    private var chunks = [UInt8]()
    private var finished = false
    private var closed = false
    weak var owner: HTTPServer.Context?

    public func write(_ text: String) { write(Array(text.utf8)) }

    public func write(_ bytes: [UInt8]) {
        lock.lock()
        if !closed { chunks += bytes }
        lock.signal()
        lock.unlock()
    }

    public var isClosed: Bool {
        lock.lock(); defer { lock.unlock() }
        return closed
    }

    func finish() {
        lock.lock(); finished = true; lock.signal(); lock.unlock()
    }

    func close() {
        lock.lock(); closed = true; lock.signal(); lock.unlock()
    }

    /// Up to `max` bytes; waits up to `wait` for some. Empty and true at the end.
    func take(max: Int, wait: TimeInterval) -> ([UInt8], Bool) {
        lock.lock(); defer { lock.unlock() }
        if chunks.isEmpty && !finished && !closed { _ = lock.wait(until: Date(timeIntervalSinceNow: wait)) }
        if chunks.isEmpty { return ([], finished || closed) }
        let n = min(max, chunks.count)
        let out = Array(chunks.prefix(n))
        chunks.removeFirst(n)
        return (out, false)
    }
}

/// HTTP/1.1 with keep-alive on libmicrohttpd: an epoll loop and a pool of threads, each
/// calling the handler for the requests of its connections.
///
/// A `fast` handler may answer on the calling thread (a memory-cache hit); anything else
/// runs as a task while the connection's thread waits, up to `timeout`. Answers are given
/// on the handler's second call, never the first: libmicrohttpd treats a response queued
/// before the request was read as early and closes the connection, which costs keep-alive.
public final class HTTPServer: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse
    public typealias FastHandler = @Sendable (HTTPRequest) -> HTTPResponse?

    final class Context: Sendable {
        let handler: Handler
        let fast: FastHandler?
        let maxBodyBytes: Int
        let timeout: Duration
        let inFlight = Atomic<Int>(0)
        /// Streams being sent, closed when the server stops.
        let streams = Mutex<[ObjectIdentifier: ResponseStream]>([:])
        init(handler: @escaping Handler, fast: FastHandler?, maxBodyBytes: Int, timeout: Duration) {
            self.handler = handler
            self.fast = fast
            self.maxBodyBytes = maxBodyBytes
            self.timeout = timeout
        }
    }

    /// What a connection collects across the handler's calls: the body as it arrives.
    final class Pending {
        var body = [UInt8]()
        var tooLarge = false
    }

    nonisolated(unsafe) private let daemon: OpaquePointer
    private let context: Context
    nonisolated(unsafe) private let contextPointer: UnsafeMutableRawPointer
    public let port: Int
    public let host: String
    private let stopped = Atomic<Bool>(false)

    /// Starts listening. `host` nil listens on every interface; port 0 lets the system pick.
    public init(host: String?, port: Int, threads: Int = 8, maxBodyBytes: Int = 1 << 20, timeout: Duration = .seconds(30),
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
        context = Context(handler: handler, fast: fast, maxBodyBytes: maxBodyBytes, timeout: timeout)
        contextPointer = Unmanaged.passRetained(context).toOpaque()
        guard (0...65535).contains(port),
              let started = tk_mhd_start(address, UInt16(port), UInt32(max(1, threads)), HTTPServer.access, contextPointer,
                                         HTTPServer.completed, nil) else {
            Unmanaged<Context>.fromOpaque(contextPointer).release()
            throw .cannotStart(host: host ?? "0.0.0.0", port: port)
        }
        daemon = started
        self.port = Int(tk_mhd_port(started))
        self.host = address ?? "0.0.0.0"
    }

    /// Stops accepting, lets requests in flight finish (up to `grace`), then closes.
    public func stop(grace: Duration = .seconds(10)) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let listener = MHD_quiesce_daemon(daemon)
        if listener >= 0 { close(listener) }
        // Streams end, so their pulls return and the threads can be joined.
        for stream in context.streams.withLock({ Array($0.values) }) { stream.close() }
        let deadline = ContinuousClock.now + grace
        while context.inFlight.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
            usleep(10_000)
        }
        MHD_stop_daemon(daemon)
        Unmanaged<Context>.fromOpaque(contextPointer).release()
    }

    deinit { stop() }

    private static let access: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, state in
        guard let cls, let connection, let state, let uploadSize else { return MHDConstants.no }
        let context = Unmanaged<Context>.fromOpaque(cls).takeUnretainedValue()
        // First call: headers only. Remember the connection's request and wait for more.
        guard let existing = state.pointee else {
            state.pointee = Unmanaged.passRetained(Pending()).toOpaque()
            return MHDConstants.yes
        }
        let pending = Unmanaged<Pending>.fromOpaque(existing).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            if let uploadData, !pending.tooLarge {
                if pending.body.count + uploadSize.pointee > context.maxBodyBytes {
                    pending.tooLarge = true
                    pending.body = []
                } else {
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) {
                        pending.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return MHDConstants.yes
        }
        let response: HTTPResponse
        if pending.tooLarge {
            response = .text(413, "request body is larger than \(context.maxBodyBytes) bytes")
        } else {
            let request = HTTPRequest(method: method.map { String(cString: $0) } ?? "GET", path: url.map { String(cString: $0) } ?? "/",
                                      query: values(connection, MHDConstants.arguments, decode: true),
                                      headers: values(connection, MHDConstants.headers, decode: false), body: pending.body)
            response = answer(request, context)
        }
        return queue(response, on: connection, context)
    }

    private static func answer(_ request: HTTPRequest, _ context: Context) -> HTTPResponse {
        context.inFlight.add(1, ordering: .relaxed)
        defer { context.inFlight.subtract(1, ordering: .releasing) }
        if let fast = context.fast, let response = fast(request) { return response }
        let box = ResponseBox()
        let done = DispatchSemaphore(value: 0)
        let handler = context.handler
        Task {
            box.set(await handler(request))
            done.signal()
        }
        let seconds = Double(context.timeout.components.seconds) + Double(context.timeout.components.attoseconds) / 1e18
        if done.wait(timeout: .now() + seconds) == .timedOut {
            return .text(503, "request took longer than \(Int(seconds)) s", headers: [("Retry-After", "5")])
        }
        return box.get() ?? .text(500, "no response")
    }

    final class ResponseBox: @unchecked Sendable {
        private let lock = NSLock()
        private var value: HTTPResponse?
        func set(_ v: HTTPResponse) { lock.lock(); value = v; lock.unlock() }
        func get() -> HTTPResponse? { lock.lock(); defer { lock.unlock() }; return value }
    }

    private static func queue(_ response: HTTPResponse, on connection: OpaquePointer, _ context: Context) -> MHD_Result {
        let made: OpaquePointer?
        if let producer = response.stream {
            made = streamed(producer, context)
        } else {
            made = response.body.withUnsafeBytes { raw in
                MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), MHDConstants.mustCopy)
            }
        }
        guard let made else { return MHDConstants.no }
        for (name, value) in response.headers { _ = MHD_add_response_header(made, name, value) }
        let result = MHD_queue_response(connection, UInt32(response.status), made)
        MHD_destroy_response(made)
        return result
    }

    /// A response whose body libmicrohttpd pulls from a `ResponseStream` that a task fills.
    /// The pull waits in slices of 0.25 s, sending an SSE comment after 10 s of silence
    /// (proxies drop quiet connections) and ending when the stream is closed.
    private static func streamed(_ producer: @escaping @Sendable (ResponseStream) async -> Void, _ context: Context) -> OpaquePointer? {
        let stream = ResponseStream()
        stream.owner = context
        context.streams.withLock { $0[ObjectIdentifier(stream)] = stream }
        Task {
            await producer(stream)
            stream.finish()
        }
        let context = Unmanaged.passRetained(stream).toOpaque()
        return MHD_create_response_from_callback(UInt64.max, 4096, { cls, _, buffer, max in
            guard let cls, let buffer else { return -1 }
            let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeUnretainedValue()
            var quiet = 0.0
            while true {
                let (bytes, ended) = stream.take(max: max, wait: 0.25)
                if !bytes.isEmpty {
                    bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                    return bytes.count
                }
                if ended { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
                quiet += 0.25
                if quiet >= 10 {
                    let ping = Array(": ping\n\n".utf8)
                    ping.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: ping.count) }
                    return ping.count
                }
            }
        }, context, { cls in
            guard let cls else { return }
            let stream = Unmanaged<ResponseStream>.fromOpaque(cls).takeRetainedValue()
            stream.close()
            _ = stream.owner?.streams.withLock { $0.removeValue(forKey: ObjectIdentifier(stream)) }
        })
    }

    private static let completed: MHD_RequestCompletedCallback = { _, _, state, _ in
        guard let state, let pointer = state.pointee else { return }
        Unmanaged<Pending>.fromOpaque(pointer).release()
        state.pointee = nil
    }

    /// Headers or query arguments of the request. Query values arrive still encoded (the
    /// shim keeps them so) and are decoded here, `+` as a space.
    private static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, decode: Bool) -> [String: String] {
        final class Collector { var values = [String: String](); var decode = false }
        let collector = Collector()
        collector.decode = decode
        let pointer = Unmanaged.passUnretained(collector).toOpaque()
        _ = MHD_get_connection_values(connection, kind, { cls, _, key, value in
            guard let cls, let key else { return MHDConstants.yes }
            let collector = Unmanaged<Collector>.fromOpaque(cls).takeUnretainedValue()
            var name = String(cString: key), text = value.map { String(cString: $0) } ?? ""
            if collector.decode {
                name = name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name
                text = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text
            } else {
                name = name.lowercased()
            }
            collector.values[name] = text
            return MHDConstants.yes
        }, pointer)
        return collector.values
    }
}

/// libmicrohttpd's closed C enums, which Swift imports without their constant names.
enum MHDConstants {
    static let no = MHD_Result(rawValue: 0)!
    static let yes = MHD_Result(rawValue: 1)!
    static let headers = MHD_ValueKind(rawValue: 1)!  // MHD_HEADER_KIND
    static let arguments = MHD_ValueKind(rawValue: 8)!  // MHD_GET_ARGUMENT_KIND
    static let mustCopy = MHD_ResponseMemoryMode(rawValue: 2)!  // MHD_RESPMEM_MUST_COPY
}
