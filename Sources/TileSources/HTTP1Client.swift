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
/// over HTTP one range at a time. What this client does not do goes through URLSession:
/// `https://`, credentials in the URL, methods other than GET, and every request when a
/// proxy is set in the environment; a redirect to such a URL is handed over to it.
///
/// Each exchange runs its blocking socket calls on a thread of its own (never on Swift's
/// cooperative pool, nor on Dispatch's: see `UpstreamSession.startPlain`), at most
/// `maxWorkers` at once, and ends by its deadline: connecting, sending and every wait for
/// bytes are bounded by what is left of it, and past it (or on cancellation) the caller is
/// answered at once while the socket in use is shut (see `PlainExchange`). Resolving a
/// name has no timeout in glibc: a worker stuck there holds its thread, not its caller.
final class HTTP1Client: Sendable {
    struct Endpoint: Hashable, Sendable {
        let host: String
        let port: Int
    }

    private struct IdleConnection {
        let socket: Int32
        let endpoint: Endpoint
        let since: ContinuousClock.Instant
    }

    /// Idle connections kept, per host and in all, and (`idleLifetime`, 15 s by default) for
    /// how long: servers close theirs after 5 s (Apache, Node) to 75 s (nginx); one closed
    /// meanwhile is found before it is used or, in a race, the request is sent again on a
    /// new connection.
    static let maxIdlePerEndpoint = 8
    static let maxIdle = 64
    let idleLifetime: Duration
    /// Redirects followed from one http:// URL to another.
    static let maxRedirects = 20
    /// Exchanges running at once in the process (each a thread and a socket): callers
    /// that give up (a deadline, a cancellation) free their gate's slot before the worker
    /// ends, so the gates alone do not bound them.
    static let maxWorkers = 256
    private static let workers = Atomic<Int>(0)

    private static let threads = BlockingThreads(name: "tilekit-upstream")

    /// Runs `body` on a thread of its own (one kept from an earlier exchange, or a new one),
    /// counted against `maxWorkers`; false (and nothing run) when that many are running
    /// already.
    static func startWorker(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard workers.add(1, ordering: .relaxed).newValue <= maxWorkers else {
            workers.subtract(1, ordering: .relaxed)
            return false
        }
        threads.run {
            defer { workers.subtract(1, ordering: .relaxed) }
            body()
        }
        return true
    }

    /// Idle connections, the most recently used last.
    private let idle = Mutex<[IdleConnection]>([])

    init(idleLifetime: Duration = .seconds(15)) {
        self.idleLifetime = idleLifetime
    }

    deinit { closeIdleConnections() }

    /// Whether this client can make the request: a GET without a body to a plain http URL
    /// with a host and a valid port, no credentials, and no proxy configured.
    static func handles(_ request: URLRequest) -> Bool {
        guard let url = request.url, (request.httpMethod ?? "GET") == "GET", request.httpBody == nil else { return false }
        return handles(url)
    }

    static func handles(_ url: URL) -> Bool {
        guard !proxied, url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty,
              !host.contains("%"), url.user == nil, url.password == nil else { return false }
        return url.port.map { (1...65_535).contains($0) } ?? true
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
            return idle.map(\.socket)
        }
        for socket in sockets { close(socket) }
    }

    /// How an exchange ended: an answer, or a redirect to a URL for URLSession.
    enum Outcome {
        case answer(UpstreamSession.Answer)
        case handOff(URL)
    }

    /// One GET and its whole answer, following http redirects. Blocks the calling thread;
    /// `exchange` is the registration through which a deadline or a cancellation shuts the
    /// socket in use.
    func get(_ request: URLRequest, deadline: ContinuousClock.Instant, maxBytes: Int, exchange: PlainExchange) -> Outcome {
        guard var url = request.url else { return .answer(.failed("no URL")) }
        for _ in 0...Self.maxRedirects {
            let answer = getOnce(url, headers: request.allHTTPHeaderFields ?? [:], deadline: deadline, maxBytes: maxBytes, exchange: exchange)
            guard case .response(let response, _) = answer, [301, 302, 303, 307, 308].contains(response.statusCode),
                  let location = response.value(forHTTPHeaderField: "Location"),
                  let next = URL(string: location, relativeTo: url)?.absoluteURL, next.scheme != nil else { return .answer(answer) }
            guard Self.handles(next) else { return .handOff(next) }
            url = next
        }
        return .answer(.failed("more than \(Self.maxRedirects) redirects from \(request.url?.absoluteString ?? "")"))
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
        // URLRequest drops header values with line breaks, which would start headers of their own.
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) where name.lowercased() != "host" {
            head += "\(name): \(value)\r\n"
        }
        if !headers.keys.contains(where: { $0.lowercased() == "accept" }) { head += "Accept: */*\r\n" }
        if !headers.keys.contains(where: { $0.lowercased() == "accept-encoding" }) { head += "Accept-Encoding: gzip, deflate\r\n" }
        head += "\r\n"
        let requestBytes = Array(head.utf8)

        // A kept-alive connection first; if it turns out closed before any byte of the
        // answer, once more on a new one (a GET can be sent again).
        for attempt in 0..<2 {
            guard !exchange.isEnded else { return .failed("cancelled") }
            let reused = attempt == 0 ? takeIdle(endpoint) : nil
            let socket: Int32
            if let reused {
                guard exchange.use(reused) else {
                    close(reused)
                    return .failed("cancelled")
                }
                socket = reused
            } else {
                switch connectTo(endpoint, deadline: deadline, exchange: exchange) {
                case .success(let connected): socket = connected
                case .failure(let failure): return failure.answer
                }
            }
            let result = send(requestBytes, on: socket, deadline: deadline)
                .flatMap { receive(on: socket, deadline: deadline, maxBytes: maxBytes) }
            // Released before it is closed or pooled: from here a late deadline or
            // cancellation cannot reach this descriptor, whatever number it gets next.
            exchange.release(socket)
            switch result {
            case .success(let response):
                if response.keepsConnection, !exchange.isEnded { putIdle(socket, endpoint) } else { close(socket) }
                return answer(response, url: url, maxBytes: maxBytes)
            case .failure(let failure):
                close(socket)
                if reused != nil, case .closedBeforeAnswer = failure, !exchange.isEnded { continue }
                return failure.answer
            }
        }
        return .failed("the connection to \(endpoint.host) closed before an answer")
    }

    private func answer(_ response: HTTP1Response, url: URL, maxBytes: Int) -> UpstreamSession.Answer {
        var body = response.body
        if let encoding = response.header("Content-Encoding")?.lowercased().trimmingCharacters(in: .whitespaces),
           !body.isEmpty, !encoding.isEmpty, encoding != "identity" {
            // gzip or a zlib stream (what "deflate" means in practice), as URLSession inflates them.
            guard ["gzip", "x-gzip", "deflate"].contains(encoding) else { return .failed("Content-Encoding \(encoding) is not supported") }
            do {
                body = try Gzip.decompress(body, limit: maxBytes)
            } catch {
                if error.reason.hasPrefix("output larger") { return .bodyTooLarge }
                return .failed("the \(encoding) body does not inflate: \(error)")
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
        while let connection = idle.withLock({ idle -> IdleConnection? in
            guard let index = idle.lastIndex(where: { $0.endpoint == endpoint }) else { return nil }
            return idle.remove(at: index)
        }) {
            // Too old, or readable while idle (the server closed it, or sent what it should not).
            var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
            if ContinuousClock.now - connection.since < idleLifetime, poll(&descriptor, 1, 0) == 0 {
                return connection.socket
            }
            close(connection.socket)
        }
        return nil
    }

    /// Keeps a connection for the next request to its host, dropping the expired ones and,
    /// past the limits, the oldest.
    private func putIdle(_ socket: Int32, _ endpoint: Endpoint) {
        let now = ContinuousClock.now
        let closing = idle.withLock { idle -> [Int32] in
            var closing = [Int32]()
            idle.removeAll { connection in
                guard now - connection.since >= idleLifetime else { return false }
                closing.append(connection.socket)
                return true
            }
            if idle.count(where: { $0.endpoint == endpoint }) >= Self.maxIdlePerEndpoint,
               let oldest = idle.firstIndex(where: { $0.endpoint == endpoint }) {
                closing.append(idle.remove(at: oldest).socket)
            }
            if idle.count >= Self.maxIdle { closing.append(idle.removeFirst().socket) }
            idle.append(IdleConnection(socket: socket, endpoint: endpoint, since: now))
            return closing
        }
        for socket in closing { close(socket) }
    }

    /// A non-blocking TCP connection to the first address that answers before the deadline;
    /// each address but the last gets half the time left, so an unreachable IPv6 address
    /// leaves time for the IPv4 one. The socket is registered with the exchange before it
    /// connects, so a deadline or cancellation ends the wait.
    private func connectTo(_ endpoint: Endpoint, deadline: ContinuousClock.Instant, exchange: PlainExchange) -> Result<Int32, Failure> {
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
            let attemptDeadline = address == nil ? deadline : ContinuousClock.now + (deadline - .now) / 2
            let socket = Glibc.socket(current.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard socket >= 0 else { lastError = String(cString: strerror(errno)); continue }
            guard exchange.use(socket) else {
                close(socket)
                return .failure(.network("cancelled"))
            }
            var one: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(socket, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return .success(socket) }
            var failure: Failure?
            if errno != EINPROGRESS {
                failure = .network(String(cString: strerror(errno)))
            } else if case .failure(let waited) = wait(socket, for: Int16(POLLOUT), deadline: attemptDeadline) {
                failure = waited
            } else {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
                if error == 0 { return .success(socket) }
                failure = .network(String(cString: strerror(error)))
            }
            exchange.release(socket)
            close(socket)
            if case .deadline = failure, address == nil || ContinuousClock.now >= deadline { return .failure(.deadline) }
            if case .network(let reason) = failure { lastError = reason }
            if exchange.isEnded { return .failure(.network("cancelled")) }
        }
        return .failure(.network("\(endpoint.host):\(endpoint.port): \(lastError)"))
    }

    /// Waits until the socket is ready for `events`, at most until the deadline.
    private func wait(_ socket: Int32, for events: Int16, deadline: ContinuousClock.Instant) -> Result<Void, Failure> {
        while true {
            let left = deadline - .now
            guard left > .zero else { return .failure(.deadline) }
            // Whole milliseconds, rounded up, at most a day at a time (a deadline a year away
            // must not overflow poll's Int32).
            let milliseconds = Int32(min(86_400_000, (left / .milliseconds(1)).rounded(.up)))
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, max(1, milliseconds))
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
            // Checked while bytes keep coming too: an upstream that streams forever within
            // the body limit is still cut at the deadline.
            guard ContinuousClock.now < deadline else { return .failure(.deadline) }
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
/// in use (under the lock, so never a descriptor the worker has released and closed), so
/// the worker's wait on it ends at once. Holds no answer once it is given: a timer that
/// outlives the exchange holds nothing of its body.
final class PlainExchange: Sendable {
    private struct State {
        var socket: Int32?
        var finish: (@Sendable (UpstreamSession.Answer) -> Void)?
        var ended = false
        /// An answer that came before `start` (a cancellation): given to `start`.
        var early: UpstreamSession.Answer?
    }
    private let state = Mutex(State())

    var isEnded: Bool { state.withLock { $0.ended } }

    /// Sets who gets the answer; called at once if the exchange has already ended.
    func start(_ finish: @escaping @Sendable (UpstreamSession.Answer) -> Void) {
        let early = state.withLock { state -> UpstreamSession.Answer? in
            if !state.ended { state.finish = finish }
            defer { state.early = nil }
            return state.early
        }
        if let early { finish(early) }
    }

    /// Registers the socket the worker is about to use; false when the exchange has ended.
    func use(_ socket: Int32) -> Bool {
        state.withLock { state in
            guard !state.ended else { return false }
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
        let finish = state.withLock { state -> (@Sendable (UpstreamSession.Answer) -> Void)? in
            guard !state.ended else { return nil }
            state.ended = true
            if !byWorker, let socket = state.socket { shutdown(socket, Int32(SHUT_RDWR)) }
            defer { state.finish = nil }
            if state.finish == nil { state.early = answer }
            return state.finish
        }
        finish?(answer)
    }
}
