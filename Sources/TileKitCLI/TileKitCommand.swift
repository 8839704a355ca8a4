import Foundation

/// The `tilekit` command line: finds the command named by the leading words, binds its
/// options, runs it, and maps errors to exit codes in this one place.
public enum TileKitCommand {
    public static let version = "0.1.0"

    static let commands: [any Command.Type] = [
        TileAt.self, TileBounds.self, TileList.self, TileQuadkey.self, TileFromQuadkey.self,
        TileParent.self, TileChildren.self, URLCommand.self, InfoCommand.self, ConvertCommand.self, SeedCommand.self, CacheCommand.self, SnapshotCommand.self, SampleMapCommand.self,
        InitCommand.self, ValidateCommand.self, ServeCommand.self, PyramidCommand.self, MergeCommand.self, StitchCommand.self, SplitCommand.self, SimulateCommand.self,
    ]

    static var overview: String {
        let width = commands.map { $0.path.joined(separator: " ").count }.max() ?? 0
        let lines = commands.map { command in
            let name = command.path.joined(separator: " ")
            return "  " + name.padding(toLength: width + 3, withPad: " ", startingAt: 0) + command.summary
        }
        return """
        TileKit \(version): custom raster map tiles, overlays and snapshots.

        Usage: tilekit COMMAND [ARGUMENTS] [OPTIONS]

        Commands:
        \(lines.joined(separator: "\n"))

        Coordinates are LON,LAT and boxes W,S,E,N, in degrees (GeoJSON order).
        Run 'tilekit COMMAND --help' for a command's arguments and options.

        Exit codes: 0 success, 64 usage error, 65 bad input data, 74 I/O error,
        75 temporary failure (some tiles unavailable; run again), 1 other.
        """
    }

    /// Runs a command line (without the program name) and returns the exit code.
    public static func run(_ arguments: [String], io: CommandIO = .standard) async -> Int32 {
        if arguments.isEmpty {
            io.writeError(overview)
            return ExitCode.usage
        }
        if ["--help", "-h", "help"].contains(arguments[0]) {
            if arguments.count > 1 { return await run(Array(arguments.dropFirst()) + ["--help"], io: io) }
            io.write(overview)
            return ExitCode.success
        }
        if arguments[0] == "--version" {
            io.write("tilekit \(version)")
            return ExitCode.success
        }
        // The longest run of leading words that names a command.
        let match = commands
            .filter { arguments.starts(with: $0.path) }
            .max { $0.path.count < $1.path.count }
        guard let command = match else {
            return groupOrUnknown(arguments, io: io)
        }
        let rest = Array(arguments.dropFirst(command.path.count))
        do {
            let bound = try BoundArguments(Token.tokenize(rest), spec: command.options)
            if bound.flag("help") {
                io.write(command.help)
                return ExitCode.success
            }
            try await command.run(bound, io: io)
            return ExitCode.success
        } catch {
            io.writeError("\(command.displayName): \(error.description)")
            if case .usage = error { io.writeError("Run '\(command.displayName) --help' for usage.") }
            return error.exitCode
        }
    }

    /// `tilekit tile` (a group without its subcommand) lists the group; anything else is unknown.
    private static func groupOrUnknown(_ arguments: [String], io: CommandIO) -> Int32 {
        let group = commands.filter { $0.path.count > 1 && $0.path[0] == arguments[0] }
        guard !group.isEmpty else {
            io.writeError("tilekit: unknown command \"\(arguments[0])\"\nRun 'tilekit --help' for the list of commands.")
            return ExitCode.usage
        }
        let text = "Usage: tilekit \(arguments[0]) SUBCOMMAND ...\n\nSubcommands:\n"
            + group.map { "  \($0.path.dropFirst().joined(separator: " ")): \($0.summary)" }.joined(separator: "\n")
        let asked = arguments.count > 1 && ["--help", "-h"].contains(arguments[1])
        if asked {
            io.write(text)
            return ExitCode.success
        }
        if arguments.count > 1 {
            io.writeError("tilekit \(arguments[0]): unknown subcommand \"\(arguments[1])\"")
        }
        io.writeError(text)
        return ExitCode.usage
    }
}
