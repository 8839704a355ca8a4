import Foundation
import Dispatch
import MapProjects
import Rendering
import TileServer
import HTTPServer
import SharedCache

/// Opens the maps named on a command line: `map.json` files, or plain stores served as
/// one-layer maps named after their files. Each is read and checked once; what the check
/// opened is what is served.
enum MapInputs {
    static func projects(_ paths: [String]) throws(CLIError) -> [OpenedProject] {
        var projects = [OpenedProject]()
        var problems = [ProjectProblem]()
        for path in paths {
            do {
                if path.lowercased().hasSuffix(".json") {
                    projects.append(try MapProjectReader.open(URL(fileURLWithPath: path)))
                } else {
                    projects.append(try MapProjectReader.openStore(path))
                }
            } catch {
                problems += error.problems
            }
        }
        guard problems.isEmpty else { throw CLIError(ProjectProblems(problems: problems)) }
        return projects
    }

    static func open(_ opened: OpenedProject) throws(CLIError) -> ServedMap {
        do { return try ServedMap(opened) } catch { throw CLIError(error) }
    }
}

/// `tilekit validate`: checks map projects and reports every problem with its JSON path.
enum ValidateCommand: Command {
    static let path = ["validate"]
    static let summary = "check map.json files and report every problem"
    static let options = OptionSpec(flags: ["json", "labels"])
    static let help = """
    Usage: tilekit validate MAP.json... [--json] [--labels]

    Checks each map project: its keys and values, that every file it names exists and
    opens (tile stores, feature files, images, fallback tiles), zoom ranges and bounds.
    Every problem is reported with its JSON path, e.g.
      map.json: layers[2].source: no such file "tiles/parchment.mbtiles"
    Exit 0 when all are valid, 65 when any has a problem.

    Options:
      --json   one JSON line per file: {"file":...,"ok":...,"problems":[{"path":...,"message":...}]}
      --labels also place the labels of the visible features layers at every zoom of the map
               and report, per zoom, how many named features got a label, and the time it took
               ({"labels":[{"zoom":...,"named":...,"labelled":...,"ms":...}]} with --json)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        guard !arguments.positionals.isEmpty else { throw .usage("missing MAP.json") }
        var failed = 0
        for file in arguments.positionals {
            var problems = [ProjectProblem]()
            var summary = ""
            var labels = [LabelPlacement]()
            do {
                let opened = try MapProjectReader.open(URL(fileURLWithPath: file))
                let project = opened.project
                summary = "\(project.layers.count) layer\(project.layers.count == 1 ? "" : "s"), zooms \(project.minZoom)-\(project.maxZoom)"
                if arguments.flag("labels") {
                    let map = try ServedMap(opened)
                    labels = (project.minZoom...project.maxZoom).map { map.labels.placement(zoom: Double($0)) }
                }
            } catch {
                problems = error.problems
            }
            if !problems.isEmpty { failed += 1 }
            if arguments.flag("json") {
                let report = ValidateReport(file: file, ok: problems.isEmpty,
                                            problems: problems.map { ValidateReport.Problem(path: $0.place, message: $0.reason) },
                                            labels: arguments.flag("labels") ? labels.map(LabelPlacementCounts.init) : nil)
                io.write(report.sortedJSONLine)
            } else if problems.isEmpty {
                io.write("\(file): ok (\(summary))")
                for p in labels {
                    io.write(String(format: "  labels z%d: %d of %d named features drawn (%.1f ms)", Int(p.zoom), p.labelledFeatures, p.namedFeatures, p.milliseconds))
                }
            } else {
                // Named as the user wrote it (the reader resolves it to an absolute path).
                for var problem in problems {
                    if problem.file == URL(fileURLWithPath: file).path { problem.file = file }
                    io.writeError(problem.description)
                }
            }
        }
        if failed > 0 { throw .data(failed == 1 ? "1 map has problems" : "\(failed) maps have problems") }
    }
}

/// `tilekit serve`: tiles, TileJSON, static images and the viewer over HTTP.
enum ServeCommand: Command {
    static let path = ["serve"]
    static let summary = "serve maps over HTTP with a Leaflet viewer"
    static let options = OptionSpec(valued: ["host", "port", "threads", "cache-mb", "max-static-side", "max-connections", "stop-grace", "shared-cache"], flags: ["json", "quiet"])
    static let help = """
    Usage: tilekit serve MAP.json|STORE... [--host ADDRESS] [--port 8080]

    Serves each map project (or tile store, as a one-layer map named after its file; a
    store may be the http(s):// URL of a .pmtiles file, read with range requests):
      /                                          the maps
      /maps/{map}/                               the viewer (Leaflet)
      /maps/{map}/{z}/{x}/{y}[@2x].png|jpg|webp  the composed map's tiles
      /maps/{map}/layers/{layer}/{z}/{x}/{y}...  one layer's tiles
      /maps/{map}.json, /maps/{map}/layers/{layer}.json   TileJSON 3.0.0
      /maps/{map}/features/{layer}.geojson       a feature layer as GeoJSON
      /maps/{map}/static/{lon},{lat},{zoom}/{w}x{h}[@2x].png   static images (also
          {w},{s},{e},{n} and auto; markers=, path=, padding=; POST a GeoJSON body;
          .json gives the image's geometry)
      /health (alive), /ready (maps open, shared cache answers), /metrics (Prometheus)
    Stops on Ctrl-C or SIGTERM: stops accepting at once, finishes the answers in flight
    (up to --stop-grace seconds), ends game streams, then exits 0.

    Options:
      --host ADDRESS        IPv4 address to listen on (default: every interface)
      --port N              port (default: 8080; 0 picks a free one)
      --threads N           connection threads (default: the number of cores; requests that
                            wait for work, and game streams, hold none)
      --max-connections N   open connections in all (default: the file-descriptor limit,
                            raised to its hard limit, less 256); half of it per client address
      --stop-grace S        seconds to finish answers in flight on stop (default: 10)
      --shared-cache redis://HOST:PORT[/DB]
                            share rendered and fetched tiles with other servers through
                            Redis (a cache, never a dependency: when it is down, slow or
                            full, tiles are still served; /metrics counts the failures)
      --cache-mb N          memory for encoded tiles (default: 128)
      --max-static-side N   largest static image side in pixels (default: 2048)
      --json                print {"url":...,"port":...,"maps":[...]} once listening
      --quiet               no access log
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        guard !arguments.positionals.isEmpty else { throw .usage("missing MAP.json or a tile store to serve") }
        let port = try Parse.count(arguments.values["port"] ?? "8080", "port", 0...65535)
        var limits = HTTPServerLimits()
        if let text = arguments.values["threads"] { limits.threads = try Parse.count(text, "threads", 1...64) }
        if let text = arguments.values["max-connections"] { limits.maxConnections = try Parse.count(text, "max-connections", 16...1_000_000) }
        let grace = try Parse.count(arguments.values["stop-grace"] ?? "10", "stop-grace", 0...3600)
        var options = ServerOptions()
        options.cacheBytes = try Parse.count(arguments.values["cache-mb"] ?? "128", "cache-mb", 0...65536) << 20
        options.maxStaticSide = try Parse.count(arguments.values["max-static-side"] ?? "2048", "max-static-side", 16...8192)
        if let text = arguments.values["shared-cache"] {
            let shared: RedisTileCache
            do { shared = try RedisTileCache(text) } catch { throw .usage("--shared-cache: \(error.description)") }
            if await !shared.waitUntilAvailable(timeout: .seconds(1)) {
                io.writeError("warning: the shared cache \(text) does not answer yet (\(shared.lastFailure ?? "no answer")); serving without it until it does")
            }
            options.sharedCache = shared
        }
        if !arguments.flag("quiet") {
            let writeError = io.writeError
            options.accessLog = { line in writeError(line) }
        }
        var maps = [ServedMap]()
        for project in try MapInputs.projects(arguments.positionals) { maps.append(try MapInputs.open(project)) }
        let server: TileServer
        let assets = ServerAssets.prepare(leafletFolder: options.leafletFolder)
        ServerMemory.returnLargeBuffersToTheSystem()
        do { server = try TileServer(maps: maps, options: options, assets: assets) } catch { throw CLIError(error) }

        let http: HTTPServer
        do {
            http = try server.start(host: arguments.values["host"], port: port, limits: limits)
        } catch {
            throw CLIError(error)
        }
        // Signal sources are made only once listening: libdispatch traps when a source that
        // was never resumed is released (as it would be on a failed start).
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let queue = DispatchQueue(label: "tilekit.signals")
        let sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: queue) }
        let shown = http.host == "0.0.0.0" ? "127.0.0.1" : http.host
        let base = "http://\(shown):\(http.port)"
        if arguments.flag("json") {
            let report = ServeReadyReport(url: base + "/", port: http.port, host: http.host, maps: server.order.map {
                ServeReadyReport.Map(name: $0, viewer: base + "/maps/\($0)/", tiles: base + "/maps/\($0)/{z}/{x}/{y}.png")
            })
            io.write(report.sortedJSONLine)
        } else {
            io.write("TileKit serving \(server.order.count) map\(server.order.count == 1 ? "" : "s") on \(http.host):\(http.port)")
            for name in server.order {
                io.write("  \(name): viewer \(base)/maps/\(name)/  tiles \(base)/maps/\(name)/{z}/{x}/{y}.png")
            }
            io.write("Stop with Ctrl-C.")
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = Once()
            for source in sources {
                source.setEventHandler { if once.first() { continuation.resume() } }
                source.resume()
            }
        }
        io.writeError("stopping: finishing requests in flight (up to \(grace) s)")
        http.stop(grace: .seconds(grace))
        for source in sources { source.cancel() }
    }

    final class Once: @unchecked Sendable {
        private let lock = NSLock()
        private var done = false
        func first() -> Bool {
            lock.lock(); defer { lock.unlock() }
            if done { return false }
            done = true
            return true
        }
    }
}
