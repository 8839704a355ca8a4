/// How a command failed; the CLI maps each case to an exit code in one place
/// (BSD sysexits: usage 64, data 65, I/O 74; anything else 1).
public enum CLIError: Error, Equatable, CustomStringConvertible {
    /// The command line is wrong: an unknown option, a missing or malformed argument.
    case usage(String)
    /// An input file or value read from stdin is malformed.
    case data(String)
    /// A file could not be read or written.
    case io(String)
    /// Some of the work could not be done now (tiles unavailable); running again may finish it.
    case unavailable(String)
    case failure(String)

    public var exitCode: Int32 {
        switch self {
        case .usage: return ExitCode.usage
        case .data: return ExitCode.data
        case .io: return ExitCode.io
        case .unavailable: return ExitCode.temporaryFailure
        case .failure: return ExitCode.failure
        }
    }

    public var description: String {
        switch self {
        case .usage(let m), .data(let m), .io(let m), .unavailable(let m), .failure(let m): return m
        }
    }
}

/// Exit codes of `tilekit`, documented in `tilekit --help`.
public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let data: Int32 = 65
    public static let io: Int32 = 74
    public static let temporaryFailure: Int32 = 75
}
