import Foundation
import Synchronization
@testable import TileKitCLI

/// Runs `tilekit` in process with stdin lines and captured output.
struct CLIRun {
    let exitCode: Int32
    let output: [String]
    let error: String

    init(_ arguments: [String], stdin: [String] = []) async {
        let input = Mutex(stdin[...])
        let out = Mutex([String]()), err = Mutex([String]())
        let io = CommandIO(
            readLine: { input.withLock { $0.popFirst() } },
            write: { text in out.withLock { $0.append(contentsOf: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)) } },
            writeError: { text in err.withLock { $0.append(text) } })
        exitCode = await TileKitCommand.run(arguments, io: io)
        output = out.withLock { $0 }
        error = err.withLock { $0.joined(separator: "\n") }
    }

    init(_ line: String, stdin: [String] = []) async {
        await self.init(line.split(separator: " ").map(String.init), stdin: stdin)
    }
}
