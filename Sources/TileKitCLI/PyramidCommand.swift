import Foundation
import TileMath
import Canvas
import TileSources
import Pyramids

/// `tilekit pyramid`: a georeferenced image cut into Web Mercator tiles.
enum PyramidCommand: Command {
    static let path = ["pyramid"]
    static let summary = "cut a georeferenced image into a tile pyramid"
    static let options = OptionSpec(valued: Set(["out", "bounds", "corners", "crs", "zoom", "scheme", "format", "tile-size", "resampling",
                                             "lower", "name", "attribution", "concurrency", "max-pixels"] as [String]).union(ShardOptions.names),
                                    flags: ["retina", "resume", "quiet", "json"], aliases: ["o": "out", "z": "zoom"])
    static let help = """
    Usage: tilekit pyramid IMAGE --out STORE [--bounds W,S,E,N | --corners LON,LAT;LON,LAT;LON,LAT;LON,LAT]
                           [--zoom A-B] [--format png|jpg|webp] [--tile-size 256|512] [--retina] [--resume]
                           [--shard I/N [--shard-zoom Z]]

    IMAGE is PNG, JPEG, WebP or TIFF, placed by (first found):
      --bounds W,S,E,N      the image is a plate carrée of this box (degrees)
      --corners TL;TR;BR;BL four corners of a rotated scan, as LON,LAT each (an affine fit)
      a world file beside it (IMAGE.pgw/.jgw/.tfw/.wld), in the --crs given
      the sidecar `tilekit stitch` wrote (IMAGE without extension + .json)

    Options:
      -o, --out STORE       a folder, .mbtiles or .pmtiles; built hidden beside it, put in place when done
      --crs 4326|3857       the world file's coordinates (default: 4326, degrees)
      -z, --zoom A-B        zooms (default: from one tile to the zoom that matches the image's pixels)
      --scheme xyz|tms      folder layout (default: xyz)
      --format F            png, jpg or webp (default: png)
      --tile-size N         256 or 512 (default: 256)
      --retina              also write @2x tiles, into STORE@2x (NAME@2x.mbtiles, DIR@2x/)
      --resampling R        bilinear, bicubic or lanczos at the top zoom (default: bilinear)
      --lower average|resample  lower zooms from their children (default) or from the image
      --resume              continue a build that was stopped (even killed) instead of starting over
      --name, --attribution the store's metadata
      --concurrency N       tiles drawn at once (default: 2)
      --max-pixels N        the largest image read, width x height (default: 4294967296, a 65536 px square;
                            at most 131072 px a side). The image streams row by row; a WebP, an interlaced
                            PNG or a progressive JPEG is decoded whole and must stay within 268435456 pixels
      --quiet               no progress bar
      --json                print a summary as JSON
    \(ShardOptions.help)

    Sharded builds: each shard makes the tiles of its subtrees from the split zoom down
    (with --lower resample, also its share of the zooms above); `tilekit merge` makes the
    zooms above the split from the shards' tiles, the same averaging, so the merged store
    is tile for tile the one a single run makes. A shard's store records the build in its
    metadata (a JPEG or WebP shard keeps its split zoom as PNG for the merge): merge it,
    do not serve it.
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "IMAGE")
        let imagePath = arguments.positionals[0]
        let out = try required(arguments, "out")
        let shard = try ShardOptions.parse(arguments)
        guard FileManager.default.fileExists(atPath: imagePath) else { throw .io("\(imagePath): no such file") }

        var options = PyramidOptions()
        options.shard = shard?.spec
        options.shardZoom = shard?.splitZoom
        if let zoom = arguments.values["zoom"] { options.zooms = try Parse.zoomRange(zoom) }
        let formatName = arguments.values["format"] ?? "png"
        guard let format = ImageFormat(name: formatName) else { throw .usage("format \"\(formatName)\" is not png, jpg or webp") }
        options.encoding = format == .png ? .png(compressionLevel: 1) : .defaults(for: format)
        options.tileSize = try Parse.count(arguments.values["tile-size"] ?? "256", "tile-size", 256...512)
        guard options.tileSize == 256 || options.tileSize == 512 else { throw .usage("tile-size \(options.tileSize) is not 256 or 512") }
        options.retina = arguments.flag("retina")
        let resampling = arguments.values["resampling"] ?? "bilinear"
        guard let r = Resampling(rawValue: resampling) else { throw .usage("resampling \"\(resampling)\" is not bilinear, bicubic or lanczos") }
        options.resampling = r
        let lower = arguments.values["lower"] ?? "average"
        guard let l = LowerZooms(rawValue: lower) else { throw .usage("lower \"\(lower)\" is not average or resample") }
        options.lowerZooms = l
        options.concurrency = try Parse.count(arguments.values["concurrency"] ?? "2", "concurrency", 1...64)
        let scheme = try Parse.scheme(arguments.values["scheme"]) ?? .xyz
        if let text = arguments.values["max-pixels"] {
            options.imageLimits.maxPixels = try Parse.count(text, "max-pixels", 1...(1 << 40))
        }

        let size: (Int, Int)
        do {
            let reader = try ImageRowReader(path: imagePath, limits: options.imageLimits)
            size = (reader.width, reader.height)
        } catch {
            throw CLIError(error)  // CanvasError: data, as before
        }
        let georeference = try locate(imagePath, arguments: arguments, width: size.0, height: size.1)

        var stores = [StagedStore]()
        do {
            stores.append(try StagedStore(path: out, scheme: scheme, format: format, resume: arguments.flag("resume")))
            if options.retina { stores.append(try StagedStore(path: retinaPath(out), scheme: scheme, format: format, resume: arguments.flag("resume"))) }
        } catch {
            throw CLIError(error)
        }
        let builder: PyramidBuilder
        do {
            builder = try PyramidBuilder(source: imagePath, georeference: georeference, stores: stores, options: options)
        } catch {
            for store in stores where !store.resumed { store.discard() }  // nothing was built
            throw CLIError(error)
        }
        var bar = ProgressBar(label: "pyramid z\(builder.zooms.lowerBound)-\(builder.zooms.upperBound)", io: io)
        let quiet = arguments.flag("quiet")
        let clock = ContinuousClock(), start = clock.now
        let report: PyramidReport
        do {
            report = try await builder.run { done, total in
                if !quiet { bar.update(done: done, total: total, elapsed: clock.now - start) }
            }
            let name = arguments.values["name"] ?? URL(fileURLWithPath: imagePath).deletingPathExtension().lastPathComponent
            for (index, store) in stores.enumerated() {
                try store.commit(metadata: builder.metadata(name: name, attribution: arguments.values["attribution"], scale: index + 1))
            }
        } catch let error as CanvasError {
            // A broken image: nothing to resume, so nothing is left behind.
            for store in stores { store.discard() }
            throw CLIError(error)
        } catch let error as PyramidError {
            throw CLIError(error)
        } catch {
            for store in stores { store.discard() }  // a failed write must not leave the disk full
            throw CLIError(error, .writing, out)
        }
        let seconds = (clock.now - start).seconds
        let split = builder.plan.map { plan in (shard: "\(plan.splitZoom)", zooms: "\(builder.lowestZoom)-\(builder.zooms.upperBound)") }
        if arguments.flag("json") {
            let shard = options.shard.flatMap { spec in builder.plan.map { (spec: spec.description, splitZoom: $0.splitZoom) } }
            io.write(PyramidRunReport(tiles: report.written, empty: report.empty, reused: report.reused, bytes: report.bytes,
                                   minZoom: report.zooms.lowerBound, maxZoom: report.zooms.upperBound, seconds: seconds,
                                   shard: shard?.spec, splitZoom: shard?.splitZoom).sortedJSONLine)
        } else if !quiet {
            io.writeError("\(report.written) tiles written (\(report.empty) empty skipped\(report.reused > 0 ? ", \(report.reused) from the earlier run" : "")), zooms \(split?.zooms ?? "\(report.zooms.lowerBound)-\(report.zooms.upperBound)"), \(String(format: "%.1f", seconds)) s")
            if let spec = options.shard, let split {
                io.writeError("shard \(spec) of a build split at zoom \(split.shard): combine the \(spec.count) shards with `tilekit merge SHARD... --out STORE`")
            }
        }
        if !arguments.flag("json") { io.write(out) }
    }

    /// `park.mbtiles` → `park@2x.mbtiles`; `tiles/` → `tiles@2x`.
    static func retinaPath(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension
        guard !ext.isEmpty else { return url.path + "@2x" }
        return url.deletingPathExtension().path + "@2x." + ext
    }

    /// The world files that may sit beside an image, in the order they are tried
    /// (`map.png`: map.pgw, map.pngw, map.wld, ...).
    static func worldFileCandidates(_ imagePath: String) -> [String] {
        let url = URL(fileURLWithPath: imagePath)
        let stem = url.deletingPathExtension()
        let ext = url.pathExtension.lowercased()
        let worldExtensions = [ext.first.flatMap { first in ext.last.map { "\(first)\($0)w" } } ?? "", ext + "w", "wld", "pgw", "jgw", "tfw"].filter { !$0.isEmpty }
        return worldExtensions.map { stem.appendingPathExtension($0).path }
    }

    /// The sidecar `tilekit stitch` writes beside its image (`layer.png`: `layer.json`).
    static func sidecarPath(_ imagePath: String) -> String {
        URL(fileURLWithPath: imagePath).deletingPathExtension().appendingPathExtension("json").path
    }

    /// True when `locate` can place the image without --bounds or --corners.
    static func hasGeoreferenceFile(_ imagePath: String) -> Bool {
        (worldFileCandidates(imagePath) + [sidecarPath(imagePath)]).contains { FileManager.default.fileExists(atPath: $0) }
    }

    /// Where the image is: options, then a world file, then a stitch sidecar.
    static func locate(_ imagePath: String, arguments: BoundArguments, width: Int, height: Int) throws(CLIError) -> Georeference {
        do {
            if let text = arguments.values["bounds"] {
                let p = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }.filter(\.isFinite)
                guard p.count == 4, text.split(separator: ",").count == 4 else { throw CLIError.usage("bounds \"\(text)\" is not W,S,E,N") }
                return try Georeference.bounds(BoundingBox(west: p[0], south: p[1], east: p[2], north: p[3]), width: width, height: height)
            }
            if let text = arguments.values["corners"] {
                return try Georeference.corners(try ImageCorners(parsing: text).coordinates, width: width, height: height)
            }
            for file in worldFileCandidates(imagePath) {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                let crs = arguments.values["crs"] ?? "4326"
                let space: Georeference.Space
                switch crs.uppercased().replacingOccurrences(of: "EPSG:", with: "") {
                case "4326": space = .degrees
                case "3857", "900913": space = .meters
                default: throw CLIError.usage("crs \"\(crs)\" is not 4326 or 3857")
                }
                do {
                    return try Georeference.worldFile(String(decoding: data, as: UTF8.self), space: space, width: width, height: height, file: file)
                } catch {
                    throw CLIError(error)  // a world file that says something wrong: data
                }
            }
            let sidecar = sidecarPath(imagePath)
            if FileManager.default.fileExists(atPath: sidecar) {
                do { return try StitchSidecar.load(sidecar).georeference(width: width, height: height) } catch { throw CLIError.data(error.description) }
            }
            throw CLIError.usage("\(imagePath): where is it? Give --bounds or --corners, or put a world file (.pgw, .jgw, .tfw, .wld) beside it")
        } catch let error as CLIError {
            throw error
        } catch let error as GeoreferenceError {
            throw CLIError(error)
        } catch {
            throw .usage("\(error)")
        }
    }
}
