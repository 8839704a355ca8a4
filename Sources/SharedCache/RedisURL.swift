import Foundation

/// Where a Redis server is: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, the form of the
/// IANA `redis` URI scheme that redis-cli and most clients accept.
///
/// - HOST: a name, an IPv4 address, or an IPv6 address in brackets (`[::1]`). A name is
///   resolved on every (re)connect by getaddrinfo, which no timeout bounds: prefer an address
///   or a name the local resolver answers at once (`/etc/hosts`, a cluster DNS).
/// - PORT: 1...65535; 6379 when left out.
/// - DB: the database number for `SELECT`; 0 when left out.
/// - USER and PASSWORD (percent-encoded) are sent with `AUTH` after each connect; a password
///   alone (`redis://:secret@host`) is the pre-6.0 form.
/// `rediss://` (TLS) and Unix sockets are not supported.
public struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let database: Int
    public let username: String?
    public let password: String?

    public static let defaultPort = 6379

    public init(host: String, port: Int = RedisURL.defaultPort, database: Int = 0, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.username = username
        self.password = password
    }

    /// Parses `text`; the error names the URL (with any password hidden) and the bad part.
    public init(parsing text: String) throws(SharedCacheError) {
        let shown = Self.redacted(text)
        guard let schemeEnd = text.range(of: "://") else { throw .unsupportedScheme(url: shown, scheme: "") }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        if scheme == "rediss" { throw .tlsUnsupported(url: shown) }
        guard scheme == "redis" else { throw .unsupportedScheme(url: shown, scheme: scheme) }
        let rest = text[schemeEnd.upperBound...]
        if let mark = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            throw .unsupportedPart(url: shown, part: String(rest[mark...]), reason: "options go on the command line, not in the URL")
        }
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)

        var hostAndPort = Substring(authority)
        var username: String?
        var password: String?
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostAndPort = authority[authority.index(after: at)...]
            guard let colon = userInfo.firstIndex(of: ":") else {
                // Some clients read `redis://SECRET@host` as a password: never print it.
                throw .unsupportedPart(url: shown, part: "***@", reason: "a user name needs a password: redis://USER:PASSWORD@HOST")
            }
            let user = String(userInfo[..<colon])
            guard let decodedUser = user.removingPercentEncoding,
                  let decodedPassword = String(userInfo[userInfo.index(after: colon)...]).removingPercentEncoding else {
                throw .unsupportedPart(url: shown, part: "user information", reason: "it has a malformed percent escape")
            }
            username = decodedUser.isEmpty ? nil : decodedUser
            password = decodedPassword
        }

        let host: Substring
        var portText: Substring?
        if hostAndPort.first == "[" {
            guard let close = hostAndPort.firstIndex(of: "]") else {
                throw .unsupportedPart(url: shown, part: String(hostAndPort), reason: "an IPv6 address needs its closing bracket")
            }
            host = hostAndPort[hostAndPort.index(after: hostAndPort.startIndex)..<close]
            let after = hostAndPort[hostAndPort.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else {
                    throw .unsupportedPart(url: shown, part: String(after), reason: "only :PORT may follow the address")
                }
                portText = after.dropFirst()
            }
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw .unsupportedPart(url: shown, part: String(host), reason: "not an IPv6 address")
            }
        } else {
            let parts = hostAndPort.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else {
                throw .unsupportedPart(url: shown, part: String(hostAndPort), reason: "an IPv6 address must be written in brackets, e.g. redis://[::1]:6379")
            }
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "." || $0 == "-" || $0 == "_" }) else {
                throw .unsupportedPart(url: shown, part: String(host), reason: "not a host name or an IP address")
            }
        }
        guard !host.isEmpty else { throw .emptyHost(url: shown) }

        var port = Self.defaultPort
        if let portText {
            guard portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(portText), (1...65535).contains(number) else {
                throw .invalidPort(url: shown, port: String(portText))
            }
            port = number
        }

        var database = 0
        let databaseText = path.dropFirst()  // the "/"
        if !databaseText.isEmpty {
            guard databaseText.count <= 7, databaseText.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(databaseText),
                  (0...SharedCacheError.maxDatabase).contains(number) else {
                throw .invalidDatabase(url: shown, database: String(databaseText))
            }
            database = number
        }
        self.init(host: String(host), port: port, database: database, username: username, password: password)
    }

    /// The URL without its password, for logs and errors.
    public var description: String {
        var text = "redis://"
        if password != nil { text += (username ?? "") + ":***@" }
        text += host.contains(":") ? "[\(host)]" : host
        text += ":\(port)"
        if database != 0 { text += "/\(database)" }
        return text
    }

    /// `text` with whatever sits between "://" and the last "@" before the path replaced, so
    /// that an error message never prints a password.
    static func redacted(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let rest = text[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return text }
        return String(text[..<schemeEnd.upperBound]) + "***" + String(text[at...])
    }
}
