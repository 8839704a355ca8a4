/// The checks of RFC 9112 that libmicrohttpd leaves to its user, made on a request's head
/// before anything reads its body: the cases where two parties could frame one byte stream
/// differently (request smuggling), or where a C string hid a byte.
///
/// A request that fails gets 400 and its connection is closed, as nginx does.
public struct RequestHead: Sendable {
    public var method: String
    public var target: String
    public var version: String
    /// Every header in order, duplicates kept, names as sent.
    public var headers: [(name: String, value: String)]
    /// Bytes of the request line and headers as received, when known.
    public var receivedBytes: Int?

    public init(method: String, target: String, version: String, headers: [(name: String, value: String)], receivedBytes: Int? = nil) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.receivedBytes = receivedBytes
    }

    /// The values of the headers named `name` (lowercase), in any case.
    func values(_ name: String) -> [String] {
        headers.filter { Self.isNamed($0.name, name) }.map(\.value)
    }

    /// Whether a header name is `lowercase` in ASCII letters of any case, compared byte by byte
    /// (a lowercased copy of every name, several times a request, was a cost of its own).
    static func isNamed(_ name: String, _ lowercase: String) -> Bool {
        name.utf8.count == lowercase.utf8.count
            && zip(name.utf8, lowercase.utf8).allSatisfy { a, b in a == b || (a >= 0x41 && a <= 0x5A && a | 0x20 == b) }
    }

    /// Why the request cannot be framed safely, or nil when it can.
    public func framingProblem() -> String? {
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenByte) else { return "the method is not a token" }
        guard target.hasPrefix("/") || (method == "OPTIONS" && target == "*") else { return "the request target is not an absolute path" }
        guard target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return "the request target holds a control character or space" }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else { return "unsupported version \(version)" }
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else { return "header name \"\(Self.printable(name))\" is not a token" }
            // Field values are visible bytes, spaces and tabs (obs-text allowed); CR, LF and
            // NUL inside one are how a header is smuggled past another parser.
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                return "header \(name) holds a control character"
            }
        }
        let hosts = values("host")
        if version == "HTTP/1.1" && hosts.isEmpty { return "HTTP/1.1 request without Host" }
        if hosts.count > 1 { return "\(hosts.count) Host headers" }
        let lengths = values("content-length")
        let codings = values("transfer-encoding")
        if !lengths.isEmpty && !codings.isEmpty { return "both Content-Length and Transfer-Encoding" }
        if lengths.count > 1 { return "\(lengths.count) Content-Length headers" }
        if let length = lengths.first, Self.decimal(length) == nil { return "Content-Length \"\(Self.printable(length))\" is not a number" }
        if codings.count > 1 { return "\(codings.count) Transfer-Encoding headers" }
        if let coding = codings.first {
            guard version == "HTTP/1.1" else { return "Transfer-Encoding in an HTTP/1.0 request" }
            guard coding.lowercased() == "chunked" else { return "unsupported Transfer-Encoding \"\(Self.printable(coding))\"" }
        }
        if let received = receivedBytes, received > minimumBytes + slackBytes {
            return "the request head holds bytes its text does not show (a NUL?)"
        }
        return nil
    }

    /// The declared body length, when there is a valid one.
    public var contentLength: Int? {
        values("content-length").first.flatMap(Self.decimal)
    }

    public var hasBody: Bool {
        (contentLength ?? 0) > 0 || !values("transfer-encoding").isEmpty
    }

    /// The fewest bytes this head can have taken on the wire: "METHOD TARGET VERSION\r\n",
    /// "name:value\r\n" per header, then "\r\n".
    var minimumBytes: Int {
        method.utf8.count + 1 + target.utf8.count + 1 + version.utf8.count + 2
            + headers.reduce(0) { $0 + $1.name.utf8.count + 1 + $1.value.utf8.count + 2 } + 2
    }

    /// Whitespace the wire carries beyond `minimumBytes`: the one space after each colon that
    /// every client sends. libmicrohttpd drops further leading whitespace, so it cannot be told
    /// from a NUL that hid the rest of a line; such requests are refused (no client sends them).
    var slackBytes: Int { headers.count }

    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }

    static func decimal(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    static func printable(_ text: String) -> String {
        String(text.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
    }
}
