import Foundation
import TileMath
import TileSources
import Canvas
import Pyramids

/// `tilekit seed`: downloads a region into a store, politely and resumably.
enum SeedCommand: Command {
    static let path = ["seed"]
    static let summary = "download (or draw) a region of tiles from a URL template, store or map.json into a store"
    static let options = OptionSpec(valued: Set(["source", "bbox", "zoom", "out", "concurrency", "rate", "user-agent", "subdomains",
                                             "var", "max-tiles", "scale", "retries", "timeout"] as [String]).union(ShardOptions.names),
                                    flags: ["dry-run", "quiet"], aliases: ["o": "out", "b": "bbox", "z": "zoom"])
    static let defaultUserAgent = "TileKit/\(TileKitCommand.version) (tilekit seed)"
    static let help = """
    Usage: tilekit seed --source TEMPLATE|STORE|MAP.json --bbox W,S,E,N --zoom A-B --out STORE [options]

    Fetches every tile covering the box at each zoom into STORE (a folder, .mbtiles or
    .pmtiles). Tiles STORE already has are skipped, so running the same command again
    resumes an interrupted seed. A new STORE is built hidden beside its name and appears
    when the seed ends; an existing one takes the new tiles as they come. Requests are
    polite: an identifying User-Agent, a limit on concurrent requests and on requests per
    second, retries with backoff on 5xx and network errors, none on 4xx. Tile servers have
    usage policies (OpenStreetMap's forbids bulk downloading): seed only what you may.

    Options:
      --source S          a URL template ({z} {x} {y} {s} {r} {-y} {q} and --var keys), a store, or a
                          map.json whose composed map is drawn (pre-rendering a drawn base map)
      -b, --bbox W,S,E,N  the region in degrees (required)
      -z, --zoom A-B      zooms, 0-30 (required)
      -o, --out STORE     where the tiles go (required)
      --concurrency N     requests in flight at most (default: 2)
      --rate N            requests started per second at most (default: 10)
      --user-agent UA     identifies your application (default: "\(defaultUserAgent)")
      --subdomains LIST   subdomains for {s} (default: abc)
      --var NAME=VALUE    a value for {NAME} in the template; repeatable
      --scale N           pixel density: 2 asks {r} for @2x tiles (default: 1)
      --retries N         retries after a 5xx or network error (default: 3)
      --timeout SECONDS   per request, 0.001-3600 (default: 10)
      --max-tiles N       refuse regions larger than this (default: 10000; a shard counts its own tiles)
      --dry-run           print the tile count and an estimated size (from 3 sampled tiles), fetch nothing else
      --quiet             no progress bar
    \(ShardOptions.help)

    A seed shard fetches its subtrees below the split zoom and its share (row-major blocks)
    of each zoom above, since no tile depends on another; `tilekit merge` combines the shards.

    Exit codes: 0 every tile fetched or absent upstream; 75 some tiles could not be fetched
    (they are listed; run again to retry them); 64 usage; 65 bad data; 74 I/O.
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 0...0, "")
        let box = try Parse.boundingBox(try required(arguments, "bbox"))
        let zooms = try Parse.zoomRange(try required(arguments, "zoom"))
        let sourceText = try required(arguments, "source")
        let concurrency = try Parse.count(arguments.values["concurrency"] ?? "2", "concurrency", 1...64)
        let maxTiles = try Parse.count(arguments.values["max-tiles"] ?? "10000", "max-tiles", 1...Int.max)
        let scale = try Parse.count(arguments.values["scale"] ?? "1", "scale", 1...4)
        let source = try makeSource(sourceText, arguments: arguments)
        var seeder = Seeder(source: source, box: box, zooms: zooms)
        seeder.concurrency = concurrency
        seeder.scale = scale
        let shard = try ShardOptions.parse(arguments)
        if let shard {
            do { try seeder.share(shard.spec, splitZoom: shard.splitZoom) } catch { throw .usage(error.description) }
        }
        let total = seeder.tileCount

        if arguments.flag("dry-run") {
            let estimate = await sampleSize(seeder)
            let perZoom = zooms.map { zoom in
                ZoomTiles(zoom: zoom, tiles: TileRange.covering(box, zoom: zoom).reduce(0) { $0 + $1.reduce(0) { $0 + (seeder.fetches($1) ? 1 : 0) } })
            }
            io.write(SeedEstimateReport(tiles: total, zooms: perZoom, estimatedBytes: estimate.map { saturatingProduct($0.average, total) },
                                        sampledTiles: estimate?.samples ?? 0).sortedJSONLine)
            return
        }
        guard total <= maxTiles else {
            throw .usage("the region holds \(total) tiles, more than --max-tiles \(maxTiles); raise --max-tiles if you mean it (and may: check the server's usage policy)")
        }
        let outPath = try required(arguments, "out")
        let writer: any TileStoreWriter
        do {
            // A new store is staged beside OUT and continued by a rerun; an existing one grows in place.
            writer = try TileStore.updater(outPath, scheme: .xyz, format: source.metadata.format ?? .png, resume: true)
        } catch {
            throw CLIError(error, .writing, outPath)
        }
        var metadata = source.metadata
        metadata.bounds = nil
        if let spec = seeder.shard, let plan = seeder.shardPlan {
            metadata.bounds = seeder.storedBounds  // what an unsharded seed records; the merge keeps it
            metadata.shardRecord = shardRecord(spec, plan: plan, seeder: seeder, sourceText: sourceText, metadata: metadata).json
        }
        var bar = ProgressBar(label: "seed", io: io)
        let quiet = arguments.flag("quiet")
        let report: Seeder.Report
        do {
            report = try await seeder.run(into: writer, metadata: metadata) { p in
                // Tiles already present are not work: the rate and ETA count only the rest.
                var detail = p.skipped > 0 ? "(\(p.skipped) already present)" : ""
                if p.failed > 0 { detail += " \(p.failed) failed" }
                if !quiet { bar.update(done: p.done - p.skipped, total: p.total - p.skipped, elapsed: p.elapsed, detail: detail) }
            }
        } catch {
            throw CLIError(error, .writing, outPath)
        }
        let rate = Double(report.fetched) / max(report.elapsed.seconds, 0.001)
        io.write("\(outPath): \(report.fetched) tiles fetched, \(report.skipped) already present, \(report.absent) absent upstream, "
                 + "\(report.failures.count) failed; \(report.bytes) bytes in \(String(format: "%.1f", report.elapsed.seconds)) s (\(String(format: "%.1f", rate)) tiles/s)")
        if !report.failures.isEmpty {
            for (tile, reason) in report.failures.prefix(20) { io.writeError("could not get \(tile): \(reason)") }
            if report.failures.count > 20 { io.writeError("... and \(report.failures.count - 20) more") }
            throw .unavailable("\(report.failures.count) of \(report.total) tiles could not be fetched; run the same command again to retry them")
        }
    }

    /// What a seed shard records for `tilekit merge`. The source is named by a digest (of a
    /// store's file name, or of the whole template): shards on other machines see other
    /// paths, and a template may hold a key that must not travel in the tiles' metadata.
    static func shardRecord(_ spec: ShardSpec, plan: ShardPlan, seeder: Seeder, sourceText: String, metadata: TileSetMetadata) -> ShardRecord {
        let name = sourceText.contains("{") ? sourceText : URL(fileURLWithPath: sourceText).lastPathComponent
        return ShardRecord(command: .seed, shard: spec, splitZoom: plan.splitZoom, zooms: seeder.zooms, mergeMakesUpperZooms: false,
                           encoding: .defaults(for: metadata.format ?? .png), tileSize: metadata.tileSize, scale: seeder.scale,
                           region: seeder.box, bounds: seeder.storedBounds, center: metadata.center, centerZoom: metadata.centerZoom,
                           build: "seed of source \(ShardRecord.digest(name)) at scale \(seeder.scale)")
    }

    /// A URL template (it has a `{`) or a store on disk.
    static func makeSource(_ text: String, arguments: BoundArguments) throws(CLIError) -> any TileSource {
        // A map project: its composed map is drawn tile by tile (pre-rendering a drawn base).
        if text.lowercased().hasSuffix(".json") { return try MapInputs.open(try MapInputs.projects([text])[0]).composedLayer.source }  // also `snapshot --base`
        guard text.contains("{") else { return try Stores.open(text, scheme: nil) }
        let variables = try Parse.variables(arguments.all("var"))
        var options = RemoteOptions(userAgent: arguments.values["user-agent"] ?? defaultUserAgent)
        options.maxConcurrentPerHost = try Parse.count(arguments.values["concurrency"] ?? "2", "concurrency", 1...64)
        let rate = try Parse.number(arguments.values["rate"] ?? "10", "rate")
        guard rate > 0 else { throw .usage("rate \(rate) must be above 0") }
        options.requestsPerSecondPerHost = rate
        options.retries = try Parse.count(arguments.values["retries"] ?? "3", "retries", 0...10)
        let timeout = try Parse.number(arguments.values["timeout"] ?? "10", "timeout")
        guard (0.001...3600).contains(timeout) else { throw .usage("timeout \(timeout) is outside 0.001-3600 seconds") }
        options.timeout = .milliseconds(Int(timeout * 1000))
        do {
            let template = try URLTemplate(text, subdomains: URLTemplate.subdomains(arguments.values["subdomains"] ?? "abc"), variables: variables)
            return try RemoteTileSource(template: template, metadata: TileSetMetadata(name: "seed"), options: options)
        } catch let error as URLTemplateError {
            throw CLIError(error)
        } catch {
            throw .usage("\(error)")
        }
    }

    /// Average bytes of up to three tiles at the deepest zoom, for --dry-run.
    static func sampleSize(_ seeder: Seeder) async -> (average: Int, samples: Int)? {
        guard let deepest = seeder.ranges.last else { return nil }
        let picks = [TileID(z: deepest.z, x: deepest.minX, y: deepest.minY),
                     TileID(z: deepest.z, x: (deepest.minX + deepest.maxX) / 2, y: (deepest.minY + deepest.maxY) / 2),
                     TileID(z: deepest.z, x: deepest.maxX, y: deepest.maxY)]
        let unique = Array(Set(picks))
        var sizes = [Int]()
        for tile in unique {
            if let data = try? await seeder.source.tile(TileRequest(tile, scale: seeder.scale)).data { sizes.append(data.bytes.count) }
        }
        guard !sizes.isEmpty else { return nil }
        return (sizes.reduce(0, +) / sizes.count, sizes.count)
    }
}

