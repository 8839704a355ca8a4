import Foundation
import TileMath
import Canvas
import TileSources
import Pyramids

/// `tilekit stitch`: one zoom of a store, in a box, as one image to paint on.
enum StitchCommand: Command {
    static let path = ["stitch"]
    static let summary = "join a zoom's tiles into one image, with its georeference"
    static let options = OptionSpec(valued: ["bbox", "zoom", "output", "scheme"], flags: ["json"], aliases: ["o": "output", "z": "zoom", "b": "bbox"])
    static let help = """
    Usage: tilekit stitch SOURCE --bbox W,S,E,N --zoom Z -o LAYER.png

    Joins every tile of zoom Z that the box touches into LAYER.png (transparent where the
    store has none) and writes beside it a world file (LAYER.pgw, Web Mercator meters) and
    LAYER.json naming the zoom and the exact tile range, for `tilekit split`.

    Options:
      -b, --bbox W,S,E,N    the box (degrees)
      -z, --zoom Z          the zoom
      -o, --output FILE     the image (.png keeps every pixel; .jpg and .webp work too)
      --scheme xyz|tms      the layout of a folder SOURCE (default: detected)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "SOURCE")
        let output = try required(arguments, "output")
        let box = try Parse.boundingBox(try required(arguments, "bbox"))
        let zoom = try Parse.count(try required(arguments, "zoom"), "zoom", 0...TileID.maxZoom)
        let ext = URL(fileURLWithPath: output).pathExtension
        guard let format = ImageFormat(name: ext) else { throw .usage("output \"\(output)\": extension \".\(ext)\" is not png, jpg or webp") }
        let source = try Stores.open(arguments.positionals[0], scheme: try Parse.scheme(arguments.values["scheme"]))
        guard let range = TileRange.covering(box, zoom: zoom).first, TileRange.covering(box, zoom: zoom).count == 1 else {
            throw .usage("bbox crosses the antimeridian: stitch each side separately")
        }
        // The tile size comes from the store's metadata: a file's value, checked before any
        // pixel arithmetic. split reads back only 256 and 512 (see StitchSidecar.load).
        let tileSize = source.metadata.tileSize
        guard tileSize == 256 || tileSize == 512 else {
            throw .data("\(arguments.positionals[0]): tile size \(tileSize) is not 256 or 512, the sizes stitch and split handle")
        }
        guard range.count <= 65_536 else { throw .usage("\(range.count) tiles at zoom \(zoom): stitch a smaller box or a lower zoom (at most 65,536 tiles)") }
        do { _ = try Stitching.imageSize(range: range, tileSize: tileSize) } catch { throw .usage("\(error.description): stitch a smaller box or a lower zoom") }
        let sidecar = StitchSidecar(range: range, tileSize: tileSize, source: arguments.positionals[0])
        do {
            let image = try await Stitching.stitch(source, range: range, tileSize: tileSize)
            let stem = URL(fileURLWithPath: output).deletingPathExtension()
            let world = format == .png ? "pgw" : format == .jpeg ? "jgw" : "wld"
            let georeference = try sidecar.georeference(width: image.width, height: image.height)
            try AtomicFile.write(files: [(output, try image.encoded(format == .png ? .png(compressionLevel: 6) : .defaults(for: format))),
                                         (stem.appendingPathExtension(world).path, Array(georeference.worldFileText.utf8)),
                                         (stem.appendingPathExtension("json").path, Array(sidecar.encoded()))])
            if arguments.flag("json") {
                io.write(StitchReport(image: output, width: image.width, height: image.height, zoom: zoom, tiles: range.count).sortedJSONLine)
            } else {
                io.write(output)
            }
        } catch let error as CLIError {
            throw error
        } catch let error as any CategorizedError {
            throw CLIError(error)  // a damaged store is data (65), as in every command
        } catch {
            throw .io("\(error)")
        }
    }
}

/// `tilekit split`: a stitched (and edited) image back into its tiles.
enum SplitCommand: Command {
    static let path = ["split"]
    static let summary = "cut a stitched image back into its tiles, and rebuild their parents"
    static let options = OptionSpec(valued: ["out", "format"], flags: ["rebuild-parents", "json", "quiet"], aliases: ["o": "out"])
    static let help = """
    Usage: tilekit split LAYER.png --out STORE [--rebuild-parents]

    Reads LAYER.json (written by `tilekit stitch`) for the zoom and tile range, and writes
    the tiles that changed into STORE (a folder, .mbtiles or .pmtiles). A tile whose pixels
    did not change keeps its original bytes, so a round trip without edits changes nothing.

    Options:
      -o, --out STORE       where the tiles go (usually the store they were stitched from)
      --rebuild-parents     also redraw the lower zooms, touching only the ancestors of changed tiles
      --format F            encoding of changed tiles (default: the store's, else png)
      --json                print what changed as JSON
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "LAYER.png")
        let imagePath = arguments.positionals[0]
        let out = try required(arguments, "out")
        let sidecarPath = URL(fileURLWithPath: imagePath).deletingPathExtension().appendingPathExtension("json").path
        let sidecar: StitchSidecar
        do { sidecar = try StitchSidecar.load(sidecarPath) } catch { throw .data(error.description) }
        let image: RGBAImage
        do { image = try RGBAImage(contentsOf: URL(fileURLWithPath: imagePath)) } catch { throw CLIError(error, message: "\(imagePath): \(error.description)") }
        do { _ = try sidecar.georeference(width: image.width, height: image.height) } catch { throw .data("\(imagePath): \(error.description)") }

        let existing: (any TileSource)? = FileManager.default.fileExists(atPath: out) ? try Stores.open(out, scheme: nil) : nil
        // Where unchanged tiles' original bytes are: the output itself, else the stitched source.
        let original: (any TileSource)? = existing ?? (try? TileStore.open(sidecar.source))
        let formatName = arguments.values["format"] ?? existing?.metadata.format?.fileExtension ?? "png"
        guard let format = ImageFormat(name: formatName) else { throw .usage("format \"\(formatName)\" is not png, jpg or webp") }
        let encoding: EncodingOptions = format == .png ? .png(compressionLevel: 6, filter: .all) : .defaults(for: format)
        var changed = [TileID: RGBAImage](), unchanged = 0, copied = 0, rebuilt = 0
        do {
            let writer = try TileStore.updater(out, format: format, resume: false)
            for tile in sidecar.range {
                let cut = Stitching.crop(image, tile: tile, sidecar: sidecar)
                let before = try await original?.tile(TileRequest(tile)).data
                if let before, let decoded = try? RGBAImage(decoding: before.bytes, limits: .tile), decoded.pixels == cut.pixels {
                    unchanged += 1
                    // With an output store, `original` is that store and the tile is already in it;
                    // otherwise copy the stitched source's bytes.
                    if existing == nil {
                        try writer.write(tile, bytes: before.bytes)  // bit for bit
                        copied += 1
                    }
                    continue
                }
                if before == nil && cut.isTransparent { unchanged += 1; continue }
                try writer.write(tile, bytes: try cut.encoded(encoding))
                changed[tile] = cut
            }
            if arguments.flag("rebuild-parents"), !changed.isEmpty {
                let minZoom = existing?.metadata.minZoom ?? 0
                var level = changed
                var z = sidecar.zoom
                while z > minZoom {
                    var parents = [TileID: RGBAImage]()
                    for parent in Set(level.keys.compactMap(\.parent)) {
                        var four = [RGBAImage?]()
                        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                            let child = TileID(z: z, x: 2 * parent.x + dx, y: 2 * parent.y + dy)
                            if let image = level[child] { four.append(image); continue }
                            four.append(try await original?.tile(TileRequest(child)).data.map { try RGBAImage(decoding: $0.bytes) })
                        }
                        guard let made = Stitching.parent(from: four, size: sidecar.tileSize) else { continue }
                        try writer.write(parent, bytes: try made.encoded(encoding))
                        parents[parent] = made
                        rebuilt += 1
                    }
                    level = parents
                    z -= 1
                }
            }
            var metadata = existing?.metadata ?? TileSetMetadata(name: URL(fileURLWithPath: out).deletingPathExtension().lastPathComponent,
                                                                 minZoom: sidecar.zoom, maxZoom: sidecar.zoom)
            metadata.format = format
            try writer.finish(metadata: metadata)
        } catch {
            throw CLIError(error, .writing, out)
        }
        if arguments.flag("json") {
            io.write(SplitReport(changed: changed.count, unchanged: unchanged, copied: copied, parents: rebuilt).sortedJSONLine)
        } else {
            io.write("\(out): \(changed.count) tiles changed, \(unchanged) unchanged\(rebuilt > 0 ? ", \(rebuilt) parents redrawn" : "")")
        }
    }
}
