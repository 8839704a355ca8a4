import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Which file a range answer came from: its `ETag` (nil when the server sends none) and its
/// size (the total of `Content-Range: bytes a-b/TOTAL`). Another version is another file.
struct RemoteFileVersion: Hashable, Sendable {
    var etag: String?
    var size: UInt64

    /// What tells this version from `other`, or nil when it is the same file.
    func change(to other: RemoteFileVersion) -> String? {
        if let etag, let new = other.etag, etag != new { return "its ETag \(etag) became \(new)" }
        if size != other.size { return "its size \(size) became \(other.size)" }
        return nil
    }
}

/// What a range request gave, once retries are spent. Failures that asking again will not
/// mend (a refusal, a server that ignores `Range`, a short range) are thrown instead, as
/// `TileSourceError.unreadable` naming the URL.
enum RangeAnswer: Sendable {
    /// The bytes asked for (fewer only where the file ends), and the version they belong to.
    case bytes([UInt8], RemoteFileVersion)
    /// The file is not the version expected: another ETag or size, or 412 to `If-Match`.
    case replaced(String)
    /// 404 or 410: no file at the URL (now).
    case missing(status: Int)
    /// Down, slow or overloaded (5xx or network errors after the retries, a deadline, 429,
    /// every connection busy): ask again later.
    case unavailable(retryAfter: Duration?, reason: String)
}

/// Range requests (RFC 9110 §14) for one URL, with the remote-source rules of
/// `RemoteTileSource`: an identifying User-Agent, at most `maxConcurrentPerHost` requests
/// in flight (`HostGate`), each attempt within `timeout` whole (`UpstreamSession`), retries
/// with backoff on 5xx and network errors, none on 4xx or after a deadline.
///
/// Each request carries `If-Match` with the ETag expected (when it is a strong one): nginx,
/// S3 and most CDNs answer 412 once the file was replaced. The ETag and size of every answer
/// are compared as well, for servers that ignore `If-Match`. Either way the caller hears
/// `.replaced` and never gets bytes of a new file read through an old directory.
///
/// A server that ignores `Range` answers 200 with the whole file: the body is cut off after
/// the bytes asked for, or 16 KiB for a smaller read (so a 2 GB file is not downloaded to read
/// a tile), and the URL is refused; a whole file that fits (16 KiB at most, or the bytes
/// asked for) is used as it is.
final class HTTPRangeReader: Sendable {
    let url: URL
    /// The URL without its query or credentials (a signed URL's signature, an API key),
    /// for messages and logs.
    let name: String
    let options: RemoteOptions
    private let session: UpstreamSession
    private let gate: HostGate
    private let attempts = Atomic<Int>(0)

    init(url: URL, options: RemoteOptions) {
        self.url = url
        name = Self.displayName(url)
        self.options = options
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = options.maxConcurrentPerHost
        // A backstop only: UpstreamSession's own deadline ends each attempt first.
        configuration.timeoutIntervalForRequest = options.timeout.seconds * 2 + 1
        configuration.timeoutIntervalForResource = options.timeout.seconds * 2 + 1
        session = UpstreamSession(configuration: configuration)
        gate = HostGate(limit: options.maxConcurrentPerHost, requestsPerSecond: options.requestsPerSecondPerHost, patience: options.maxQueueWait)
    }

    deinit { session.invalidate() }

    /// Requests sent so far (every attempt), for tests and the benchmark.
    var requestCount: Int { attempts.load(ordering: .relaxed) }

    static func displayName(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "\(url.scheme ?? "http")://…" }
        let hadQuery = components.query != nil
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return (components.string ?? "\(url.scheme ?? "http")://…") + (hadQuery ? "?…" : "")
    }

    /// `length` bytes from `offset` (fewer where the file ends), of the file `expected`
    /// (nil when opening: any version).
    func read(offset: UInt64, length: Int, expecting expected: RemoteFileVersion?) async throws -> RangeAnswer {
        let request = request(offset: offset, length: length, expecting: expected)
        var retry = (reason: "", retryAfter: Duration?.none)
        for attempt in 0...options.retries {
            if attempt > 0 {
                try Task.checkCancellation()
                try await Task.sleep(for: options.backoffDelay(attempt: attempt, retryAfter: retry.retryAfter))
            }
            guard await gate.acquire() else {
                try Task.checkCancellation()
                // Every slot is taken by a request that ends within the timeout.
                return .unavailable(retryAfter: options.timeout, reason: "every connection to \(url.host ?? "the server") stayed busy for \(String(format: "%g", options.maxQueueWait?.seconds ?? 0)) s")
            }
            attempts.add(1, ordering: .relaxed)
            let answer = await session.exchange(request, deadline: options.timeout, maxBytes: Self.bodyLimit(length))
            await gate.release()
            try Task.checkCancellation()
            switch try judge(answer, offset: offset, length: length, expecting: expected) {
            case .done(let result): return result
            case .retry(let reason, let retryAfter): retry = (reason, retryAfter)
            }
        }
        return Self.exhausted(retry, retries: options.retries)
    }

    /// The same for a caller that cannot await (a synchronous walk of the whole file),
    /// blocking its thread; one request at a time, so no gate is needed.
    func readBlocking(offset: UInt64, length: Int, expecting expected: RemoteFileVersion?) throws(TileSourceError) -> RangeAnswer {
        let request = request(offset: offset, length: length, expecting: expected)
        var retry = (reason: "", retryAfter: Duration?.none)
        for attempt in 0...options.retries {
            if attempt > 0 { Thread.sleep(forTimeInterval: options.backoffDelay(attempt: attempt, retryAfter: retry.retryAfter).seconds) }
            attempts.add(1, ordering: .relaxed)
            let answer = session.exchangeBlocking(request, deadline: options.timeout, maxBytes: Self.bodyLimit(length))
            switch try judge(answer, offset: offset, length: length, expecting: expected) {
            case .done(let result): return result
            case .retry(let reason, let retryAfter): retry = (reason, retryAfter)
            }
        }
        return Self.exhausted(retry, retries: options.retries)
    }

    /// The most bytes read of one answer: those asked for, or 16 KiB for a smaller read, so
    /// that an error page (a 412 or 404 of a few hundred bytes) is read whole, and a file of
    /// up to 16 KiB from a server that ignores Range is used as it is.
    static func bodyLimit(_ length: Int) -> Int { max(length, smallBody) }

    static let smallBody = 16_384

    private static func exhausted(_ retry: (reason: String, retryAfter: Duration?), retries: Int) -> RangeAnswer {
        .unavailable(retryAfter: retry.retryAfter, reason: retries == 0 ? retry.reason : "\(retry.reason) (after \(retries) retries)")
    }

    private func request(offset: UInt64, length: Int, expecting expected: RemoteFileVersion?) -> URLRequest {
        var request = URLRequest(url: url, timeoutInterval: options.timeout.seconds * 2 + 1)
        request.setValue(options.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in options.headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("bytes=" + Self.span(offset: offset, length: length), forHTTPHeaderField: "Range")
        // Byte offsets are into the file as stored: no transfer coding may change them.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        // A weak ETag never matches If-Match (RFC 9110 §13.1.1 uses the strong comparison).
        if let etag = expected?.etag, !etag.hasPrefix("W/") { request.setValue(etag, forHTTPHeaderField: "If-Match") }
        return request
    }

    /// `FIRST-LAST` of a read, the end inclusive (as Range counts); callers ask for at least
    /// one byte within a file whose size is a UInt64, so the sum cannot overflow, but a
    /// wrong call saturates rather than traps.
    static func span(offset: UInt64, length: Int) -> String {
        let (end, overflow) = offset.addingReportingOverflow(UInt64(max(length, 1)) - 1)
        return "\(offset)-\(overflow ? UInt64.max : end)"
    }

    private enum Verdict {
        case done(RangeAnswer)
        case retry(String, Duration?)
    }

    /// What one attempt's answer means for a read of `length` bytes from `offset`.
    private func judge(_ answer: UpstreamSession.Answer, offset: UInt64, length: Int,
                       expecting expected: RemoteFileVersion?) throws(TileSourceError) -> Verdict {
        let asked = "bytes " + Self.span(offset: offset, length: length)
        let response: HTTPURLResponse, body: [UInt8]
        switch answer {
        case .failed(let reason): return .retry("cannot reach the server: \(reason)", nil)
        case .deadlineExceeded:
            // Not retried: a stalled server would stall the retry as long.
            return .done(.unavailable(retryAfter: nil, reason: "no complete answer within \(String(format: "%g", options.timeout.seconds)) s"))
        case .bodyTooLarge:
            throw .unreadable(path: name, reason: "the server ignores Range requests: asked for \(asked), it sent more than \(Self.bodyLimit(length)) bytes "
                + "(PMTiles over HTTP needs a server that answers 206 Partial Content)")
        case .response(let r, let b): (response, body) = (r, b)
        }
        let headers = response.allHeaderFields.reduce(into: [String: String]()) { $0["\($1.key)".lowercased()] = "\($1.value)" }
        let retryAfter = RemoteTileSource.retryAfter(headers)
        switch response.statusCode {
        case 206:
            guard let range = ContentRange(headers["content-range"]) else {
                throw .unreadable(path: name, reason: "the server answered 206 to \(asked) without a valid Content-Range (\(headers["content-range"] ?? "none"))")
            }
            let version = RemoteFileVersion(etag: headers["etag"], size: range.size)
            if let expected, let change = expected.change(to: version) { return .done(.replaced(change)) }
            // The bytes due: those asked for, or up to the end of a shorter file.
            let due = offset < range.size ? min(UInt64(length), range.size - offset) : 0
            guard range.first == offset, range.count == UInt64(body.count), UInt64(body.count) == due else {
                throw .unreadable(path: name, reason: "asked for \(asked) of \(range.size), the server sent \(body.count) bytes as bytes \(range.first)-\(range.last)")
            }
            return .done(.bytes(body, version))
        case 200:
            // The whole file (Range ignored), and no longer than `bodyLimit`, or the session
            // would have cut it off.
            let version = RemoteFileVersion(etag: headers["etag"], size: UInt64(body.count))
            if let expected, let change = expected.change(to: version) { return .done(.replaced(change)) }
            guard let start = Int(exactly: offset), start <= body.count else { return .done(.bytes([], version)) }
            return .done(.bytes(Array(body[start..<min(body.count, start + length)]), version))
        case 412: return .done(.replaced("the server answered 412 Precondition Failed to If-Match: \(expected?.etag ?? "")"))
        case 416:
            if expected != nil { return .done(.replaced("the server has no \(asked) any more (416 Range Not Satisfiable)")) }
            throw .corrupt(path: name, reason: "not a PMTiles file: the server has no \(asked) (416 Range Not Satisfiable: the file is empty)")
        case 404, 410: return .done(.missing(status: response.statusCode))
        case 429: return .done(.unavailable(retryAfter: retryAfter, reason: "the server asks to slow down (HTTP 429)"))
        case 500...599: return .retry("the server answered HTTP \(response.statusCode)", retryAfter)
        default: throw .unreadable(path: name, reason: "the server refused \(asked) with HTTP \(response.statusCode)")
        }
    }
}

/// `Content-Range: bytes FIRST-LAST/SIZE` (RFC 9110 §14.4), the size known.
struct ContentRange: Hashable, Sendable {
    var first: UInt64
    var last: UInt64
    var size: UInt64

    var count: UInt64 { last - first + 1 }

    /// Nil unless the value is well formed, with first <= last < size.
    init?(_ value: String?) {
        guard let value else { return nil }
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        func number(_ s: Substring) -> UInt64? { s.allSatisfy({ $0.isASCII && $0.isNumber }) ? UInt64(s) : nil }
        guard bounds.count == 2, let first = number(bounds[0]), let last = number(bounds[1]), let size = number(parts[1]),
              first <= last, last < size else { return nil }
        self.first = first
        self.last = last
        self.size = size
    }
}

extension RemoteOptions {
    /// Defaults for range requests to a file of one's own (a PMTiles file on a CDN, an object
    /// store or nginx): more requests in flight than a public tile server would allow, and
    /// no rate limit.
    public static func rangeReads(userAgent: String = "TileKit (PMTiles over HTTP)") -> RemoteOptions {
        var options = RemoteOptions(userAgent: userAgent)
        options.maxConcurrentPerHost = 8
        options.requestsPerSecondPerHost = nil
        return options
    }
}
