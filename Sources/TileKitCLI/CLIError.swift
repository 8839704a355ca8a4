import MBTiles
import TileMath
import TileSources
import MapProjects

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

extension CLIError {
    /// What a command was doing with a file when a library call failed.
    public enum FileAccess: Sendable { case reading, writing }

    /// The one mapping of library failures to exits. The machine's failures (a full disk or
    /// quota, an I/O error, a read-only file system, a permission, a missing file), whichever
    /// layer reported them, are I/O (74) with a message naming `file` (the destination the
    /// user gave, when writing) and the cause in words ("no space left on device"); any other
    /// domain error exits as the `ExitCategory` its module declares for it (`CategorizedError`);
    /// a file whose contents are wrong (any other failure while reading, a corrupt SQLite file)
    /// is data (65); anything else is a failure (1).
    public init(_ error: any Error, _ access: FileAccess, _ file: String) {
        switch error {
        case let error as CLIError: self = error
        case let error as TileSourceError: self = CLIError(error)  // names its file
        default:
            if let cause = IOFailure.cause(of: error) {
                self = .io("\(file): cannot \(access == .reading ? "read" : "write"): \(cause)")
            } else if let error = error as? any CategorizedError {
                self = CLIError(error)  // what its module declares
            } else if let error = error as? SQLiteError {
                self = .data(error.description)  // it names its file
            } else if access == .reading {
                self = .data("\(file): \(error)")
            } else {
                self = .failure("\(file): \(error)")
            }
        }
    }

    /// A domain error, by the category its module declares for it (`ExitCategory`): the one
    /// place where categories become exits, so an error means the same code in every command.
    /// Its message names its own file.
    public init(_ error: any CategorizedError) {
        self.init(error, message: String(describing: error))
    }

    /// A domain error by its declared category, told in the command's words (a message that
    /// names the option the file came from, say).
    public init(_ error: any CategorizedError, message: String) {
        switch error.exitCategory {
        case .usage: self = .usage(message)
        case .data: self = .data(message)
        case .io: self = .io(message)
        case .software: self = .failure(message)
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
