import Foundation
import Glibc

/// A real `redis-server` (Debian `redis-server`) on 127.0.0.1 at a free port, with nothing
/// persisted (`--save "" --appendonly no`) and DEBUG allowed (for `DEBUG SLEEP`). Killed when
/// released.
public final class RedisServerProcess: @unchecked Sendable {  // process is touched only by init, kill and deinit, from one test
    public let port: Int
    /// Given to redis-cli when the server has `--requirepass`.
    public let password: String?
    private let process = Process()
    private let folder: URL

    static let serverPath = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let cliPath = ["/usr/bin/redis-cli", "/usr/local/bin/redis-cli"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static var isInstalled: Bool { serverPath != nil && cliPath != nil }
    public static let missingMessage = "redis-server is not installed: run `bash scripts/install-deps.sh redis-server` (Debian redis-server and redis-tools)"

    public enum Failure: Error, CustomStringConvertible {
        case notInstalled
        case didNotStart(port: Int, log: String)
        public var description: String {
            switch self {
            case .notInstalled: return RedisServerProcess.missingMessage
            case .didNotStart(let port, let log): return "redis-server on port \(port) did not answer PING; its log:\n\(log)"
            }
        }
    }

    /// Starts redis-server with `arguments` added (e.g. `["--maxmemory", "1mb"]`) on `port`
    /// (nil: a free one) and waits until it answers PING.
    public init(_ arguments: [String] = [], port: Int? = nil, password: String? = nil) throws {
        guard let server = Self.serverPath else { throw Failure.notInstalled }
        self.password = password
        self.port = try port ?? Self.freePort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: server)
        process.arguments = ["--port", String(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--enable-debug-command", "yes", "--daemonize", "no", "--dir", folder.path,
                             "--logfile", folder.appendingPathComponent("redis.log").path] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while cli("PING") != "PONG" {
            guard Date() < deadline, process.isRunning else {
                let log = (try? String(contentsOf: folder.appendingPathComponent("redis.log"), encoding: .utf8)) ?? "(no log)"
                kill()
                throw Failure.didNotStart(port: self.port, log: log)
            }
            usleep(10_000)
        }
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: folder)
    }

    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Kills the server at once (SIGKILL: no goodbye on its connections) and waits for it.
    public func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Runs `redis-cli -p PORT arguments...` and returns its output without the last newline.
    @discardableResult
    public func cli(_ arguments: String...) -> String {
        cli(arguments)
    }

    public func cli(_ arguments: [String]) -> String {
        guard let path = Self.cliPath else { return "" }
        let run = Process()
        run.executableURL = URL(fileURLWithPath: path)
        run.arguments = ["-h", "127.0.0.1", "-p", String(port)] + (password.map { ["-a", $0, "--no-auth-warning"] } ?? []) + arguments
        let output = Pipe()
        run.standardOutput = output
        run.standardError = FileHandle.nullDevice
        guard (try? run.run()) != nil else { return "" }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        run.waitUntilExit()
        var text = String(decoding: data, as: UTF8.self)
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// Starts `redis-cli arguments...` without waiting for it (e.g. `DEBUG SLEEP 2`).
    public func cliInBackground(_ arguments: String...) throws -> Process {
        let run = Process()
        run.executableURL = URL(fileURLWithPath: Self.cliPath ?? "/usr/bin/redis-cli")
        run.arguments = ["-h", "127.0.0.1", "-p", String(port)] + arguments
        run.standardOutput = FileHandle.nullDevice
        run.standardError = FileHandle.nullDevice
        try run.run()
        return run
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now (the OS picks it).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
