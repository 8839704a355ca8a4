/// What kind of failure an error is, in the terms a command's exit status speaks (BSD sysexits).
/// Each domain error enum declares its category per case, so a given error means the same
/// exit code whichever command meets it; the CLI maps categories to codes in one place
/// (Sources/TileKitCLI/CLIError.swift).
public enum ExitCategory: Sendable, Equatable, CaseIterable {
    /// The request was wrong: an option, an argument, a value the user gave (64).
    case usage
    /// An input file says something wrong: malformed, corrupt, inconsistent (65).
    case data
    /// A file or device could not be read, written or found: missing file, permission, full disk (74).
    case io
    /// Anything else: the program could not do what was asked for another reason (1).
    case software
}

/// An error that declares its `ExitCategory`; the CLI needs no knowledge of its cases.
public protocol CategorizedError: Error {
    var exitCategory: ExitCategory { get }
}
