import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The fault-injecting tile server of scripts/test-tile-server.py, on 127.0.0.1 at a port
/// the OS picks; it stops when this object closes its stdin.
public final class TestTileServer: @unchecked Sendable {  // immutable after init; Process is only touched in init and stop
    public let port: Int
    private let process = Process()
    private let input = Pipe()

    public init(filePath: String = #filePath) throws {
        let root = repositoryRoot(filePath: filePath)
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/test-tile-server.py").path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { throw URLError(.cannotConnectToHost) }
        self.port = port
    }

    deinit { stop() }

    public func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    public struct Stats: Decodable, Sendable {
        public let paths: [String: Int]
        public let user_agents: [String]
        public let statuses: [Int]
        public let conditional: Int
        public let peak: Int
        /// Requests being answered now (a stalled request stays here until the server stops).
        public let in_flight: Int
        public let count: Int
        public let span: Double
    }

    public func stats() async throws -> Stats {
        let (data, _) = try await URLSession.shared.data(from: URL(string: url("/stats"))!)
        return try JSONDecoder().decode(Stats.self, from: data)
    }

    /// What `/switch/...` answers from now on: a kind of the script (`tiles`, `truncated`,
    /// `pnghtml`, `html`, `empty`, `huge`, `big`, `garbage`, `status-500`); for
    /// `/pmtiles/switch/...`: `range`, `ignore-range`, `truncated`, `slow`, `stall`, `status-N`.
    public func setMode(_ kind: String) async throws {
        _ = try await URLSession.shared.data(from: URL(string: url("/set-mode/\(kind)"))!)
    }

    public func resetStats() async throws {
        _ = try await URLSession.shared.data(from: URL(string: url("/reset-stats"))!)
    }
}
