internal import CHiredis
import Glibc

/// One blocking hiredis connection, owned by one worker thread for its whole life (never
/// shared, never sent elsewhere, so it is not `Sendable`). After any connection-level
/// failure hiredis marks the context unusable and the reply stream may be out of step, so
/// the owner drops the connection and opens a new one.
final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>

    private init(context: UnsafeMutablePointer<redisContext>) {
        self.context = context
    }

    deinit { redisFree(context) }

    /// Connects, authenticates and selects the database; every read and write afterwards
    /// gives up after `ioTimeout`.
    static func open(_ url: RedisURL, connectTimeout: Duration, ioTimeout: Duration) -> Result<RedisConnection, RedisFault> {
        // RedisURL(parsing:) checks the port; one built in code might not be.
        guard (1...65535).contains(url.port), let port = Int32(exactly: url.port) else {
            return .failure(RedisFault(kind: .connection, message: "connect to \(url): port \(url.port) is not in 1-65535"))
        }
        var savedErrno: Int32 = 0
        let opened = url.host.withCString { host in
            tk_redis_connect(host, port, timeval(connectTimeout), timeval(ioTimeout), &savedErrno)
        }
        guard let context = opened else {
            return .failure(RedisFault(kind: .connection, message: "connect to \(url): hiredis could not allocate a context"))
        }
        if context.pointee.err != 0 {
            let fault = Self.fault(context, savedErrno: savedErrno, doing: "connect to \(url)")
            redisFree(context)
            return .failure(fault)
        }
        let connection = RedisConnection(context: context)
        if let password = url.password {
            let words = url.username.map { ["AUTH", $0, password] } ?? ["AUTH", password]
            if case .failure(let fault) = connection.expectOK(words.map { Array($0.utf8) }, doing: "AUTH at \(url)") { return .failure(fault) }
        }
        if url.database != 0 {
            if case .failure(let fault) = connection.expectOK([Array("SELECT".utf8), Array(String(url.database).utf8)], doing: "SELECT \(url.database) at \(url)") {
                return .failure(fault)
            }
        }
        return .success(connection)
    }

    /// What Redis answered. Error replies are answers (the connection stays usable).
    enum Reply: Equatable {
        case bytes([UInt8])
        case null
        case status(String)
        case integer(Int64)
        case error(String)
        case other(Int32)
    }

    /// Sends one command whose arguments may hold any bytes (binary-safe: lengths are given,
    /// nothing is a C string) and waits for its reply. A failure means the connection is dead.
    func run(_ arguments: [[UInt8]]) -> Result<Reply, RedisFault> {
        // One buffer for all arguments, so one pointer stays valid for the whole call.
        var lengths = [Int]()
        var joined = [UInt8]()
        joined.reserveCapacity(arguments.reduce(0) { $0 + $1.count })
        for argument in arguments {
            lengths.append(argument.count)
            joined.append(contentsOf: argument)
        }
        var savedErrno: Int32 = 0
        let raw: UnsafeMutableRawPointer? = joined.withUnsafeBufferPointer { buffer in
            var pointers = [UnsafePointer<CChar>?]()
            var offset = 0
            let base = UnsafeRawPointer(buffer.baseAddress)
            for length in lengths {
                pointers.append(base.map { ($0 + offset).assumingMemoryBound(to: CChar.self) })
                offset += length
            }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { lens in
                    tk_redis_command_argv(context, Int32(arguments.count), argv.baseAddress, lens.baseAddress, &savedErrno)
                }
            }
        }
        guard let raw else {
            let name = arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "command"
            return .failure(Self.fault(context, savedErrno: savedErrno, doing: name))
        }
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(raw) }
        let r = reply.pointee
        func text() -> String {
            guard let str = r.str else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: str, count: r.len), as: UTF8.self)
        }
        switch r.type {
        case REDIS_REPLY_STRING:
            guard let str = r.str else { return .success(.bytes([])) }
            return .success(.bytes(Array(UnsafeRawBufferPointer(start: str, count: r.len))))
        case REDIS_REPLY_NIL: return .success(.null)
        case REDIS_REPLY_STATUS: return .success(.status(text()))
        case REDIS_REPLY_INTEGER: return .success(.integer(r.integer))
        case REDIS_REPLY_ERROR: return .success(.error(text()))
        default: return .success(.other(r.type))
        }
    }

    /// Runs a setup command that must answer `+OK`.
    private func expectOK(_ arguments: [[UInt8]], doing what: String) -> Result<Void, RedisFault> {
        switch run(arguments) {
        case .success(.status("OK")): return .success(())
        case .success(.error(let message)): return .failure(RedisFault(kind: Self.kind(ofErrorReply: message), message: "\(what): \(message)"))
        case .success(let other): return .failure(RedisFault(kind: .protocolError, message: "\(what): unexpected answer \(other)"))
        case .failure(let fault): return .failure(RedisFault(kind: fault.kind, message: "\(what): \(fault.message)"))
        }
    }

    /// The kind of an error reply, from its first word (Redis' error prefixes).
    static func kind(ofErrorReply message: String) -> RedisFailure {
        if message.hasPrefix("OOM ") { return .full }
        if message.hasPrefix("READONLY ") { return .readOnly }
        return .reply
    }

    /// What went wrong with the context, classified. A socket timeout shows as an I/O
    /// error with EAGAIN (SO_RCVTIMEO/SO_SNDTIMEO) or ETIMEDOUT (connect).
    private static func fault(_ context: UnsafeMutablePointer<redisContext>, savedErrno: Int32, doing what: String) -> RedisFault {
        let message = withUnsafeBytes(of: context.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        let kind: RedisFailure
        switch context.pointee.err {
        case REDIS_ERR_IO where savedErrno == EAGAIN || savedErrno == EWOULDBLOCK || savedErrno == ETIMEDOUT || savedErrno == EINPROGRESS:
            kind = .timeout
        case REDIS_ERR_IO, REDIS_ERR_EOF, REDIS_ERR_OTHER: kind = .connection
        default: kind = .protocolError  // REDIS_ERR_PROTOCOL, REDIS_ERR_OOM (the client's malloc)
        }
        return RedisFault(kind: kind, message: "\(what): \(message.isEmpty ? "error \(context.pointee.err)" : message)")
    }
}

extension timeval {
    /// `duration` as seconds and microseconds; callers pass durations already clamped to a
    /// sane range by `RedisTileCache.Options`.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self.init(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
