/// What can be wrong with a shared-cache setting. Only configuration fails loudly: once a
/// cache is running, a Redis that is down, slow or full is counted, never thrown.
public enum SharedCacheError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The URL does not start with `redis://` (`scheme` is what it starts with, or "" if none).
    case unsupportedScheme(url: String, scheme: String)
    /// `rediss://` (TLS): Debian's hiredis 0.14 is built without TLS.
    case tlsUnsupported(url: String)
    /// No host between `redis://` and the port, path or end.
    case emptyHost(url: String)
    /// The port is not a whole number in 1...65535 (`port` is the text as given).
    case invalidPort(url: String, port: String)
    /// The path is not `/` followed by a database number in 0...`maxDatabase`.
    case invalidDatabase(url: String, database: String)
    /// A part this client does not understand (a query, a fragment, an unbracketed IPv6 address).
    case unsupportedPart(url: String, part: String, reason: String)

    /// The highest database number accepted (Redis' default `databases 16` allows 0...15;
    /// servers may configure more, so the client only refuses what cannot be a number).
    public static let maxDatabase = 1_000_000

    public var description: String {
        switch self {
        case .unsupportedScheme(let url, let scheme):
            let shown = scheme.isEmpty ? "no scheme" : "scheme \"\(scheme)\""
            return "shared cache URL \(url): \(shown) is not supported; write redis://HOST:PORT[/DB]"
        case .tlsUnsupported(let url):
            return "shared cache URL \(url): rediss:// (TLS) is not supported (Debian's hiredis 0.14 has no TLS); use redis:// on a trusted network or a TLS tunnel such as stunnel"
        case .emptyHost(let url):
            return "shared cache URL \(url): the host is empty; write redis://HOST:PORT[/DB]"
        case .invalidPort(let url, let port):
            return "shared cache URL \(url): port \"\(port)\" is not a number in 1-65535"
        case .invalidDatabase(let url, let database):
            return "shared cache URL \(url): database \"\(database)\" is not a number in 0-\(Self.maxDatabase) (write /DB after the port, e.g. /0)"
        case .unsupportedPart(let url, let part, let reason):
            return "shared cache URL \(url): \"\(part)\" is not supported: \(reason)"
        }
    }
}
