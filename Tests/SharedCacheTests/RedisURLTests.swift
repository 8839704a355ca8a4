import Testing
@testable import SharedCache

@Suite struct RedisURLTests {
    @Test(arguments: [
        ("redis://127.0.0.1:6379", RedisURL(host: "127.0.0.1", port: 6379)),
        ("redis://cache.internal", RedisURL(host: "cache.internal", port: 6379)),
        ("redis://localhost:6380/2", RedisURL(host: "localhost", port: 6380, database: 2)),
        ("redis://localhost:6380/", RedisURL(host: "localhost", port: 6380)),
        ("REDIS://redis-0.redis_svc:7000", RedisURL(host: "redis-0.redis_svc", port: 7000)),
        ("redis://[::1]:6379/1", RedisURL(host: "::1", port: 6379, database: 1)),
        ("redis://[::1]", RedisURL(host: "::1")),
        ("redis://:s3cret@10.0.0.5:6379", RedisURL(host: "10.0.0.5", password: "s3cret")),
        ("redis://tiles:p%40ss%3Aword@10.0.0.5", RedisURL(host: "10.0.0.5", username: "tiles", password: "p@ss:word")),
        ("redis://host:65535/15", RedisURL(host: "host", port: 65535, database: 15)),
    ])
    func parses(_ text: String, _ expected: RedisURL) throws {
        #expect(try RedisURL(parsing: text) == expected)
    }

    @Test(arguments: [
        ("127.0.0.1:6379", SharedCacheError.unsupportedScheme(url: "127.0.0.1:6379", scheme: "")),
        ("http://127.0.0.1:6379", .unsupportedScheme(url: "http://127.0.0.1:6379", scheme: "http")),
        ("unix:///run/redis.sock", .unsupportedScheme(url: "unix:///run/redis.sock", scheme: "unix")),
        ("rediss://cache:6380", .tlsUnsupported(url: "rediss://cache:6380")),
        ("redis://", .emptyHost(url: "redis://")),
        ("redis://:6379", .emptyHost(url: "redis://:6379")),
        ("redis:///0", .emptyHost(url: "redis:///0")),
        ("redis://[]:6379", .emptyHost(url: "redis://[]:6379")),
        ("redis://host:", .invalidPort(url: "redis://host:", port: "")),
        ("redis://host:0", .invalidPort(url: "redis://host:0", port: "0")),
        ("redis://host:65536", .invalidPort(url: "redis://host:65536", port: "65536")),
        ("redis://host:99999999999999999999", .invalidPort(url: "redis://host:99999999999999999999", port: "99999999999999999999")),
        ("redis://host:-1", .invalidPort(url: "redis://host:-1", port: "-1")),
        ("redis://host:+80", .invalidPort(url: "redis://host:+80", port: "+80")),
        ("redis://host:６３７９", .invalidPort(url: "redis://host:６３７９", port: "６３７９")),
        ("redis://host/x", .invalidDatabase(url: "redis://host/x", database: "x")),
        ("redis://host/-1", .invalidDatabase(url: "redis://host/-1", database: "-1")),
        ("redis://host/1/2", .invalidDatabase(url: "redis://host/1/2", database: "1/2")),
        ("redis://host/99999999", .invalidDatabase(url: "redis://host/99999999", database: "99999999")),
        ("redis://host?timeout=5", .unsupportedPart(url: "redis://host?timeout=5", part: "?timeout=5", reason: "options go on the command line, not in the URL")),
        ("redis://::1:6379", .unsupportedPart(url: "redis://::1:6379", part: "::1:6379", reason: "an IPv6 address must be written in brackets, e.g. redis://[::1]:6379")),
        ("redis://[::1:6379", .unsupportedPart(url: "redis://[::1:6379", part: "[::1:6379", reason: "an IPv6 address needs its closing bracket")),
        ("redis://[::1]x", .unsupportedPart(url: "redis://[::1]x", part: "x", reason: "only :PORT may follow the address")),
        ("redis://ho st:6379", .unsupportedPart(url: "redis://ho st:6379", part: "ho st", reason: "not a host name or an IP address")),
        ("redis://user@host", .unsupportedPart(url: "redis://***@host", part: "***@", reason: "a user name needs a password: redis://USER:PASSWORD@HOST")),
        ("redis://:secret@host:70000", .invalidPort(url: "redis://***@host:70000", port: "70000")),
    ])
    func refuses(_ text: String, _ expected: SharedCacheError) {
        #expect(throws: expected) { try RedisURL(parsing: text) }
    }

    @Test func messagesNameTheURLAndTheProblem() {
        let cases: [(String, [String])] = [
            ("redis://host:70000", ["redis://host:70000", "port \"70000\"", "1-65535"]),
            ("rediss://cache", ["rediss://cache", "TLS", "not supported"]),
            ("http://cache", ["http://cache", "scheme \"http\"", "redis://HOST:PORT[/DB]"]),
            ("redis://host/abc", ["redis://host/abc", "database \"abc\""]),
            ("redis://:6379", ["redis://:6379", "host is empty"]),
        ]
        for (text, fragments) in cases {
            do {
                _ = try RedisURL(parsing: text)
                Issue.record("\(text) parsed")
            } catch {
                for fragment in fragments { #expect(error.description.contains(fragment), "\(error.description) lacks \(fragment)") }
            }
        }
    }

    @Test func descriptionHidesThePassword() throws {
        let url = try RedisURL(parsing: "redis://tiles:hunter2@10.0.0.5:6380/4")
        #expect(url.description == "redis://tiles:***@10.0.0.5:6380/4")
        #expect(try RedisURL(parsing: "redis://[::1]").description == "redis://[::1]:6379")
    }
}
