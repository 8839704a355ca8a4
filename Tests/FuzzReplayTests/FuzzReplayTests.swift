import Foundation
import Testing
import TestSupport

/// Replays Fuzz/corpus and Fuzz/crashes through the `tilekit-fuzz` binary (Fuzz/README.md),
/// so that no input the fuzzer has seen can crash TileKit again.
///
/// Each input runs in a child process with libFuzzer's default limits (no single allocation
/// above 2048 MB, at most 2048 MB of memory, 20 s): a trap kills only that child, and each
/// crash file is its own test case, so one crash cannot hide another.
@Suite struct FuzzReplayTests {
    @Test("every target has a seed corpus, and every folder of Fuzz/ names a target")
    func foldersNameTargets() async throws {
        let listed = try #require(await Replay.run(["list"]))
        #expect(listed.status == 0, "\(listed.output)")
        let targets = Set(listed.output.split(separator: "\n").compactMap { $0.split(separator: "\t").first.map(String.init) })
        #expect(targets.count >= 17)
        #expect(Set(Replay.corpusTargets) == targets)
        #expect(Set(Replay.crashFiles.map { $0.split(separator: "/")[0] }.map(String.init)).isSubset(of: targets))
    }

    @Test("the seed corpus of each target replays without a crash", arguments: Replay.corpusTargets)
    func corpus(_ target: String) async throws {
        let result = try #require(await Replay.run([target, Replay.fuzz.appendingPathComponent("corpus/" + target).path, "-v"]))
        #expect(result.status == 0, "\(result.failure)")
    }

    @Test("a crash file of issue 11 or of a fuzzing run is an error now, not a crash", arguments: Replay.crashFiles)
    func crashFile(_ file: String) async throws {
        let target = String(file.split(separator: "/")[0])
        let result = try #require(await Replay.run([target, Replay.fuzz.appendingPathComponent("crashes/" + file).path]))
        #expect(result.status == 0, "\(result.failure)")
    }
}

/// Runs the replay binary; at most two at a time (the machine's cores), since the tests of a
/// suite run in parallel and a crash file may take seconds and a gigabyte.
enum Replay {
    static let root = repositoryRoot()
    static let fuzz = root.appendingPathComponent("Fuzz")
    static let slots = Slots(count: 2)

    static let corpusTargets: [String] = folders(in: fuzz.appendingPathComponent("corpus"))

    /// `target/file` for every file under Fuzz/crashes (READMEs aside).
    static let crashFiles: [String] = folders(in: fuzz.appendingPathComponent("crashes")).flatMap { target in
        let folder = fuzz.appendingPathComponent("crashes/" + target)
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
            .filter { !$0.hasPrefix("README") && !$0.hasPrefix(".") }.map { target + "/" + $0 }
    }

    static func folders(in url: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { name in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isFolder) && isFolder.boolValue
        }.sorted()
    }

    /// `tilekit-fuzz` beside the test bundle (`swift build --build-tests` builds it).
    static var binary: URL? {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        if folder.lastPathComponent == "MacOS" { folder = folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
        let candidates = [folder.appendingPathComponent("tilekit-fuzz"), root.appendingPathComponent(".build/debug/tilekit-fuzz")]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    struct Result: Sendable {
        let status: Int32
        let signaled: Bool
        let output: String

        /// Why the run failed, with the frame of TileKit where it stopped.
        var failure: String {
            let lines = output.split(separator: "\n").map(String.init)
            let message = lines.last { $0.contains("Fatal error") || $0.contains("exceeds the limit") || $0.contains("above the limit") }
            let frame = lines.first { $0.contains(" in tilekit-fuzz at ") && $0.contains("/Sources/") && !$0.contains("/Sources/TileKitFuzz/") && !$0.contains("/Sources/CMallocLimit/") }
            let file = lines.last { $0.hasPrefix("tilekit-fuzz: ") && $0.contains("/Fuzz/") && !$0.contains("limit") }  // with -v, the file being replayed
            let how = signaled ? "killed by signal \(status)\(status == 14 ? " (timed out)" : "")" : "exit status \(status)"
            return [how, file, message, frame.map { "at " + $0.trimmingCharacters(in: .whitespaces) }].compactMap { $0 }.joined(separator: "\n")
        }
    }

    /// Runs the binary with `arguments`, its output (stdout and stderr) to a file, so a long
    /// backtrace cannot fill a pipe; nil when the binary is not built.
    static func run(_ arguments: [String]) async -> Result? {
        guard let binary else {
            Issue.record("tilekit-fuzz is not built: run `swift build --build-tests` first")
            return nil
        }
        await slots.take()
        defer { Task { await slots.give() } }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-fuzz-replay-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        guard let handle = try? FileHandle(forWritingTo: log) else { return nil }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        var environment = ProcessInfo.processInfo.environment
        // The Swift runtime's backtrace of a trap gives the failing frame; no colours, one thread.
        environment["SWIFT_BACKTRACE"] = "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none"
        // The files a target writes go to a folder of this run, removed even when the child traps.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-fuzz-replay-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        environment["TILEKIT_FUZZ_SCRATCH"] = scratch.path
        process.environment = environment
        let status: (Int32, Bool)? = await withCheckedContinuation { continuation in
            process.terminationHandler = { done in continuation.resume(returning: (done.terminationStatus, done.terminationReason == .uncaughtSignal)) }
            do { try process.run() } catch { continuation.resume(returning: nil) }
        }
        try? handle.close()
        guard let status else { return nil }
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Result(status: status.0, signaled: status.1, output: output)
    }
}

/// A counting semaphore for async code.
actor Slots {
    private var free: Int
    private var waiting = [CheckedContinuation<Void, Never>]()

    init(count: Int) { free = count }

    func take() async {
        if free > 0 { free -= 1; return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}
