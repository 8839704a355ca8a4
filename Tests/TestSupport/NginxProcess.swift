import Foundation
import Glibc

/// A real nginx (Debian `nginx-light`) on 127.0.0.1 at a free port, serving a folder as
/// static files: Range requests (206), ETag and If-Match (412) work out of the box, as on a
/// CDN or object store. It runs in the foreground as the current user with its
/// configuration, pid file, logs and temporary folders in a folder of its own, and is
/// stopped when released. Every request is logged with its status, Range and If-Match, so
/// tests can count what reached the server.
public final class NginxProcess: @unchecked Sendable {  // process is touched only by init, stop and deinit, from one test
    public let port: Int
    /// The folder served at `/`.
    public let root: URL
    /// nginx's own folder: nginx.conf, access.log, error.log.
    public let folder: URL
    private let process = Process()

    static let path = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static var isInstalled: Bool { path != nil }
    public static let missingMessage = "nginx is not installed: run `bash scripts/install-deps.sh nginx-light`"

    public enum Failure: Error, CustomStringConvertible {
        case notInstalled
        case didNotStart(port: Int, log: String)
        public var description: String {
            switch self {
            case .notInstalled: return NginxProcess.missingMessage
            case .didNotStart(let port, let log): return "nginx on port \(port) did not accept connections; its error log:\n\(log)"
            }
        }
    }

    /// One line of the access log.
    public struct Request: Hashable, Sendable {
        public var status: Int
        public var method: String
        /// The path, without the query.
        public var path: String
        /// The `Range` header, "" when none.
        public var range: String
        /// The `If-Match` header, "" when none.
        public var ifMatch: String
        public var bytesSent: Int

        public init(status: Int, method: String, path: String, range: String, ifMatch: String, bytesSent: Int) {
            self.status = status
            self.method = method
            self.path = path
            self.range = range
            self.ifMatch = ifMatch
            self.bytesSent = bytesSent
        }
    }

    /// Starts nginx serving `root` on `port` (nil: a free one); `locations` is added inside
    /// the `server` block (more `location` blocks, e.g. a proxy), `http` inside `http`
    /// (e.g. `upstream` blocks). Waits until it accepts connections.
    public init(root: URL, port: Int? = nil, locations: String = "", http: String = "") throws {
        guard let nginx = Self.path else { throw Failure.notInstalled }
        self.root = root
        self.port = try port ?? RedisServerProcess.freePort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("temp"), withIntermediateDirectories: true)
        let dir = folder.path
        // Debian's build puts its temporary folders under /var/lib/nginx, which only root may
        // create: every one is moved here (those of modules a build lacks are left out).
        let build = Self.buildOptions(nginx)
        let temporary = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].filter { module in
            module == "client_body" || !build.contains("--without-http_\(module)_module")
        }.map { "\($0)_temp_path \(dir)/temp/\($0);" }.joined(separator: " ")
        // As root the workers would switch to `nobody`, who cannot read a test's temporary files.
        let user = geteuid() == 0 ? "user root;" : ""
        let configuration = """
        \(user)
        daemon off;
        worker_processes 1;
        pid \(dir)/nginx.pid;
        error_log \(dir)/error.log;
        events { worker_connections 1024; }
        http {
            log_format ranges '$status "$request_method" "$uri" "$http_range" "$http_if_match" $body_bytes_sent';
            access_log \(dir)/access.log ranges;
            types { application/vnd.pmtiles pmtiles; image/png png; application/json json; }
            default_type application/octet-stream;
            \(temporary)
            \(http)
            server {
                listen 127.0.0.1:\(self.port);
                root \(root.path);
                location / { }
                \(locations)
            }
        }
        """
        try configuration.write(to: folder.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-p", dir, "-e", "\(dir)/error.log", "-c", "\(dir)/nginx.conf"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !Self.accepts(port: self.port) {
            guard Date() < deadline, process.isRunning else {
                let log = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? "(no log)"
                stop()
                throw Failure.didNotStart(port: self.port, log: log)
            }
            usleep(10_000)
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func url(_ path: String) -> String { baseURL + (path.hasPrefix("/") ? path : "/" + path) }

    /// Stops nginx (SIGTERM: the fast shutdown) and waits for it.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// The requests logged so far. nginx writes a line once the answer is sent, so a client
    /// may see the answer a moment before its line: `requests(atLeast:)` waits for them.
    public func requests() -> [Request] {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("access.log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap(Self.parse)
    }

    /// The requests logged, once there are at least `count` (or after `timeout` seconds).
    public func requests(atLeast count: Int, timeout: Double = 5) -> [Request] {
        let deadline = Date().addingTimeInterval(timeout)
        var logged = requests()
        while logged.count < count, Date() < deadline {
            usleep(5_000)
            logged = requests()
        }
        return logged
    }

    static func parse(_ line: Substring) -> Request? {
        // 206 "GET" "/x.pmtiles" "bytes=0-16383" "-" 16384 (nginx writes a quote inside a value as \x22)
        let quoted = line.split(separator: "\"", omittingEmptySubsequences: false)
        guard quoted.count == 9, let status = Int(quoted[0].trimmingCharacters(in: .whitespaces)),
              let sent = Int(quoted[8].trimmingCharacters(in: .whitespaces)) else { return nil }
        func value(_ s: Substring) -> String { s == "-" ? "" : String(s) }
        return Request(status: status, method: String(quoted[1]), path: String(quoted[3]), range: value(quoted[5]),
                       ifMatch: value(quoted[7]), bytesSent: sent)
    }

    private static func buildOptions(_ nginx: String) -> String {
        let run = Process()
        run.executableURL = URL(fileURLWithPath: nginx)
        run.arguments = ["-V"]
        let output = Pipe()
        run.standardError = output  // nginx -V prints to stderr
        run.standardOutput = FileHandle.nullDevice
        guard (try? run.run()) != nil else { return "" }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        run.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
