/// An HTTP/1.1 response to a GET, read from bytes as they arrive (RFC 9112): the status
/// line, the header fields, and a body framed by Content-Length, by chunks, or by the end
/// of the connection. Bytes from an upstream are hostile: every line, the head, the
/// headers' count and the body are bounded, a number that does not parse is an error, and
/// nothing here can trap.
public struct HTTP1Response: Sendable {
    public enum Failure: Error, Equatable, Sendable {
        /// Not HTTP, or HTTP broken in a way a client should not guess around.
        case malformed(String)
        /// The body is longer than the limit (by Content-Length, or by what arrived).
        case bodyTooLarge
    }

    /// The most bytes of a head (status line and header fields), of one chunk-size line and of
    /// the trailers: curl's limits are of this order.
    static let maxHeadBytes = 64 << 10
    static let maxHeaderFields = 200
    static let maxLineBytes = 8 << 10
    /// Informational (1xx) heads skipped before the real one.
    static let maxInterimResponses = 8

    public let maxBodyBytes: Int
    public private(set) var status = 0
    public private(set) var minorVersion = 1
    /// Field names as sent; several fields of one name are joined with ", " (RFC 9110 §5.3).
    public private(set) var headers: [(name: String, value: String)] = []
    public private(set) var body: [UInt8] = []
    /// Whether the connection can carry another request once this response is complete.
    public private(set) var keepsConnection = false

    private enum Stage {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkEnd
        case trailers
        case untilClose
        case complete
    }
    private var stage = Stage.head
    /// Bytes of a head or a line not yet whole.
    private var pending: [UInt8] = []
    /// Where the line being read starts in `pending`.
    private var lineStart = 0
    private var interim = 0

    public init(maxBodyBytes: Int) {
        self.maxBodyBytes = max(0, maxBodyBytes)
    }

    public var isComplete: Bool {
        if case .complete = stage { return true }
        return false
    }

    /// Whether the response has begun to arrive (a connection that closes before any byte of
    /// it was probably closed by the server while idle: the request can be sent again).
    public var hasStarted: Bool {
        if case .head = stage { return !pending.isEmpty || interim > 0 }
        return true
    }

    /// The value of a header field, by case-insensitive name.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// Reads the bytes that arrived; any beyond the end of the response are ignored (a GET is
    /// never pipelined here, so they are the server's error).
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        var index = 0
        while index < bytes.count {
            switch stage {
            case .complete:
                // Bytes past the answer: the server's error, or a reply to nothing asked.
                // The rest is not read, and the connection is not reused.
                keepsConnection = false
                return
            case .head:
                guard try takeLine(bytes, &index, limit: Self.maxHeadBytes, endsWithBlankLine: true) else { continue }
                try readHead()
            case .fixed(let remaining):
                let left = takeBody(bytes, &index, remaining)
                stage = left == 0 ? .complete : .fixed(remaining: left)
            case .chunkSize:
                guard try takeLine(bytes, &index, limit: Self.maxLineBytes, endsWithBlankLine: false) else { continue }
                let size = try Self.chunkSize(pending)
                pending.removeAll(keepingCapacity: true)
                if size == 0 {
                    stage = .trailers
                } else {
                    // No reserveCapacity per chunk: it would copy the body each time (a body
                    // in 1-byte chunks would cost its length squared); append grows it.
                    guard size <= maxBodyBytes - body.count else { throw .bodyTooLarge }
                    stage = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let left = takeBody(bytes, &index, remaining)
                stage = left == 0 ? .chunkEnd : .chunkData(remaining: left)
            case .chunkEnd:
                guard try takeLine(bytes, &index, limit: Self.maxLineBytes, endsWithBlankLine: false) else { continue }
                guard pending.isEmpty else { throw .malformed("a chunk runs past its size") }
                stage = .chunkSize
            case .trailers:
                // Trailer fields are read and dropped: nothing here needs them.
                guard try takeLine(bytes, &index, limit: Self.maxHeadBytes, endsWithBlankLine: true) else { continue }
                pending.removeAll()
                stage = .complete
            case .untilClose:
                let take = bytes.count - index
                guard take <= maxBodyBytes - body.count else { throw .bodyTooLarge }
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index...]))
                index = bytes.count
            }
        }
    }

    /// Reads bytes that arrived into an array (a receive buffer's filled part).
    public mutating func consume(_ bytes: ArraySlice<UInt8>) throws(Failure) {
        // withUnsafeBytes rethrows untyped: the typed failure is carried out in a Result.
        let outcome = bytes.withUnsafeBytes { raw -> Result<Void, Failure> in
            do throws(Failure) {
                try consume(raw)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// Moves up to `remaining` bytes of body from `bytes` at `index`; what is still to come.
    private mutating func takeBody(_ bytes: UnsafeRawBufferPointer, _ index: inout Int, _ remaining: Int) -> Int {
        let take = min(remaining, bytes.count - index)
        body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
        index += take
        return remaining - take
    }

    /// The connection ended: a body read until the close is complete; anything else was cut.
    public mutating func connectionClosed() throws(Failure) {
        switch stage {
        case .complete: return
        case .untilClose: stage = .complete
        case .head where pending.isEmpty && interim == 0: throw .malformed("the connection closed before a response")
        case .head: throw .malformed("the connection closed within the response's head")
        default: throw .malformed("the connection closed \(body.count) bytes into the body")
        }
    }

    // MARK: Lines and heads

    /// Moves bytes into `pending` up to the end of a line, or with `endsWithBlankLine` up to
    /// a blank line (a whole head, or the trailers). True when it got there, false when more
    /// bytes are needed. A line alone is left in `pending` without its end. Lines end with
    /// CRLF or, leniently, a bare LF.
    private mutating func takeLine(_ bytes: UnsafeRawBufferPointer, _ index: inout Int, limit: Int,
                                   endsWithBlankLine: Bool) throws(Failure) -> Bool {
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            pending.append(byte)
            guard byte == 0x0A else {
                guard pending.count <= limit else { throw .malformed("a line or head of more than \(limit) bytes") }
                continue
            }
            var end = pending.count - 1
            if end > lineStart, pending[end - 1] == 0x0D { end -= 1 }
            let empty = end == lineStart
            lineStart = pending.count
            if !endsWithBlankLine {
                pending.removeSubrange(end...)
                lineStart = 0
                return true
            }
            if empty {
                lineStart = 0
                return true
            }
        }
        return false
    }

    private mutating func readHead() throws(Failure) {
        guard pending.count <= Self.maxHeadBytes else { throw .malformed("a head of more than \(Self.maxHeadBytes) bytes") }
        var lines = pending.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> ArraySlice<UInt8> in
            line.last == 0x0D ? line.dropLast() : line
        }
        pending.removeAll(keepingCapacity: true)
        while lines.last?.isEmpty == true { lines.removeLast() }
        // An empty line before the status line (left by the previous response) is skipped,
        // as RFC 9112 §2.2 lets a client do, once.
        // A CR that does not end a line could hide a field from one reader and not another.
        guard !lines.contains(where: { $0.contains(0x0D) }) else { throw .malformed("a bare CR in the head") }
        guard let statusLine = lines.first else {
            guard interim < Self.maxInterimResponses else { throw .malformed("empty lines instead of a response") }
            interim += 1
            return
        }
        try readStatusLine(statusLine)
        guard lines.count - 1 <= Self.maxHeaderFields else { throw .malformed("more than \(Self.maxHeaderFields) header fields") }
        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex else {
                throw .malformed("a header line without a name: \(Self.text(line.prefix(60)))")
            }
            let name = line[line.startIndex..<colon]
            // Whitespace before the colon, or a folded line, is refused (RFC 9112 §5.1, §5.2).
            guard name.allSatisfy(Self.isTokenByte) else { throw .malformed("a header name that is not a token: \(Self.text(name.prefix(60)))") }
            let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
            let trimmed = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            fields.append((Self.text(name), Self.text(trimmed)))
        }
        if (100..<200).contains(status) {
            // 101 would switch protocols: never asked for.
            guard status != 101, interim < Self.maxInterimResponses else { throw .malformed("an unexpected HTTP \(status)") }
            interim += 1
            return
        }
        for (name, value) in fields {
            if let index = headers.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) {
                headers[index].value += ", " + value
            } else {
                headers.append((name, value))
            }
        }
        try frameBody()
    }

    private mutating func readStatusLine(_ line: ArraySlice<UInt8>) throws(Failure) {
        // "HTTP/1.1 200 OK": a version, a three-digit code, and a reason that may be empty.
        let bytes = Array(line)
        guard bytes.count >= 12, bytes[0..<7].elementsEqual("HTTP/1.".utf8), (0x30...0x39).contains(bytes[7]), bytes[8] == 0x20,
              bytes[9..<12].allSatisfy({ (0x30...0x39).contains($0) }), bytes.count == 12 || bytes[12] == 0x20 else {
            throw .malformed("not an HTTP/1 status line: \(Self.text(line.prefix(60)))")
        }
        minorVersion = Int(bytes[7] - 0x30)
        status = bytes[9..<12].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard status >= 100 else { throw .malformed("status \(status)") }
    }

    /// How the body is delimited (RFC 9112 §6.3), and whether the connection stays open.
    private mutating func frameBody() throws(Failure) {
        let connection = header("Connection")?.lowercased() ?? ""
        let tokens = connection.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        keepsConnection = minorVersion >= 1 ? !tokens.contains("close") : tokens.contains("keep-alive")
        if status == 204 || status == 304 {
            stage = .complete
            return
        }
        if let encoding = header("Transfer-Encoding") {
            let codings = encoding.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if codings.last == "chunked" {
                guard codings.count == 1 else { throw .malformed("Transfer-Encoding \(encoding): only chunked is understood") }
                stage = .chunkSize
            } else {
                keepsConnection = false
                stage = .untilClose
            }
            // Content-Length beside Transfer-Encoding is ignored, and the connection not reused.
            if header("Content-Length") != nil { keepsConnection = false }
            return
        }
        if let value = header("Content-Length") {
            // Repeated fields must agree ("120, 120").
            let lengths = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = lengths.first, lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.count <= 15,
                  first.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let length = Int(first) else {
                throw .malformed("Content-Length \(value.prefix(40)) is not a length")
            }
            guard length <= maxBodyBytes else { throw .bodyTooLarge }
            body.reserveCapacity(length)
            stage = length == 0 ? .complete : .fixed(remaining: length)
            return
        }
        keepsConnection = false
        stage = .untilClose
    }

    /// A chunk-size line: hex digits, then optional extensions after ";".
    static func chunkSize(_ line: [UInt8]) throws(Failure) -> Int {
        let digits = line.prefix { $0 != 0x3B && $0 != 0x20 && $0 != 0x09 }
        guard !digits.isEmpty, digits.count <= 15 else { throw .malformed("a chunk size of \(digits.count) digits") }
        // After the digits: blanks, then nothing or extensions after ";" (RFC 9112 §7.1.1).
        let rest = line.dropFirst(digits.count).drop { $0 == 0x20 || $0 == 0x09 }
        guard rest.isEmpty || rest.first == 0x3B else { throw .malformed("a chunk size followed by \(text(rest.prefix(20)))") }
        var size = 0
        for digit in digits {
            let value: Int
            switch digit {
            case 0x30...0x39: value = Int(digit - 0x30)
            case 0x41...0x46: value = Int(digit - 0x41 + 10)
            case 0x61...0x66: value = Int(digit - 0x61 + 10)
            default: throw .malformed("a chunk size that is not hex: \(text(line.prefix(20)))")
            }
            size = size << 4 | value  // 15 hex digits fit in 60 bits
        }
        return size
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Bytes as text for a header or a message: UTF-8 where valid, Latin-1 otherwise (what
    /// old servers send in header values).
    static func text(_ bytes: some Collection<UInt8>) -> String {
        String(validating: bytes, as: UTF8.self) ?? String(bytes.map { Character(Unicode.Scalar($0)) })
    }
}
