import Foundation
import TileMath
import Canvas
import TileSources

/// `tilekit url TEMPLATE Z/X/Y`: expands a tile URL template.
enum URLCommand: Command {
    static let path = ["url"]
    static let summary = "expand a tile URL template for a tile"
    static let options = OptionSpec(valued: ["subdomains", "var", "scale"])
    static let help = """
    Usage: tilekit url TEMPLATE Z/X/Y [--subdomains abc] [--var NAME=VALUE]... [--scale 2]
           tilekit url TEMPLATE - ...   (one Z/X/Y per stdin line)

    Prints the URL of the tile. Keys: {z} {x} {y}, {-y} (TMS row), {s} (subdomain, chosen
    as Leaflet does: (x + y) mod count), {r} ("@2x" at --scale 2), {q} or {quadkey} (Bing),
    and any {name} given with --var name=value. An unknown key is an error (exit 64).

    Options:
      --subdomains LIST   subdomains for {s}: "abc" (one letter each) or "t1,t2" (default: abc)
      --var NAME=VALUE    a value for {NAME}; repeat for more (--var apikey=K --var variant=dark)
      --scale N           pixel density 1-4 (default: 1)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 2...2, "TEMPLATE and tile Z/X/Y")
        let variables = try Parse.variables(arguments.all("var"))
        let scaleText = arguments.values["scale"] ?? "1"
        guard let scale = Int(scaleText), (1...4).contains(scale) else { throw .usage("scale \"\(scaleText)\" is not 1-4") }
        let template: URLTemplate
        do {
            template = try URLTemplate(arguments.positionals[0], subdomains: URLTemplate.subdomains(arguments.values["subdomains"] ?? "abc"),
                                       variables: variables)
        } catch {
            throw .usage(error.description)
        }
        try eachInput(arguments.positionals[1], io: io) { text throws(CLIError) in
            io.write(template.url(for: try Parse.tile(text), scale: scale))
        }
    }
}

/// `tilekit info STORE`: what a tile store holds.
enum InfoCommand: Command {
    static let path = ["info"]
    static let summary = "describe a folder, MBTiles or PMTiles store as JSON"
    static let options = OptionSpec(valued: ["scheme"])
    static let help = """
    Usage: tilekit info STORE [--scheme xyz|tms]

    Prints JSON: name, format, scheme, tile size, bounds, center, zoom range, attribution,
    the tile count and bytes in all, and per zoom as "zooms": [{"bytes", "tiles", "zoom"}, ...]. STORE is a folder of z/x/y tiles, an .mbtiles or
    a .pmtiles file, or the http(s):// URL of a .pmtiles file (read with range requests;
    exit 74 when it cannot be reached, 65 when it is not a valid PMTiles file).

    Options:
      --scheme xyz|tms   row order of a folder without metadata.json (default: xyz)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "STORE")
        let source = try Stores.open(arguments.positionals[0], scheme: try Parse.scheme(arguments.values["scheme"]))
        let perZoom: [Int: (tiles: Int, bytes: Int)]
        do {
            perZoom = try TileStore.statistics(of: source)
        } catch let error as any CategorizedError {
            throw CLIError(error)
        } catch {
            throw .data("\(arguments.positionals[0]): \(error)")
        }
        let m = source.metadata
        for warning in m.warnings { io.writeError("\(arguments.positionals[0]): warning: \(warning)") }
        let kind = (try? TileStoreKind(path: arguments.positionals[0]).rawValue) ?? ""
        io.write(StoreInfoReport(m, kind: kind, perZoom: perZoom).sortedJSONText(.prettyPrinted) ?? "")
    }
}

/// `tilekit convert SRC DST`: copies a store into another kind, re-encoding on request.
enum ConvertCommand: Command {
    static let path = ["convert"]
    static let summary = "copy tiles between folders, MBTiles and PMTiles"
    static let options = OptionSpec(valued: ["scheme", "source-scheme", "format", "quality"], flags: ["force", "quiet"])
    static let help = """
    Usage: tilekit convert SRC DST [--scheme xyz|tms] [--format png|jpg|webp] [--force]

    Copies every tile of SRC (a folder, .mbtiles or .pmtiles, or the http(s):// URL of a
    .pmtiles, read with range requests) into DST, whose kind follows
    its name: a path ending in .mbtiles or .pmtiles is a file, anything else a folder.
    Tiles are re-encoded only when --format differs from theirs. DST is written beside its
    final name and renamed into place at the end: an interrupted run leaves no half store,
    and the next run removes what it left. A full disk is exit 74, with nothing left behind.

    Options:
      --scheme xyz|tms         row order of a DST folder (default: xyz; MBTiles is always TMS)
      --source-scheme xyz|tms  row order of a SRC folder without metadata.json (default: xyz)
      --format png|jpg|webp    re-encode tiles into this format
      --quality N              JPEG or WebP quality (default: 85 JPEG, 80 WebP)
      --force                  replace DST if it exists
      --quiet                  no summary line
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 2...2, "SRC and DST")
        let (sourcePath, destination) = (arguments.positionals[0], arguments.positionals[1])
        let source = try Stores.open(sourcePath, scheme: try Parse.scheme(arguments.values["source-scheme"]))
        let scheme = try Parse.scheme(arguments.values["scheme"]) ?? .xyz
        let format = try arguments.values["format"].map { text throws(CLIError) -> ImageFormat in
            guard let format = ImageFormat(name: text) else { throw .usage("format \"\(text)\" is not png, jpg or webp") }
            return format
        }
        let quality = try arguments.values["quality"].map { text throws(CLIError) -> Int in
            guard let q = Int(text), (1...100).contains(q) else { throw .usage("quality \"\(text)\" is not 1-100") }
            return q
        }
        let encoding: EncodingOptions? = format.map { format in
            switch format {
            case .png: return .png()
            case .jpeg: return .jpeg(quality: quality ?? 85)
            case .webp: return .webp(quality: Double(quality ?? 80))
            }
        }
        if FileManager.default.fileExists(atPath: destination) && !arguments.flag("force") {
            throw .usage("\(destination) exists; use --force to replace it")
        }
        let kind: TileStoreKind
        do { kind = try TileStoreKind(name: destination) } catch { throw .usage(error.description) }
        var metadata = source.metadata
        if let format { metadata.format = format }
        // Built beside the destination and renamed into place at the end (`StagedStore`); a
        // killed run's scratch files are removed by the next one, a failed run's at once.
        let count: Int
        do {
            let store = try StagedStore(path: destination, kind: kind, scheme: scheme, format: metadata.format ?? .png,
                                        resume: false, resumable: false)
            count = try copy(source, to: store, encoding: encoding, metadata: metadata)
        } catch {
            // The store's failures are `unwritable`, naming the destination; the rest are the source's.
            throw CLIError(error, .reading, sourcePath)
        }
        if !arguments.flag("quiet") { io.write("\(destination): \(count) tiles (\(kind.rawValue))") }
    }
}

extension ConvertCommand {
    /// Writes every tile of `source` into `store`, puts the store in place and returns the count.
    static func copy(_ source: any TileSource, to store: StagedStore, encoding: EncodingOptions?,
                     metadata: TileSetMetadata) throws -> Int {
        var metadata = metadata
        var count = 0
        try TileStore.forEachTile(in: source) { tile, bytes in
            var out = bytes
            if let encoding, ImageFormat(sniffing: bytes) != encoding.format {
                out = try RGBAImage(decoding: bytes, limits: .tile).encoded(encoding)
            }
            try store.write(tile, bytes: out)
            count += 1
        }
        metadata.scheme = store.kind == .mbtiles ? .tms : store.scheme
        try store.finish(metadata: metadata)
        return count
    }
}

/// Opening stores from the command line, with errors mapped to exit codes.
enum Stores {
    static func open(_ path: String, scheme: TileScheme?) throws(CLIError) -> any TileSource {
        do {
            return try TileStore.open(path, scheme: scheme)
        } catch {
            throw CLIError(error)
        }
    }
}
