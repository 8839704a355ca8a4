import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
public import Canvas
public import TileMath

/// How a remote source behaves towards the servers it asks, and what it accepts from them.
public struct RemoteOptions: Hashable, Sendable {
    /// Identifies the application to the tile server. Required: OpenStreetMap and others
    /// block clients without one (https://operations.osmfoundation.org/policies/tiles/).
    public var userAgent: String
    /// Requests in flight to one host at most, per source: a stalled upstream holds only
    /// its own source's slots, never another map's.
    public var maxConcurrentPerHost: Int = 2
    /// Requests started per second to one host at most; nil for no limit.
    public var requestsPerSecondPerHost: Double? = 10
    /// The whole of one attempt at most: connecting, the headers and the entire body
    /// (a server that drips a byte a second is cut off here). An attempt that runs out of
    /// time is not retried: the upstream is stalled, and asking again would wait as long.
    public var timeout: Duration = .seconds(10)
    /// How long a request waits for a free slot to its host before it is answered
    /// `unavailable` (HTTP 503 with Retry-After); nil waits as long as it takes.
    public var maxQueueWait: Duration? = .seconds(3)
    /// Attempts after the first, on 5xx answers and network errors (never on 4xx).
    public var retries: Int = 3
    /// The first retry waits about this long; each next one twice as long, ±50% jitter.
    public var backoff: Duration = .milliseconds(250)
    /// Extra request headers (Referer, an API key header).
    public var headers: [String: String] = [:]
    /// The longest body read, in bytes (checked on Content-Length and while reading).
    public var maxBodyBytes: Int = 8 << 20
    /// The largest tile side, in pixels, checked on the declared size before decoding: a
    /// tile is 256 or 512 px (1024 at @2x of 512), and one larger than this is garbage.
    public var maxTileSide: Int = 4096

    public init(userAgent: String) {
        self.userAgent = userAgent
    }

    /// How long to wait before retry `attempt` (1 for the first): `backoff` doubled each
    /// time, ±50% jitter, at least a short `Retry-After`.
    func backoffDelay(attempt: Int, retryAfter: Duration?) -> Duration {
        let base = backoff * Int(1 << min(max(attempt - 1, 0), 10))
        let jittered = base * Double.random(in: 0.5...1.5)
        // A short Retry-After is honoured; a long one ends the retries' patience anyway.
        if let retryAfter, retryAfter < .seconds(5) { return max(jittered, retryAfter) }
        return jittered
    }
}

/// Freshness and validators of a fetched tile, from its response headers (RFC 9111).
public struct CacheDirectives: Hashable, Sendable {
    /// Seconds the tile stays fresh: `Cache-Control: s-maxage` or `max-age` (TileKit's caches
    /// are shared), else `Expires` − `Date`, less the upstream's `Age`; nil when the server
    /// says nothing. Never negative, at most `Freshness.longest`.
    public var maxAgeSeconds: Double?
    /// `no-store`: do not keep it at all.
    public var noStore = false
    /// `no-cache`: keep it, but revalidate before every use.
    public var noCache = false
    public var etag: String?
    public var lastModified: String?

    public init(maxAgeSeconds: Double? = nil, noStore: Bool = false, noCache: Bool = false, etag: String? = nil, lastModified: String? = nil) {
        self.maxAgeSeconds = maxAgeSeconds
        self.noStore = noStore
        self.noCache = noCache
        self.etag = etag
        self.lastModified = lastModified
    }

    init(headers: [String: String]) {
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name }?.value }
        etag = header("etag")
        lastModified = header("last-modified")
        var maxAgeSeconds: Double?, sharedMaxAge: Double?
        if let control = header("cache-control")?.lowercased() {
            for directive in control.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                // `no-cache="field"` only restricts the named fields; the tile stays usable.
                if directive == "no-store" { noStore = true }
                if directive == "no-cache" { noCache = true }
                if let value = Self.argument(directive, "max-age"), maxAgeSeconds == nil { maxAgeSeconds = Self.deltaSeconds(value) }
                if let value = Self.argument(directive, "s-maxage"), sharedMaxAge == nil { sharedMaxAge = Self.deltaSeconds(value) }
            }
        }
        if let lifetime = sharedMaxAge ?? maxAgeSeconds {
            self.maxAgeSeconds = lifetime
        } else if let expires = header("expires") {
            // RFC 9111 §5.3: an invalid date (such as "0") means already expired.
            if let date = HTTPDate.parse(expires) {
                let now = header("date").flatMap(HTTPDate.parse) ?? Date()
                self.maxAgeSeconds = min(max(0, date.timeIntervalSince(now)), Freshness.longest)
            } else {
                self.maxAgeSeconds = 0
            }
        }
        if let lifetime = self.maxAgeSeconds, let age = header("age").map({ Self.deltaSeconds($0) }) {
            self.maxAgeSeconds = max(0, lifetime - age)
        }
    }

    /// The value of `name=value` (quotes removed), or nil for another directive.
    private static func argument(_ directive: String, _ name: String) -> Substring? {
        guard directive.hasPrefix(name + "=") else { return nil }
        return directive.dropFirst(name.count + 1).drop { $0 == "\"" }.prefix { $0 != "\"" }
    }

    /// RFC 9111 §1.2.2 delta-seconds: digits only, capped at 2^31; anything else (a sign,
    /// a fraction, `1e999`, `nan`) is invalid, and an invalid lifetime means stale (§4.2.1).
    static func deltaSeconds(_ text: some StringProtocol) -> Double {
        let digits = text.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return 0 }
        // More than 10 digits is past the cap whatever they are.
        guard digits.count <= 10, let seconds = Double(digits) else { return Freshness.longest }
        return min(seconds, Freshness.longest)
    }

    /// The freshness of a tile fetched at `now` (seconds since 1970) with these directives.
    public func freshness(now: EpochSeconds) -> Freshness {
        Freshness(expiresAt: maxAgeSeconds.map { now.rounded(.down) + $0.rounded(.down) }, noStore: noStore, noCache: noCache)
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
/// answers with something that is not a good tile.
public enum RemoteTileError: Error, Hashable, Sendable, CustomStringConvertible {
    case refused(status: Int, url: String)
    /// No PNG, JPEG or WebP signature, an empty body, or a Content-Type that is not an image.
    case notAnImage(url: String, contentType: String?, firstBytes: String)
    /// The signature says a format, but the bytes do not decode as one (cut short, a PNG
    /// signature followed by an HTML page).
    case undecodable(url: String, format: ImageFormat, reason: String)
    /// The declared size is larger than `RemoteOptions.maxTileSide`, or empty.
    case tileTooLarge(url: String, width: Int, height: Int, maxSide: Int)
    /// The body is longer than `RemoteOptions.maxBodyBytes`.
    case bodyTooLarge(url: String, maxBytes: Int)
    case invalidURL(String)
    case missingUserAgent

    /// True for an answer that came but is not a tile: a cache keeps its copy and serves it.
    public var isBadAnswer: Bool {
        switch self {
        case .notAnImage, .undecodable, .tileTooLarge, .bodyTooLarge: return true
        case .refused, .invalidURL, .missingUserAgent: return false
        }
    }

    public var description: String {
        switch self {
        case .refused(let status, let url): return "\(url): the server refused with HTTP \(status)"
        case .notAnImage(let url, let type, let bytes):
            return "\(url): the answer is not a PNG, JPEG or WebP tile (Content-Type \(type ?? "none"), starts with \(bytes))"
        case .undecodable(let url, let format, let reason): return "\(url): the answer is a broken \(format.name) tile: \(reason)"
        case .tileTooLarge(let url, let width, let height, let maxSide):
            return "\(url): the tile declares \(width)x\(height) px; a tile is at most \(maxSide) px a side"
        case .bodyTooLarge(let url, let maxBytes): return "\(url): the answer is longer than \(maxBytes) bytes"
        case .invalidURL(let url): return "\"\(url)\" is not a valid URL"
        case .missingUserAgent: return "a remote source needs a User-Agent that identifies the application"
        }
    }
}

/// How often a remote source's upstream misbehaved, since the source was made.
public struct RemoteCounters: Hashable, Sendable {
    /// Answers that were not good tiles (`RemoteTileError.isBadAnswer`).
    public var badAnswers = 0
    /// Attempts cut off at `RemoteOptions.timeout`.
    public var deadlines = 0
    /// Requests answered `unavailable` because every slot to the host stayed busy.
    public var queueTimeouts = 0
}

/// Tiles from a tile server by URL template, fetched politely: an identifying User-Agent,
/// per-host concurrency and rate limits, timeouts, retries with backoff and jitter on 5xx
/// and network errors (none on 4xx), conditional requests, and the absence model:
/// 404/410/204 → `noTile`; 5xx after retries, timeouts, 429, a full queue → `unavailable`.
/// A 200 is a tile only when it decodes as the image it claims to be, within the size limits.
public final class RemoteTileSource: TileSource {
    public let template: URLTemplate
    public let metadata: TileSetMetadata
    public let options: RemoteOptions
    private let session: UpstreamSession
    private let gates: HostGates
    private let counts = Mutex(RemoteCounters())

    public init(template: URLTemplate, metadata: TileSetMetadata, options: RemoteOptions) throws(RemoteTileError) {
        guard !options.userAgent.trimmingCharacters(in: .whitespaces).isEmpty else { throw .missingUserAgent }
        self.template = template
        self.metadata = metadata
        self.options = options
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil  // TileKit's own cache decides; no second cache underneath
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = options.maxConcurrentPerHost
        // A backstop only: UpstreamSession's own deadline ends each attempt first.
        configuration.timeoutIntervalForRequest = options.timeout.seconds * 2 + 1
        configuration.timeoutIntervalForResource = options.timeout.seconds * 2 + 1
        session = UpstreamSession(configuration: configuration)
        gates = HostGates(limit: options.maxConcurrentPerHost, requestsPerSecond: options.requestsPerSecondPerHost,
                          patience: options.maxQueueWait)
    }

    deinit { session.invalidate() }

    public var counters: RemoteCounters { counts.withLock { $0 } }

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
        var urlRequest = URLRequest(url: url, timeoutInterval: options.timeout.seconds * 2 + 1)
        urlRequest.setValue(options.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in options.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let lastModified { urlRequest.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since") }

        let gate = await gates.gate(for: host)
        var retryAfter: Duration?
        for attempt in 0...options.retries {
            if attempt > 0 {
                try Task.checkCancellation()
                try await Task.sleep(for: options.backoffDelay(attempt: attempt, retryAfter: retryAfter))
            }
            guard await gate.acquire() else {
                try Task.checkCancellation()
                counts.withLock { $0.queueTimeouts += 1 }
                // Every slot is taken by a request that ends within the timeout.
                return .unavailable(retryAfter: options.timeout)
            }
            let answer = await session.exchange(urlRequest, deadline: options.timeout, maxBytes: options.maxBodyBytes)
            await gate.release()
            try Task.checkCancellation()
            let response: HTTPURLResponse, body: [UInt8]
            switch answer {
            case .failed: continue  // refused, reset, DNS: transient, try again
            case .deadlineExceeded:
                counts.withLock { $0.deadlines += 1 }
                return .unavailable(retryAfter: retryAfter)
            case .bodyTooLarge:
                throw badAnswer(.bodyTooLarge(url: text, maxBytes: options.maxBodyBytes))
            case .response(let r, let b):
                response = r
                body = b
            }
            let headers = response.allHeaderFields.reduce(into: [String: String]()) { $0["\($1.key)"] = "\($1.value)" }
            retryAfter = Self.retryAfter(headers)
            switch response.statusCode {
            case 200:
                let directives = CacheDirectives(headers: headers)
                let contentType = headers.first { $0.key.lowercased() == "content-type" }?.value
                let format: ImageFormat, image: RGBAImage
                do {
                    (format, image) = try Self.validated(body, contentType: contentType, url: text, maxSide: options.maxTileSide)
                } catch {
                    throw badAnswer(error)
                }
                let freshness = directives.freshness(now: Date().timeIntervalSince1970)
                return .tile(TileData(bytes: body, format: format, freshness: freshness, decoded: image), directives)
            case 304: return .notModified(CacheDirectives(headers: headers))
            case 204, 404, 410: return .noTile
            case 429: return .unavailable(retryAfter: retryAfter)  // asked to slow down: do not insist
            case 500...599: continue
            default: throw RemoteTileError.refused(status: response.statusCode, url: text)
            }
        }
        return .unavailable(retryAfter: retryAfter)
    }

    private func badAnswer(_ error: RemoteTileError) -> RemoteTileError {
        counts.withLock { $0.badAnswers += 1 }
        return error
    }

    /// The format of a 200's body when it is a good tile: an image Content-Type (or none),
    /// a known signature, a readable header that declares at most `maxSide` px a side
    /// (checked before decoding, so a decompression bomb costs nothing), and bytes that
    /// decode whole (a cut or padded file does not).
    static func validated(_ bytes: [UInt8], contentType: String?, url: String, maxSide: Int) throws(RemoteTileError) -> (ImageFormat, RGBAImage) {
        func hex() -> String { bytes.isEmpty ? "nothing" : bytes.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ") }
        if let contentType {
            let media = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            // Some servers label every tile as bytes; the signature and the decoder still decide.
            guard media.hasPrefix("image/") || media == "application/octet-stream" || media == "binary/octet-stream" else {
                throw .notAnImage(url: url, contentType: contentType, firstBytes: hex())
            }
        }
        guard let format = ImageFormat(sniffing: bytes) else { throw .notAnImage(url: url, contentType: contentType, firstBytes: hex()) }
        let header: ImageHeader
        do throws(CanvasError) { header = try ImageHeader(sniffing: bytes) } catch { throw .undecodable(url: url, format: format, reason: error.description) }
        let side = max(1, maxSide)
        let limits = ImageLimits(maxSide: side, maxPixels: side * side)
        guard limits.allows(width: header.width, height: header.height) else {
            throw .tileTooLarge(url: url, width: header.width, height: header.height, maxSide: maxSide)
        }
        do throws(CanvasError) {
            // The decoder re-reads the size and refuses one that differs from the header's.
            return (format, try RGBAImage(decoding: bytes, limits: limits))
        } catch {
            throw .undecodable(url: url, format: format, reason: error.description)
        }
    }


    /// `Retry-After` as delay-seconds (digits only, at most a day) or an HTTP date.
    static func retryAfter(_ headers: [String: String]) -> Duration? {
        guard let value = headers.first(where: { $0.key.lowercased() == "retry-after" })?.value else { return nil }
        let text = value.trimmingCharacters(in: .whitespaces)
        let day = 86_400.0
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            return .seconds(text.count > 6 ? day : min(Double(text) ?? day, day))
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        let seconds = date.timeIntervalSinceNow
        return .seconds(seconds.isFinite ? min(max(0, seconds), day) : 0)
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

