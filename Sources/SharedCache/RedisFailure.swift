/// Why a shared-cache call did not reach or could not use Redis. None of these reaches the
/// caller: a failed `get` is a miss and a failed `set` is dropped; each is counted by kind.
public enum RedisFailure: String, CaseIterable, Sendable, Hashable {
    /// No answer within the timeout: a slow Redis (a long command, a fork, swapping) or a
    /// host that drops packets. The connection is closed and Redis is left alone until the
    /// reconnect interval has passed.
    case timeout
    /// Could not connect, or the connection was refused, reset or closed by Redis.
    case connection
    /// Redis is full: `OOM command not allowed when used memory > 'maxmemory'` (a
    /// `noeviction` policy). Reads still work; the store is dropped.
    case full
    /// `READONLY`: the address points at a replica (for example during a failover).
    case readOnly = "read_only"
    /// Any other error reply (`LOADING`, `NOAUTH`, `WRONGPASS`, `WRONGTYPE`, ...).
    case reply
    /// An answer hiredis could not parse or that makes no sense for the command.
    case protocolError = "protocol"
    /// Every connection stayed busy for longer than the timeout, or too many calls waited.
    case busy
}

/// A failure with what hiredis or Redis said, for logs and `lastFailure`.
struct RedisFault: Error, Sendable {
    let kind: RedisFailure
    let message: String
}
