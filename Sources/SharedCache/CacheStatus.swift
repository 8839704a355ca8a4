/// The value of an RFC 9211 `Cache-Status` response header: which caches a tile request met
/// and what each did. https://www.rfc-editor.org/rfc/rfc9211
///
/// Build it in the order the request met the caches (the memory cache first, then Redis);
/// `headerValue` writes them in the order RFC 9211 §2 requires, the cache nearest the origin
/// first and the one nearest the user last. A memory miss answered by Redis is therefore
/// `tilekit-redis; hit, tilekit-memory; fwd=miss; stored`.
///
/// Parameters are those of RFC 9211 §2.1-2.8, written as Structured Field parameters
/// (RFC 8941): a true Boolean is the bare key (`hit`, `stored`), a false one `=?0`.
public struct CacheStatus: Sendable, Equatable, CustomStringConvertible {
    /// Why a cache passed the request on (RFC 9211 §2.2, `fwd`).
    public enum Forward: String, Sendable, Equatable, CaseIterable {
        /// The cache was configured not to handle this request (or was unavailable: say why in `detail`).
        case bypass
        /// The request method is not cacheable.
        case method
        /// No stored response matched the request's URI.
        case uriMiss = "uri-miss"
        /// A stored response matched the URI but not its `Vary` headers.
        case varyMiss = "vary-miss"
        /// No stored response could satisfy the request.
        case miss
        /// The request's own headers (`Cache-Control: no-cache`) forbade using a stored response.
        case request
        /// A stored response was stale and needed revalidation.
        case stale
        /// Only part of the response was stored.
        case partial
    }

    /// What one cache did with the request.
    public struct Entry: Sendable, Equatable {
        /// The cache's name: an RFC 8941 Token (`tilekit-memory`) or, if it is not one, a String.
        public var cache: String
        /// True: the cache answered from its store.
        public var hit: Bool
        /// Why the cache passed the request on; nil for a hit.
        public var forward: Forward?
        /// The status the next hop answered a forwarded request with (`fwd-status`).
        public var forwardStatus: Int?
        /// The response's remaining freshness in seconds, negative when stale (`ttl`).
        public var ttl: Int?
        /// True when the cache stored the response it forwarded (`stored`).
        public var stored: Bool
        /// True: collapsed with other requests and reused; false: tried to but could not;
        /// nil: not said (`collapsed`).
        public var collapsed: Bool?
        /// Anything else, such as why a cache was bypassed (`detail`): a Token when it is one,
        /// otherwise a String.
        public var detail: String?

        public init(cache: String, hit: Bool, forward: Forward? = nil, forwardStatus: Int? = nil, ttl: Int? = nil, stored: Bool = false,
                    collapsed: Bool? = nil, detail: String? = nil) {
            self.cache = cache
            self.hit = hit
            self.forward = forward
            self.forwardStatus = forwardStatus
            self.ttl = ttl
            self.stored = stored
            self.collapsed = collapsed
            self.detail = detail
        }

        /// The cache answered from its store.
        public static func hit(_ cache: String, ttl: Int? = nil) -> Entry {
            Entry(cache: cache, hit: true, ttl: ttl)
        }

        /// The cache did not have the response and passed the request on; `stored` when it
        /// kept what came back.
        public static func miss(_ cache: String, stored: Bool = false, collapsed: Bool? = nil) -> Entry {
            Entry(cache: cache, hit: false, forward: .miss, stored: stored, collapsed: collapsed)
        }

        /// The cache was not consulted: configured off, or unavailable (`detail` says which,
        /// for example `unavailable` while Redis is down).
        public static func bypass(_ cache: String, detail: String? = nil) -> Entry {
            Entry(cache: cache, hit: false, forward: .bypass, detail: detail)
        }

        /// This entry as one RFC 8941 list member (`tilekit-redis; hit`).
        public var member: String {
            var out = CacheStatus.tokenOrString(cache)
            if hit { out += "; hit" }
            if let forward { out += "; fwd=\(forward.rawValue)" }
            if let forwardStatus { out += "; fwd-status=\(forwardStatus)" }
            if let ttl { out += "; ttl=\(ttl)" }
            if stored { out += "; stored" }
            if let collapsed { out += collapsed ? "; collapsed" : "; collapsed=?0" }
            if let detail { out += "; detail=\(CacheStatus.tokenOrString(detail))" }
            return out
        }
    }

    /// The caches in the order the request met them: nearest the user first.
    public var lookupOrder: [Entry]

    public init(lookupOrder: [Entry]) {
        self.lookupOrder = lookupOrder
    }

    /// The header's value: nearest the origin first, as RFC 9211 §2 orders the list.
    public var headerValue: String {
        lookupOrder.reversed().map(\.member).joined(separator: ", ")
    }

    public var description: String { headerValue }

    /// `text` as an RFC 8941 Token when it is one (ALPHA or `*`, then tchar, `:` or `/`),
    /// otherwise as a String: quoted, with `"` and `\` escaped and anything outside printable
    /// ASCII (which a String cannot hold) replaced by `?`.
    static func tokenOrString(_ text: String) -> String {
        if isToken(text) { return text }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22, 0x5c: out += "\\" + String(scalar)
            case 0x20...0x7e: out.unicodeScalars.append(scalar)
            default: out += "?"
            }
        }
        return out + "\""
    }

    static func isToken(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCIILetter || first == "*" else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCIILetter || ("0"..."9").contains($0) || "!#$%&'*+-.^_`|~:/".unicodeScalars.contains($0) }
    }
}

private extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
