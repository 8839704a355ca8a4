import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing
import TestSupport
import Compression
@testable import TileSources

/// `HTTP1Response` read from hostile bytes, and `HTTP1Client` (through `UpstreamSession`)
/// against a scripted server on 127.0.0.1.
@Suite struct HTTP1ClientTests {
    // MARK: The response parser

    static func parse(_ text: String, maxBody: Int = 1 << 20, split: Int? = nil, close: Bool = false) throws(HTTP1Response.Failure) -> HTTP1Response {
        var response = HTTP1Response(maxBodyBytes: maxBody)
        let bytes = Array(text.utf8)
        let step = split ?? max(1, bytes.count)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + step)
            try response.consume(bytes[start..<end])
            start = end
        }
        if close { try response.connectionClosed() }
        return response
    }

    @Test(arguments: [1, 2, 7, 1000])
    func chunkedBodiesReadInAnyPieces(split: Int) throws {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\nx-a: 2\r\n\r\n"
            + "5;name=value\r\nhello\r\nA\r\n, world!!!\r\n0\r\nTrailer: yes\r\n\r\n"
        let response = try Self.parse(text, split: split)
        #expect(response.isComplete)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello, world!!!")
        #expect(response.header("content-type") == "image/png")
        #expect(response.header("X-A") == "1, 2")
        #expect(response.keepsConnection)
    }

    @Test func framingFollowsRFC9112() throws {
        // Content-Length, leniently with bare LFs and an interim 100 first.
        let fixed = try Self.parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\nContent-Length: 3\n\nabcEXTRA")
        #expect(fixed.isComplete && fixed.body == Array("abc".utf8))
        // No length: the body runs to the close, and the connection is not kept.
        var open = try Self.parse("HTTP/1.0 200 OK\r\n\r\nuntil the end")
        #expect(!open.isComplete && !open.keepsConnection)
        try open.connectionClosed()
        #expect(open.isComplete && open.body == Array("until the end".utf8))
        // 204 and 304 have no body; HTTP/1.0 keeps the connection only when asked.
        #expect(try Self.parse("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n").isComplete)
        #expect(try Self.parse("HTTP/1.1 304 Not Modified\r\n\r\n").isComplete)
        #expect(try !Self.parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keepsConnection)
        #expect(try Self.parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").keepsConnection)
        // Transfer-Encoding wins over Content-Length, and then the connection is not reused.
        let both = try Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n")
        #expect(both.isComplete && both.body == [0x78] && !both.keepsConnection)
        #expect(try Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 7, 7\r\n\r\n1234567").isComplete)
        // Bytes past the answer: it is complete, but the connection is not reused.
        let extra = try Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\n")
        #expect(extra.isComplete && extra.body == Array("abc".utf8) && !extra.keepsConnection)
        #expect(try Self.parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3 ;x=y\r\nabc\r\n0\r\n\r\n").body == Array("abc".utf8))
    }

    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", HTTP1Response.Failure.bodyTooLarge),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nB\r\n", .bodyTooLarge),
        ("HTTP/1.0 200 OK\r\n\r\n01234567890", .bodyTooLarge),
    ])
    func bodiesPastTheLimitAreRefused(text: String, failure: HTTP1Response.Failure) {
        #expect(throws: failure) { try Self.parse(text, maxBody: 10) }
    }

    @Test(arguments: [
        "SSH-2.0-OpenSSH\r\n\r\n",
        "HTTP/2 200\r\n\r\n",
        "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 099 Low\r\n\r\n",
        "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
        "HTTP/1.1 101 Switching Protocols\r\n\r\n",
        "HTTP/1.1 200 OK\rContent-Length: 5\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nX: a\rContent-Length: 5\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 garbage\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 7,,7\r\n\r\n1234567",
    ])
    func brokenResponsesAreMalformed(text: String) {
        #expect(throws: HTTP1Response.Failure.self) { try Self.parse(text, split: 3) }
    }

    @Test func headsAndLinesAreBounded() {
        let longHead = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Pad: \(String(repeating: "a", count: 100))\r\n", count: 700) + "\r\n"
        #expect(throws: HTTP1Response.Failure.self) { try Self.parse(longHead, split: 4096) }
        let manyFields = "HTTP/1.1 200 OK\r\n" + String(repeating: "A: b\r\n", count: 300) + "\r\n"
        #expect(throws: HTTP1Response.Failure.self) { try Self.parse(manyFields) }
        let longChunkLine = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 9000)
        #expect(throws: HTTP1Response.Failure.self) { try Self.parse(longChunkLine) }
        // Cut short: within the head, or within the body.
        #expect(throws: HTTP1Response.Failure.self) { try Self.parse("HTTP/1.1 200 OK\r\nContent-", close: true) }
        #expect(throws: HTTP1Response.Failure.self) { try Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", close: true) }
    }

    // MARK: The client, against a scripted server

    /// Accepts connections on 127.0.0.1 and answers each request with what `reply` says,
    /// counting connections and requests.
    final class ScriptedServer: @unchecked Sendable {  // the listening socket is set once; counts are atomic
        enum Reply {
            case bytes([UInt8], thenClose: Bool)
            case nothing
        }
        let port: Int
        let connections = Atomic<Int>(0)
        let requests = Atomic<Int>(0)
        /// Connections the client closed while waiting for an answer that never came.
        let abandoned = Atomic<Int>(0)
        private let listener: Int32
        private let reply: @Sendable (String, Int) -> Reply

        init(reply: @escaping @Sendable (_ head: String, _ request: Int) -> Reply) throws {
            self.reply = reply
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.listener = listener
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, $0, &length) == 0 }
            }
            guard bound else { throw POSIXError(.EADDRINUSE) }
            port = Int(UInt16(bigEndian: address.sin_port))
            let thread = Thread { [self] in acceptLoop() }
            thread.start()
        }

        func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

        private func acceptLoop() {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                connections.add(1, ordering: .relaxed)
                Thread { [self] in serve(connection) }.start()
            }
        }

        private func serve(_ connection: Int32) {
            defer { close(connection) }
            var head = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                head += buffer[0..<count]
                while let end = head.firstRange(of: Array("\r\n\r\n".utf8)) {
                    let text = String(decoding: head[..<end.upperBound], as: UTF8.self)
                    head.removeSubrange(..<end.upperBound)
                    let index = requests.add(1, ordering: .relaxed).newValue
                    switch reply(text, index) {
                    case .nothing:
                        // Wait (5 s at most) for the client to give up and close.
                        var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                        if poll(&descriptor, 1, 5_000) > 0, recv(connection, &buffer, buffer.count, 0) <= 0 {
                            abandoned.add(1, ordering: .relaxed)
                        }
                        return
                    case .bytes(let bytes, let thenClose):
                        _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        if thenClose { return }
                    }
                }
            }
        }
    }

    static func ok(_ body: String, headers: String = "") -> ScriptedServer.Reply {
        .bytes(Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\(headers)\r\n\(body)".utf8), thenClose: false)
    }

    static func get(_ session: UpstreamSession, _ url: String, deadline: Duration = .seconds(2), headers: [String: String] = [:]) async -> (Int, String)? {
        var request = URLRequest(url: URL(string: url)!)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        guard case .response(let response, let body) = await session.exchange(request, deadline: deadline, maxBytes: 1 << 20) else { return nil }
        return (response.statusCode, String(decoding: body, as: UTF8.self))
    }

    @Test func connectionsAreKeptAliveAndRequestsCarryTheirHeaders() async throws {
        let server = try ScriptedServer { head, _ in
            let agent = head.split(separator: "\r\n").first { $0.hasPrefix("User-Agent: ") } ?? "none"
            return Self.ok("\(head.split(separator: " ")[1]) \(agent)")
        }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        for k in 0..<3 {
            let answer = await Self.get(session, "http://127.0.0.1:\(server.port)/t/\(k).png?x=%20", headers: ["User-Agent": "Probe/1"])
            #expect(answer?.0 == 200)
            #expect(answer?.1 == "/t/\(k).png?x=%20 User-Agent: Probe/1")
        }
        #expect(server.connections.load(ordering: .relaxed) == 1)
        #expect(server.requests.load(ordering: .relaxed) == 3)
    }

    /// A server that closes a kept-alive connection while it is idle: the next request finds
    /// it closed before use and goes on a new connection.
    @Test func aConnectionClosedWhileIdleIsReplaced() async throws {
        let server = try ScriptedServer { _, _ in
            .bytes(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), thenClose: true)
        }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        for _ in 0..<3 {
            #expect(await Self.get(session, "http://127.0.0.1:\(server.port)/a")?.1 == "ok")
        }
        #expect(server.connections.load(ordering: .relaxed) == 3)
    }

    /// A server that closes a kept-alive connection once the next request arrives on it,
    /// before answering (the race with its idle timeout): the GET is sent again, once, on a
    /// new connection.
    @Test func aRequestLostToAClosingConnectionIsSentAgainOnce() async throws {
        let server = try ScriptedServer { _, request in
            request == 2 ? .bytes([], thenClose: true) : Self.ok("answer \(request)")
        }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        #expect(await Self.get(session, "http://127.0.0.1:\(server.port)/a")?.1 == "answer 1")
        #expect(await Self.get(session, "http://127.0.0.1:\(server.port)/a")?.1 == "answer 3")
        #expect(server.connections.load(ordering: .relaxed) == 2)
        #expect(server.requests.load(ordering: .relaxed) == 3)
    }

    /// Bodies framed every way reach the caller whole; a 304 that names an encoding has no
    /// body to inflate.
    @Test func chunkedCloseDelimitedAndEmptyAnswersThroughTheClient() async throws {
        let big = String(repeating: "tile", count: 20_000)
        let chunked = stride(from: 0, to: big.utf8.count, by: 777).map { start -> String in
            let piece = String(big.utf8.dropFirst(start).prefix(777))!
            return String(piece.utf8.count, radix: 16) + "\r\n" + piece + "\r\n"
        }.joined() + "0\r\n\r\n"
        let server = try ScriptedServer { head, _ in
            if head.hasPrefix("GET /chunked ") {
                return .bytes(Array(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked).utf8), thenClose: false)
            }
            if head.hasPrefix("GET /old ") { return .bytes(Array("HTTP/1.0 200 OK\r\n\r\nto the end".utf8), thenClose: true) }
            return .bytes(Array("HTTP/1.1 304 Not Modified\r\nContent-Encoding: gzip\r\nETag: \"v2\"\r\n\r\n".utf8), thenClose: false)
        }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        #expect(await Self.get(session, "http://127.0.0.1:\(server.port)/chunked")?.1 == big)
        #expect(await Self.get(session, "http://127.0.0.1:\(server.port)/old")?.1 == "to the end")
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/cached")!)
        guard case .response(let response, let body) = await session.exchange(request, deadline: .seconds(2), maxBytes: 100) else {
            Issue.record("no 304"); return
        }
        #expect(response.statusCode == 304 && body.isEmpty && response.value(forHTTPHeaderField: "ETag") == "\"v2\"")
    }

    /// A redirect to https is followed by URLSession (here to a port where nothing listens):
    /// the caller never gets the 301 itself.
    @Test func aRedirectToHTTPSIsHandedToURLSession() async throws {
        let server = try ScriptedServer { _, _ in
            .bytes(Array("HTTP/1.1 301 Moved\r\nLocation: https://127.0.0.1:1/tile.png\r\nContent-Length: 0\r\n\r\n".utf8), thenClose: false)
        }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        let answer = await session.exchange(URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/tile.png")!), deadline: .seconds(5), maxBytes: 100)
        if case .response(let response, _) = answer { Issue.record("the \(response.statusCode) came back") }
        #expect(server.requests.load(ordering: .relaxed) == 1)
    }

    /// An exchange cancelled before it starts connects to nothing.
    @Test func anExchangeCancelledBeforeItStartsMakesNoConnection() async throws {
        let server = try ScriptedServer { _, _ in Self.ok("asked") }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return await session.exchange(URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/")!), deadline: .seconds(2), maxBytes: 100)
        }
        task.cancel()
        guard case .failed("cancelled") = await task.value else { Issue.record("not cancelled"); return }
        try await Task.sleep(for: .milliseconds(200))
        #expect(server.connections.load(ordering: .relaxed) == 0)
    }

    @Test func redirectsAndGzipAreFollowedAsURLSessionWould() async throws {
        let gzipped = Gzip.compress(Array("inflated".utf8))
        let server = try ScriptedServer { head, _ in
            if head.hasPrefix("GET /moved ") {
                return .bytes(Array("HTTP/1.1 302 Found\r\nLocation: /gz\r\nContent-Length: 0\r\n\r\n".utf8), thenClose: false)
            }
            return .bytes(Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(gzipped.count)\r\n\r\n".utf8) + gzipped, thenClose: false)
        }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        let answer = await Self.get(session, "http://127.0.0.1:\(server.port)/moved")
        #expect(answer?.0 == 200 && answer?.1 == "inflated")
    }

    /// An upstream that never answers: the exchange ends at its deadline, or at once when
    /// cancelled, and the client closes the connection (which the server sees, within the
    /// 5 s it waits). The times are loose: the whole suite shares two cores.
    @Test func aSilentServerIsCutOffAtTheDeadlineAndCancellationEndsAtOnce() async throws {
        let server = try ScriptedServer { _, _ in .nothing }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        let clock = ContinuousClock()
        let started = clock.now
        let answer = await session.exchange(URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/slow")!), deadline: .milliseconds(300), maxBytes: 100)
        guard case .deadlineExceeded = answer else { Issue.record("\(answer)"); return }
        #expect(clock.now - started >= .milliseconds(300))

        let task = Task { await session.exchange(URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/slow")!), deadline: .seconds(30), maxBytes: 100) }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        guard case .failed(let reason) = await task.value else { Issue.record("a cancelled exchange did not fail"); return }
        #expect(reason == "cancelled")
        // Both connections were closed by the client, not by the server's 5 s.
        _ = try await eventually(every: .milliseconds(50)) { server.abandoned.load(ordering: .relaxed) >= 2 }
        #expect(server.abandoned.load(ordering: .relaxed) == 2)
    }

    @Test func bodiesPastTheLimitAndRefusedConnectionsAreAnswered() async throws {
        let server = try ScriptedServer { _, _ in Self.ok(String(repeating: "x", count: 500)) }
        defer { server.stop() }
        let session = UpstreamSession(configuration: .ephemeral, idleLifetime: .seconds(600))
        defer { session.invalidate() }
        let answer = await session.exchange(URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/")!), deadline: .seconds(2), maxBytes: 100)
        guard case .bodyTooLarge = answer else { Issue.record("\(answer)"); return }
        server.stop()
        // A port nobody listens on.
        let refused = await session.exchange(URLRequest(url: URL(string: "http://127.0.0.1:1/")!), deadline: .seconds(2), maxBytes: 100)
        guard case .failed = refused else { Issue.record("\(refused)"); return }
    }
}
