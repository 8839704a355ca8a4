import Testing
@testable import HTTPServer

/// RFC 9112 framing: each ambiguous head is refused, ordinary ones pass.
@Suite struct RequestFramingTests {
    static let good: [(String, [(String, String)])] = [
        ("GET /health HTTP/1.1", [("Host", "a")]),
        ("GET /maps/x/0/0/0.png?t=1 HTTP/1.1", [("Host", "a"), ("Accept", "*/*"), ("User-Agent", "curl/7.88")]),
        ("POST /maps/x/static/auto/100x100.png HTTP/1.1", [("Host", "a"), ("Content-Length", "12")]),
        ("POST /maps/x/static/auto/100x100.png HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "chunked")]),
        ("GET / HTTP/1.0", []),
        ("OPTIONS * HTTP/1.1", [("Host", "a")]),
    ]

    @Test(arguments: 0..<good.count) func ordinaryRequestsPass(_ index: Int) {
        let head = Self.head(Self.good[index].0, Self.good[index].1)
        #expect(head.framingProblem() == nil)
    }

    static let bad: [(line: String, headers: [(String, String)], problem: String)] = [
        ("GET /health HTTP/1.1", [], "without Host"),
        ("GET /maps.json HTTP/1.1", [("Host", "a"), ("Host", "evil")], "2 Host headers"),
        // Names are compared in any case (byte by byte since the lowercased copies went).
        ("GET /maps.json HTTP/1.1", [("host", "a"), ("HOST", "evil")], "2 Host headers"),
        ("POST / HTTP/1.1", [("Host", "a"), ("content-LENGTH", "4"), ("Transfer-encoding", "chunked")], "both Content-Length and Transfer-Encoding"),
        ("POST / HTTP/1.1", [("Host", "a"), ("Content-Length", "4"), ("Transfer-Encoding", "chunked")], "both Content-Length and Transfer-Encoding"),
        ("POST / HTTP/1.1", [("Host", "a"), ("Content-Length", "1"), ("Content-Length", "1")], "2 Content-Length headers"),
        ("POST / HTTP/1.1", [("Host", "a"), ("Content-Length", "-1")], "is not a number"),
        ("POST / HTTP/1.1", [("Host", "a"), ("Content-Length", "99999999999999999999")], "is not a number"),
        ("POST / HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "gzip")], "unsupported Transfer-Encoding"),
        ("POST / HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")], "2 Transfer-Encoding headers"),
        ("POST / HTTP/1.0", [("Transfer-Encoding", "chunked")], "HTTP/1.0"),
        ("GET / HTTP/1.1", [("Host", "a"), ("X-A", "b\rc")], "control character"),
        ("GET / HTTP/1.1", [("Host", "a"), ("X A", "b")], "is not a token"),
        ("GET / HTTP/2.0", [("Host", "a")], "unsupported version"),
        ("GET maps HTTP/1.1", [("Host", "a")], "absolute path"),
        ("G(T / HTTP/1.1", [("Host", "a")], "method is not a token"),
    ]

    @Test(arguments: 0..<bad.count) func ambiguousHeadsAreRefused(_ index: Int) throws {
        let (line, headers, problem) = Self.bad[index]
        let found = try #require(Self.head(line, headers).framingProblem())
        #expect(found.contains(problem), "\(found)")
    }

    /// A NUL ends a C string: libmicrohttpd then shows less than arrived. The head's size on
    /// the wire gives it away.
    @Test func bytesHiddenByANulAreSeen() {
        var head = Self.head("GET /maps/t/0/0/0.png HTTP/1.1", [("Host", "a")])
        head.receivedBytes = head.minimumBytes + 1  // "Host: a": the one space
        #expect(head.framingProblem() == nil)
        head.receivedBytes = head.minimumBytes + 1 + 5  // "\0.txt" after the path
        #expect(head.framingProblem()?.contains("NUL") == true)
    }

    @Test func headerNamesMatchInAnyCaseOnly() {
        #expect(RequestHead.isNamed("Content-Length", "content-length"))
        #expect(RequestHead.isNamed("HOST", "host") && RequestHead.isNamed("host", "host"))
        #expect(!RequestHead.isNamed("Hosts", "host") && !RequestHead.isNamed("Hos", "host") && !RequestHead.isNamed("H0st", "host"))
        // Only ASCII letters fold: '[' is 'Z' + 1, and '{' is 'z' + 1.
        #expect(!RequestHead.isNamed("a[", "a{") && !RequestHead.isNamed("Content_Length", "content-length"))
    }

    @Test func contentLengthAndBody() {
        #expect(Self.head("POST / HTTP/1.1", [("Host", "a"), ("Content-Length", "12")]).contentLength == 12)
        #expect(Self.head("POST / HTTP/1.1", [("Host", "a"), ("Content-Length", "0")]).hasBody == false)
        #expect(Self.head("POST / HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "chunked")]).hasBody)
    }

    static func head(_ line: String, _ headers: [(String, String)]) -> RequestHead {
        let parts = line.split(separator: " ").map(String.init)
        return RequestHead(method: parts[0], target: parts[1], version: parts[2], headers: headers.map { (name: $0.0, value: $0.1) })
    }
}
