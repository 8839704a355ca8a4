import Foundation
internal import CMallocLimit

/// The target this process runs under libFuzzer: named by the program (`fuzz-geojson`, a
/// link `make fuzz` makes to the one binary) or by TILEKIT_FUZZ_TARGET.
let selectedTarget: FuzzTarget? = {
    let program = URL(fileURLWithPath: CommandLine.arguments.first ?? "").lastPathComponent
    if program.hasPrefix("fuzz-"), let target = FuzzTarget.named(String(program.dropFirst(5))) { return target }
    return ProcessInfo.processInfo.environment["TILEKIT_FUZZ_TARGET"].flatMap(FuzzTarget.named)
}()

#if FUZZING

// Built by `make fuzz` with -sanitize=fuzzer,address: libFuzzer provides main and calls these.

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard selectedTarget != nil else {
        FileHandle.standardError.write(Data("tilekit-fuzz: run as fuzz-TARGET or with TILEKIT_FUZZ_TARGET=TARGET; targets: \(FuzzTarget.all.map(\.name).joined(separator: " "))\n".utf8))
        exit(64)
    }
    _ = Scratch.shared
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = selectedTarget else { return -1 }
    target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

#else

/// Without libFuzzer: replays files through a target, in this process, with the limits
/// libFuzzer would apply (a run that needs more is a failure, as it is when fuzzing).
@main
enum Replay {
    static let usage = """
        usage: tilekit-fuzz list
               tilekit-fuzz TARGET PATH... [-v] [--timeout S] [--malloc-limit-mb N] [--rss-limit-mb N]
        Runs every file under PATH through TARGET, one after another, and fails (a signal, or
        exit 70) when one traps, takes longer than S seconds (20), makes a single allocation
        above N MB (2048) or takes the process above N MB of memory (2048), as libFuzzer would.
        """

    static func main() {
        var options = ReplayOptions()
        var positional = [String]()
        var arguments = CommandLine.arguments.dropFirst()[...]
        while let argument = arguments.popFirst() {
            switch argument {
            case "-v": options.verbose = true
            case "--timeout", "--malloc-limit-mb", "--rss-limit-mb":
                guard let text = arguments.popFirst(), let value = UInt32(text), value > 0 else { fail("\(argument) takes a positive whole number", code: 64) }
                switch argument {
                case "--timeout": options.timeoutSeconds = value
                case "--malloc-limit-mb": options.mallocLimitMB = Int(value)
                default: options.rssLimitMB = Int(value)
                }
            default: positional.append(argument)
            }
        }
        if positional == ["list"] {
            for target in FuzzTarget.all { print("\(target.name)\t\(target.input)") }
            return
        }
        guard positional.count >= 2 else { fail(usage, code: 64) }
        guard let target = FuzzTarget.named(positional[0]) else {
            fail("no target \"\(positional[0])\"; targets: \(FuzzTarget.all.map(\.name).joined(separator: " "))", code: 64)
        }
        let files = positional.dropFirst().flatMap(Self.files(under:))
        replay(files, through: target, options)
    }

    static func replay(_ files: [String], through target: FuzzTarget, _ options: ReplayOptions) {
        // The address space is capped as well, so that no input can take the machine's memory
        // in allocations that are each below the limit.
        var space = rlimit(rlim_cur: 8 << 30, rlim_max: 8 << 30)
        setrlimit(Int32(RLIMIT_AS.rawValue), &space)
        _ = Scratch.shared
        tk_malloc_limit_set(options.mallocLimitMB << 20)
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { fail("\(file): cannot be read", code: 66) }
            if options.verbose { FileHandle.standardError.write(Data("tilekit-fuzz: \(target.name) \(file)\n".utf8)) }
            alarm(options.timeoutSeconds)  // SIGALRM ends the process: a hang is a failure
            target.run(Array(data))
            alarm(0)
            let peak = peakMemoryMB()
            if peak > options.rssLimitMB {
                fail("\(file): the process took \(peak) MB of memory, above the limit of \(options.rssLimitMB) MB", code: 70)
            }
        }
        print("\(target.name): \(files.count) file\(files.count == 1 ? "" : "s") replayed, peak memory \(peakMemoryMB()) MB")
    }

    /// A file, or every file below a folder (READMEs aside), in a stable order.
    static func files(under path: String) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { fail("\(path): no such file or folder", code: 66) }
        guard isFolder.boolValue else { return [path] }
        let names = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
        return names.sorted().map { path + "/" + $0 }.filter { file in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: file, isDirectory: &isFolder) && !isFolder.boolValue
                && !URL(fileURLWithPath: file).lastPathComponent.hasPrefix("README")
        }
    }

    static func peakMemoryMB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss / 1024  // kilobytes on Linux
    }

    static func fail(_ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data("tilekit-fuzz: \(message)\n".utf8))
        exit(code)
    }
}

struct ReplayOptions {
    var verbose = false
    var timeoutSeconds: UInt32 = 20
    var mallocLimitMB = 2048
    var rssLimitMB = 2048
}

#endif
