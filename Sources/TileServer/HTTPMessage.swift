import Foundation

/// A request as the server core sees it, whatever carried it (a socket through the
/// HTTPServer adapter, a test, a fuzz target). `path` is still percent-encoded (it is parsed, never
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

/// The core's answer: a status, headers and a body, or a stream the core writes over time.
/// The adapter that owns the socket only converts it.
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
