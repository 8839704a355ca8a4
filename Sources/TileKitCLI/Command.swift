import Foundation
import TileSources

/// Where a command reads and writes: the real terminal in `tilekit`, buffers in tests.
public struct CommandIO: Sendable {
    public var readLine: @Sendable () -> String?
    public var write: @Sendable (String) -> Void
    public var writeError: @Sendable (String) -> Void

    public init(readLine: @escaping @Sendable () -> String?, write: @escaping @Sendable (String) -> Void,
                writeError: @escaping @Sendable (String) -> Void) {
        self.readLine = readLine
        self.write = write
        self.writeError = writeError
    }

    /// Standard input, output and error.
    public static let standard = CommandIO(
        readLine: { Swift.readLine(strippingNewline: true) },
        write: { text in StandardStream.write(text + "\n", to: STDOUT_FILENO) },
        writeError: { text in StandardStream.write(text + "\n", to: STDERR_FILENO) })
}

/// Writes to standard output and error with write(2). Foundation's `FileHandle.write(_:)`
/// traps when the write fails (its `try!`), so `tilekit tile list > file` on a full disk
/// crashed; here a failed write of standard output ends the process with exit 74 and the
/// cause, as `cat` and `seq` do (a failed write of standard error is dropped: nowhere to say it).
enum StandardStream {
    static func write(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { Glibc.write(fd, $0 + offset, buffer.count - offset) } ?? 0
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                if fd == STDOUT_FILENO {
                    let cause = count < 0 ? IOFailure.words(errno: errno) : "nothing written"
                    write("tilekit: standard output: cannot write: \(cause)\n", to: STDERR_FILENO)
                    exit(ExitCode.io)
                }
                return
            }
            offset += count
        }
    }
}

/// One `tilekit` command: its words, help text, options and what it does.
protocol Command: SendableMetatype {
    /// The words that select it, e.g. `["tile", "at"]`.
    static var path: [String] { get }
    static var summary: String { get }
    /// Usage lines, arguments and options, printed by `--help`.
    static var help: String { get }
    static var options: OptionSpec { get }
    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError)
}

extension Command {
    static var displayName: String { "tilekit " + path.joined(separator: " ") }

    /// Runs `body` on each input: the argument itself, or each non-empty line of stdin when
    /// the argument is `-`. An error on a stdin line says which line.
    static func eachInput(_ argument: String, io: CommandIO, _ body: (String) throws(CLIError) -> Void) throws(CLIError) {
        guard argument == "-" else {
            try body(argument)
            return
        }
        var lineNumber = 0
        while let line = io.readLine() {
            lineNumber += 1
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            do {
                try body(trimmed)
            } catch {
                switch error {
                case .usage(let m): throw .usage("stdin line \(lineNumber): \(m)")
                default: throw error
                }
            }
        }
    }

    static func required(_ arguments: BoundArguments, _ option: String) throws(CLIError) -> String {
        guard let value = arguments.values[option] else { throw .usage("missing option --\(option)") }
        return value
    }

    static func expectPositionals(_ arguments: BoundArguments, _ count: ClosedRange<Int>, _ names: String) throws(CLIError) {
        guard count.contains(arguments.positionals.count) else {
            if arguments.positionals.count < count.lowerBound { throw .usage("missing \(names)") }
            throw .usage("unexpected argument \"\(arguments.positionals[count.upperBound])\"")
        }
    }
}
