import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Compression

/// GETs over plain TCP for `http://` upstreams, with kept-alive connections per host.
///
/// Why not URLSession: FoundationNetworking drives libcurl through several Dispatch queues,
/// about 0.3 ms of CPU a request on this machine, where a tile's whole exchange on loopback
/// costs a tenth of it. A snapshot waits for a dozen tiles two at a time, and PMTiles read
/// over HTTP one range at a time. `https://` URLs, and every request when a proxy is set in
/// the environment, still go through URLSession.
///
/// Each exchange runs its blocking socket calls on a thread of its own (never on Swift's
/// cooperative pool, nor on Dispatch's: see `UpstreamSession.startPlain`) and ends by its deadline: connecting, sending and every wait for bytes
/// are bounded by what is left of it, and past it the caller is answered at once (see
/// `PlainExchange`) while the socket is shut.
final class HTTP1Client: Sendable {
    struct Endpoint: Hashable, Sendable {
        let host: String
        let port: Int
    }

    private struct IdleConnection {
        let socket: Int32
        let since: ContinuousClock.Instant
    }

    /// Idle connections kept per host, and how long one is kept: servers close theirs after
    /// 5 s (Apache, Node) to 75 s (nginx); one closed meanwhile is found before it is used
    /// or, in a race, the request is sent again on a new connection.
    static let maxIdlePerEndpoint = 8
    static let idleLifetime = Duration.seconds(15)
    /// Redirects followed from one http:// URL to another (URLSession's behaviour too).
    static let maxRedirects = 5

    private let idle = Mutex<[Endpoint: [IdleConnection]]>([:])

    deinit { closeIdleConnections() }

    /// Whether this client handles the URL: plain http, with no proxy configured.
    static func handles(_ url: URL) -> Bool {
        guard !proxied, url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else { return false }
        return true
    }

    /// Whether the environment names a proxy for http (libcurl, under URLSession, honours it).
    /// Read once: the environment was a percent of a snapshot's CPU when read per request.
    private static let proxied: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"].contains { !(environment[$0] ?? "").isEmpty }
    }()

    func closeIdleConnections() {
        let sockets = idle.withLock { idle -> [Int32] in
            defer { idle.removeAll() }
            return idle.values.flatMap { $0.map(\.socket) }
        }
        for socket in sockets { close(socket) }
    }

    /// One GET and its whole answer, following http redirects. Blocks the calling thread;
    /// `exchange` is the registration through which a deadline or a cancellation shuts the
    /// socket in use.
    func get(_ request: URLRequest, deadline: ContinuousClock.Instant, maxBytes: Int, exchange: PlainExchange) -> UpstreamSession.Answer {
        guard var url = request.url else { return .failed("no URL") }
        for _ in 0...Self.maxRedirects {
            let answer = getOnce(url, headers: request.allHTTPHeaderFields ?? [:], deadline: deadline, maxBytes: maxBytes, exchange: exchange)
            guard case .response(let response, _) = answer, [301, 302, 303, 307, 308].contains(response.statusCode),
                  let location = response.value(forHTTPHeaderField: "Location"),
                  let next = URL(string: location, relativeTo: url)?.absoluteURL, Self.handles(next) else { return answer }
            url = next
        }
        return .failed("more than \(Self.maxRedirects) redirects from \(request.url?.absoluteString ?? "")")
    }

    private func getOnce(_ url: URL, headers: [String: String], deadline: ContinuousClock.Instant, maxBytes: Int,
                         exchange: PlainExchange) -> UpstreamSession.Answer {
        guard let host = url.host, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return .failed("\(url.absoluteString) is not a URL to GET")
        }
        let endpoint = Endpoint(host: host, port: url.port ?? 80)
        var head = "GET \(components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)"
        if let query = components.percentEncodedQuery { head += "?\(query)" }
        let hostField = host.contains(":") ? "[\(host)]" : host
        head += " HTTP/1.1\r\nHost: \(hostField)\(url.port.map { ":\($0)" } ?? "")\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) where name.lowercased() != "host" {
            // A line break would start a header (or a request) of its own. URLRequest drops such
            // values; checked again because these bytes go straight to the socket.
            guard !name.contains(where: \.isNewline), !value.contains(where: \.isNewline), !name.isEmpty else {
                return .failed("the header \(name.debugDescription) has a line break")
            }
            head += "\(name): \(value)\r\n"
        }
        if headers.keys.contains(where: { $0.lowercased() == "accept" }) == false { head += "Accept: */*\r\n" }
        head += "\r\n"
        let requestBytes = Array(head.utf8)

        // A kept-alive connection first; if it turns out closed before any byte of the
        // answer, once more on a new one (a GET can be sent again).
        for attempt in 0..<2 {
            let reused = attempt == 0 ? takeIdle(endpoint) : nil
            let socket: Int32
            if let reused {
                socket = reused
            } else {
                switch connectTo(endpoint, deadline: deadline) {
                case .success(let connected): socket = connected
                case .failure(let failure): return failure.answer
                }
            }
            guard exchange.use(socket) else {
                close(socket)
                return .failed("cancelled")
            }
            let result = send(requestBytes, on: socket, deadline: deadline)
                .flatMap { receive(on: socket, deadline: deadline, maxBytes: maxBytes) }
            exchange.release(socket)
            switch result {
            case .success(let response):
                if response.keepsConnection, !exchange.isEnded { putIdle(socket, endpoint) } else { close(socket) }
                return answer(response, url: url, maxBytes: maxBytes)
            case .failure(let failure):
                close(socket)
                if reused != nil, case .closedBeforeAnswer = failure { continue }
                return failure.answer
            }
        }
        return .failed("the connection to \(endpoint.host) closed before an answer")
    }

    private func answer(_ response: HTTP1Response, url: URL, maxBytes: Int) -> UpstreamSession.Answer {
        var body = response.body
        if let encoding = response.header("Content-Encoding")?.lowercased().trimmingCharacters(in: .whitespaces),
           !encoding.isEmpty, encoding != "identity" {
            // Not asked for (no Accept-Encoding is sent), but decoded as URLSession would.
            guard encoding == "gzip" || encoding == "x-gzip" else { return .failed("Content-Encoding \(encoding) is not supported") }
            do {
                body = try Gzip.decompress(body, limit: maxBytes)
            } catch {
                return .failed("the gzip body does not inflate: \(error)")
            }
        }
        let fields = response.headers.reduce(into: [String: String]()) { $0[$1.name] = $1.value }
        guard let http = HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.\(response.minorVersion)",
                                         headerFields: fields) else { return .failed("no HTTP response") }
        return .response(http, body)
    }

    // MARK: Connections

    private enum Failure: Error {
        case deadline
        case tooLarge
        case closedBeforeAnswer
        case network(String)

        var answer: UpstreamSession.Answer {
            switch self {
            case .deadline: return .deadlineExceeded
            case .tooLarge: return .bodyTooLarge
            case .closedBeforeAnswer: return .failed("the connection closed before an answer")
            case .network(let reason): return .failed(reason)
            }
        }
    }

    private func takeIdle(_ endpoint: Endpoint) -> Int32? {
        while let connection = idle.withLock({ $0[endpoint]?.popLast() }) {
            // Too old, or readable while idle (the server closed it, or sent what it should not).
            var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
            if ContinuousClock.now - connection.since < Self.idleLifetime, poll(&descriptor, 1, 0) == 0 {
                return connection.socket
            }
            close(connection.socket)
        }
        return nil
    }

    private func putIdle(_ socket: Int32, _ endpoint: Endpoint) {
        let kept = idle.withLock { idle -> Bool in
            guard idle[endpoint, default: []].count < Self.maxIdlePerEndpoint else { return false }
            idle[endpoint, default: []].append(IdleConnection(socket: socket, since: .now))
            return true
        }
        if !kept { close(socket) }
    }

    /// A non-blocking TCP connection to the first address that answers before the deadline.
    private func connectTo(_ endpoint: Endpoint, deadline: ContinuousClock.Instant) -> Result<Int32, Failure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard status == 0, let first = list else {
            return .failure(.network("\(endpoint.host): \(String(cString: gai_strerror(status)))"))
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var address: UnsafeMutablePointer<addrinfo>? = first
        while let current = address {
            address = current.pointee.ai_next
            let socket = Glibc.socket(current.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard socket >= 0 else { lastError = String(cString: strerror(errno)); continue }
            var one: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(socket, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return .success(socket) }
            guard errno == EINPROGRESS else {
                lastError = String(cString: strerror(errno))
                close(socket)
                continue
            }
            switch wait(socket, for: Int16(POLLOUT), deadline: deadline) {
            case .failure(let failure):
                close(socket)
                if case .deadline = failure { return .failure(.deadline) }
                lastError = "\(failure)"
            case .success:
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
                if error == 0 { return .success(socket) }
                lastError = String(cString: strerror(error))
                close(socket)
            }
        }
        return .failure(.network("\(endpoint.host):\(endpoint.port): \(lastError)"))
    }

    /// Waits until the socket is ready for `events`, at most until the deadline.
    private func wait(_ socket: Int32, for events: Int16, deadline: ContinuousClock.Instant) -> Result<Void, Failure> {
        while true {
            let left = deadline - .now
            guard left > .zero else { return .failure(.deadline) }
            let milliseconds = Int32(clamping: max(1, Int(left.components.seconds) * 1000 + Int(left.components.attoseconds / 1_000_000_000_000_000)))
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 {
                // An error or hang-up is ready too: the next call on the socket says which.
                return .success(())
            }
            if ready < 0, errno != EINTR { return .failure(.network(String(cString: strerror(errno)))) }
        }
    }

    private func send(_ bytes: [UInt8], on socket: Int32, deadline: ContinuousClock.Instant) -> Result<Void, Failure> {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.send(socket, raw.baseAddress.map { $0 + sent }, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                if case .failure(let failure) = wait(socket, for: Int16(POLLOUT), deadline: deadline) { return .failure(failure) }
            } else {
                // The peer closed a kept-alive connection: nothing of the answer has come.
                return .failure(errno == EPIPE || errno == ECONNRESET ? .closedBeforeAnswer : .network(String(cString: strerror(errno))))
            }
        }
        return .success(())
    }

    private func receive(on socket: Int32, deadline: ContinuousClock.Instant, maxBytes: Int) -> Result<HTTP1Response, Failure> {
        var response = HTTP1Response(maxBodyBytes: maxBytes)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while !response.isComplete {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            do throws(HTTP1Response.Failure) {
                if count > 0 {
                    try response.consume(buffer[0..<count])
                } else if count == 0 {
                    guard response.hasStarted else { return .failure(.closedBeforeAnswer) }
                    try response.connectionClosed()
                } else if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                    if case .failure(let failure) = wait(socket, for: Int16(POLLIN), deadline: deadline) { return .failure(failure) }
                } else {
                    if errno == ECONNRESET, !response.hasStarted { return .failure(.closedBeforeAnswer) }
                    return .failure(.network(String(cString: strerror(errno))))
                }
            } catch {
                switch error {
                case .bodyTooLarge: return .failure(.tooLarge)
                case .malformed(let reason): return .failure(.network("a bad HTTP answer: \(reason)"))
                }
            }
        }
        return .success(response)
    }
}

/// One exchange of `HTTP1Client` as its caller waits for it: answered once, by the worker,
/// the deadline or a cancellation, whichever comes first; the last two also shut the socket
/// in use, so the worker's wait on it ends at once.
final class PlainExchange: Sendable {
    private struct State {
        var socket: Int32?
        var finish: (@Sendable (UpstreamSession.Answer) -> Void)?
        /// The answer, once the exchange has ended (kept for a `start` that comes after).
        var answer: UpstreamSession.Answer?
    }
    private let state = Mutex(State())

    var isEnded: Bool { state.withLock { $0.answer != nil } }

    /// Sets who gets the answer; called at once if the exchange has already ended.
    func start(_ finish: @escaping @Sendable (UpstreamSession.Answer) -> Void) {
        let early = state.withLock { state -> UpstreamSession.Answer? in
            if state.answer == nil { state.finish = finish }
            return state.answer
        }
        if let early { finish(early) }
    }

    /// Registers the socket the worker is about to use; false when the exchange has ended.
    func use(_ socket: Int32) -> Bool {
        state.withLock { state in
            guard state.answer == nil else { return false }
            state.socket = socket
            return true
        }
    }

    func release(_ socket: Int32) {
        state.withLock { if $0.socket == socket { $0.socket = nil } }
    }

    /// Answers the caller (the first call only) and, when it is not the worker's own answer,
    /// shuts the socket in use.
    func end(_ answer: UpstreamSession.Answer, byWorker: Bool = false) {
        let (finish, socket) = state.withLock { state -> ((@Sendable (UpstreamSession.Answer) -> Void)?, Int32?) in
            guard state.answer == nil else { return (nil, nil) }
            state.answer = answer
            defer { state.finish = nil }
            return (state.finish, byWorker ? nil : state.socket)
        }
        if let socket { shutdown(socket, Int32(SHUT_RDWR)) }
        finish?(answer)
    }
}
