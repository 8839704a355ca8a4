import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import Canvas
public import TileMath

/// How a remote source behaves towards the servers it asks.
public struct RemoteOptions: Hashable, Sendable {
    /// Identifies the application to the tile server. Required: OpenStreetMap and others
    /// block clients without one (https://operations.osmfoundation.org/policies/tiles/).
    public var userAgent: String
    /// Requests in flight to one host at most.
    public var maxConcurrentPerHost: Int = 2
    /// Requests started per second to one host at most; nil for no limit.
    public var requestsPerSecondPerHost: Double? = 10
    /// How long one attempt may take.
    public var timeout: Duration = .seconds(10)
    /// Attempts after the first, on 5xx answers and network errors (never on 4xx).
    public var retries: Int = 3
    /// The first retry waits about this long; each next one twice as long, ±50% jitter.
    public var backoff: Duration = .milliseconds(250)
    /// Extra request headers (Referer, an API key header).
    public var headers: [String: String] = [:]

    public init(userAgent: String) {
        self.userAgent = userAgent
    }
}

/// Freshness and validators of a fetched tile, from its response headers.
public struct CacheDirectives: Hashable, Sendable {
    /// Seconds the tile stays fresh: `Cache-Control: max-age` (or `s-maxage`), else
    /// `Expires` − `Date`; nil when the server says nothing.
    public var maxAge: Double?
    /// `no-store`: do not keep it at all.
    public var noStore = false
    /// `no-cache`: keep it, but revalidate before every use.
    public var noCache = false
    public var etag: String?
    public var lastModified: String?

    public init(maxAge: Double? = nil, noStore: Bool = false, noCache: Bool = false, etag: String? = nil, lastModified: String? = nil) {
        self.maxAge = maxAge
        self.noStore = noStore
        self.noCache = noCache
        self.etag = etag
        self.lastModified = lastModified
    }

    init(headers: [String: String]) {
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name }?.value }
        etag = header("etag")
        lastModified = header("last-modified")
        if let control = header("cache-control")?.lowercased() {
            for directive in control.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                if directive == "no-store" { noStore = true }
                if directive == "no-cache" { noCache = true }
                if directive.hasPrefix("max-age="), maxAge == nil { maxAge = Double(directive.dropFirst(8)) }
                if directive.hasPrefix("s-maxage=") { maxAge = Double(directive.dropFirst(9)) }
            }
        }
        if maxAge == nil, let expires = header("expires").flatMap(HTTPDate.parse) {
            let now = header("date").flatMap(HTTPDate.parse) ?? Date()
            maxAge = max(0, expires.timeIntervalSince(now))
        }
    }
}

/// What one fetch gave.
public enum FetchOutcome: Hashable, Sendable {
    case tile(TileData, CacheDirectives)
    /// 304: the copy the validators named is still good.
    case notModified(CacheDirectives)
    case noTile
    case unavailable(retryAfter: Duration?)
}

/// A failure that asking again will not mend: the server refuses (401, 403, 400) or
/// answers with something that is not a tile.
public enum RemoteTileError: Error, Hashable, Sendable, CustomStringConvertible {
    case refused(status: Int, url: String)
    case notAnImage(url: String, contentType: String?, firstBytes: String)
    case invalidURL(String)
    case missingUserAgent

    public var description: String {
        switch self {
        case .refused(let status, let url): return "\(url): the server refused with HTTP \(status)"
        case .notAnImage(let url, let type, let bytes):
            return "\(url): the answer is not a PNG, JPEG or WebP tile (Content-Type \(type ?? "none"), starts with \(bytes))"
        case .invalidURL(let url): return "\"\(url)\" is not a valid URL"
        case .missingUserAgent: return "a remote source needs a User-Agent that identifies the application"
        }
    }
}

/// Tiles from a tile server by URL template, fetched politely: an identifying User-Agent,
/// per-host concurrency and rate limits, timeouts, retries with backoff and jitter on 5xx
/// and network errors (none on 4xx), conditional requests, and the absence model:
/// 404/410/204 → `noTile`; 5xx after retries, timeouts, 429 → `unavailable`.
public final class RemoteTileSource: TileSource {
    public let template: URLTemplate
    public let metadata: TileSetMetadata
    public let options: RemoteOptions
    private let session: URLSession
    private let gates: HostGates

    public init(template: URLTemplate, metadata: TileSetMetadata, options: RemoteOptions) throws(RemoteTileError) {
        guard !options.userAgent.trimmingCharacters(in: .whitespaces).isEmpty else { throw .missingUserAgent }
        self.template = template
        self.metadata = metadata
        self.options = options
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil  // TileKit's own cache decides; no second cache underneath
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = options.maxConcurrentPerHost
        configuration.timeoutIntervalForRequest = options.timeout.seconds
        session = URLSession(configuration: configuration)
        gates = HostGates(limit: options.maxConcurrentPerHost, requestsPerSecond: options.requestsPerSecondPerHost)
    }

    deinit { session.invalidateAndCancel() }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        switch try await fetch(request) {
        case .tile(let data, _): return .tile(data)
        case .notModified: return .noTile  // unreachable without validators
        case .noTile: return .noTile
        case .unavailable(let retryAfter): return .unavailable(retryAfter: retryAfter)
        }
    }

    /// Fetches a tile, conditionally when validators of a cached copy are given.
    public func fetch(_ request: TileRequest, etag: String? = nil, lastModified: String? = nil) async throws -> FetchOutcome {
        let text = template.url(for: request.tile, scale: request.scale)
        guard let url = URL(string: text), let host = url.host else { throw RemoteTileError.invalidURL(text) }
        var urlRequest = URLRequest(url: url, timeoutInterval: options.timeout.seconds)
        urlRequest.setValue(options.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in options.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified { urlRequest.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }

        let gate = await gates.gate(for: host)
        var retryAfter: Duration?
        for attempt in 0...options.retries {
            if attempt > 0 {
                try Task.checkCancellation()
                try await Task.sleep(for: backoffDelay(attempt: attempt, retryAfter: retryAfter))
            }
            await gate.acquire()
            let answer: (Data, HTTPURLResponse)?
            do {
                let (data, response) = try await session.data(for: urlRequest)
                answer = (data, response as! HTTPURLResponse)
            } catch is CancellationError {
                await gate.release()
                throw CancellationError()
            } catch {
                answer = nil  // timeout, reset, refused: transient, try again
            }
            await gate.release()
            guard let (data, response) = answer else { continue }
            let headers = response.allHeaderFields.reduce(into: [String: String]()) { $0["\($1.key)"] = "\($1.value)" }
            retryAfter = Self.retryAfter(headers)
            switch response.statusCode {
            case 200:
                let bytes = [UInt8](data)
                guard let format = ImageFormat(sniffing: bytes) else {
                    throw RemoteTileError.notAnImage(url: text, contentType: headers.first { $0.key.lowercased() == "content-type" }?.value,
                                                     firstBytes: bytes.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " "))
                }
                return .tile(TileData(bytes: bytes, format: format), CacheDirectives(headers: headers))
            case 304: return .notModified(CacheDirectives(headers: headers))
            case 204, 404, 410: return .noTile
            case 429: return .unavailable(retryAfter: retryAfter)  // asked to slow down: do not insist
            case 500...599: continue
            default: throw RemoteTileError.refused(status: response.statusCode, url: text)
            }
        }
        return .unavailable(retryAfter: retryAfter)
    }

    func backoffDelay(attempt: Int, retryAfter: Duration?) -> Duration {
        let base = options.backoff * Int(1 << min(attempt - 1, 10))
        let jittered = base * Double.random(in: 0.5...1.5)
        // A short Retry-After is honoured; a long one ends the retries' patience anyway.
        if let retryAfter, retryAfter < .seconds(5) { return max(jittered, retryAfter) }
        return jittered
    }

    /// `Retry-After` as seconds or an HTTP date.
    static func retryAfter(_ headers: [String: String]) -> Duration? {
        guard let value = headers.first(where: { $0.key.lowercased() == "retry-after" })?.value else { return nil }
        if let seconds = Double(value.trimmingCharacters(in: .whitespaces)) { return .seconds(max(0, seconds)) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .seconds(max(0, date.timeIntervalSinceNow))
    }
}

/// HTTP dates (RFC 9110 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`).
enum HTTPDate {
    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }

    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
