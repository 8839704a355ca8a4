import Foundation
import TileMath
import Canvas
import Features
import TileSources
import Rendering

/// `tilekit snapshot`: a static map image, and where everything landed.
enum SnapshotCommand: Command {
    static let path = ["snapshot"]
    static let summary = "render a static map image with overlays and markers"
    static let options = OptionSpec(valued: ["center", "zoom", "span", "bbox", "padding", "size", "scale", "base", "overlay", "marker",
                                             "path", "attribution", "output", "geometry", "user-agent"],
                                    aliases: ["o": "output", "z": "zoom", "b": "bbox"])
    static let help = """
    Usage: tilekit snapshot [REGION] [--size WxH] [--scale 1|2|3] [--base SOURCE] [--overlay FILE]...
                            [--marker LON,LAT[,COLOR][,SYMBOL]]... [--path enc:POLYLINE[,WIDTH][,COLOR]]...
                            -o OUT.png|.jpg|.webp [--geometry OUT.json]

    REGION is one of: --center LON,LAT --zoom Z; --center LON,LAT --span DLON,DLAT;
    --bbox W,S,E,N; or nothing, to fit every overlay, marker and path (--padding pixels).

    Options:
      --size WxH            image size in CSS pixels, each 1-4096 (default: 600x400)
      --scale N             pixel density 1-3 (default: 1); the image is at most 67108864 pixels
                            in all (4096x4096 at scale 2)
      --base SOURCE         a folder, .mbtiles, .pmtiles (or its http(s) URL), URL template or map.json;
                            none: a plain background
      --overlay FILE        GeoJSON (.geojson, .json), GPX (.gpx), KML (.kml) or plist (.plist); repeatable
      --marker M            LON,LAT with an optional colour (#rrggbb) and symbol; repeatable
      --path P              enc:POLYLINE (Google, precision 5) with optional width and colour; repeatable
      --padding PX          space around fitted overlays (default: 20)
      --attribution TEXT    drawn bottom-right (default: the base's attribution; "none" for none)
      -o, --output OUT      the image; its extension picks the format
      --geometry OUT.json   also write where it is: center, zoom, scale, size, bbox, every marker's pixel,
                        title and subtitle (from --marker and the overlays), every label drawn (text,
                        kind, box in pixels; a map.json base's labels too) and "labelCounts" (named
                        features, those labelled at this zoom, those drawn here)
      --user-agent UA       for a URL template base

    Exit codes: 0 the image is complete; 65 an upstream answered something that is not a tile
    (or refused), no image written; 75 some base tiles could not be fetched now (a stalled,
    failing or unreachable upstream): the image is written with gaps, run again.
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 0...0, "")
        let output = try required(arguments, "output")
        let ext = URL(fileURLWithPath: output).pathExtension
        guard let format = ImageFormat(name: ext) else { throw .usage("output \"\(output)\": extension \".\(ext)\" is not png, jpg or webp") }
        let sizeText = arguments.values["size"] ?? "600x400"
        let size = sizeText.lowercased().split(separator: "x").compactMap { Int($0) }
        guard size.count == 2, size.allSatisfy({ (1...4096).contains($0) }) else { throw .usage("size \"\(sizeText)\" is not WxH with each side 1-4096") }
        let scale = try Parse.count(arguments.values["scale"] ?? "1", "scale", 1...3)

        var features = [Feature]()
        var images = [String: RGBAImage]()
        for file in arguments.all("overlay") {
            let loaded = try loadOverlay(file)
            do {
                images.merge(try FeatureRenderer.loadImages(for: loaded, relativeTo: URL(fileURLWithPath: file).deletingLastPathComponent())) { a, _ in a }
            } catch {
                throw CLIError(error, message: "\(file): image overlay: \(error.description)")
            }
            features += loaded
        }
        var markers = [Feature]()
        for text in arguments.all("marker") { markers.append(try marker(text)) }
        for text in arguments.all("path") { features.append(try path(text)) }
        features += markers

        let region: SnapshotRegion
        if let box = arguments.values["bbox"] {
            region = .box(try Parse.boundingBox(box))
        } else if let centerText = arguments.values["center"] {
            let center = try Parse.coordinate(centerText)
            if let zoomText = arguments.values["zoom"] {
                let zoom = try Parse.number(zoomText, "zoom")
                guard (0...Double(TileID.maxZoom)).contains(zoom) else { throw .usage("zoom \(zoomText) is out of range [0, \(TileID.maxZoom)]") }
                region = .center(center, zoom: zoom)
            } else if let spanText = arguments.values["span"] {
                let parts = spanText.split(separator: ",")
                guard parts.count == 2 else { throw .usage("span \"\(spanText)\" is not DLON,DLAT") }
                region = .span(center: center, longitudeDelta: try Parse.number(String(parts[0]), "span"), latitudeDelta: try Parse.number(String(parts[1]), "span"))
            } else {
                throw .usage("--center needs --zoom or --span")
            }
        } else {
            guard !features.isEmpty else { throw .usage("give a region (--center and --zoom, --bbox) or something to fit (--overlay, --marker, --path)") }
            region = .fit(padding: try Parse.number(arguments.values["padding"] ?? "20", "padding"))
        }

        var base: TileLayer?
        if let baseText = arguments.values["base"] {  // a store, a URL template, or a map.json's composed map
            var seedArguments = arguments
            seedArguments.values["concurrency"] = seedArguments.values["concurrency"] ?? "4"
            base = TileLayer(source: try SeedCommand.makeSource(baseText, arguments: seedArguments))
        }
        var attribution = arguments.values["attribution"] ?? base?.source.metadata.attribution
        if attribution == "none" { attribution = nil }

        let snapshot: Snapshot
        do {
            var options = SnapshotOptions(region: region, width: size[0], height: size[1], scale: scale, base: base,
                                          features: features, attribution: attribution)
            options.images = images
            snapshot = try await Snapshotter.render(options)
            // The image and its geometry together: a full disk leaves neither.
            let geometry: [(path: String, bytes: [UInt8])] = arguments.values["geometry"].map { [($0, [UInt8](snapshot.geometryJSON) + [10])] } ?? []
            try AtomicFile.write(files: [(output, try snapshot.image.encoded(.defaults(for: format)))] + geometry)
        } catch let error as CLIError {
            throw error
        } catch let error as SnapshotError {
            throw CLIError(error)
        } catch {
            // An upstream's broken tile is data (65), a full disk I/O (74): the one mapping.
            throw CLIError(error, .writing, output)
        }
        io.write(output)
        if snapshot.unavailableTiles > 0 {
            // Written all the same (what could be had), but not a complete image: exit 75.
            throw .unavailable("\(output): \(snapshot.unavailableTiles) of \(snapshot.baseTileCount) base tiles could not be fetched now"
                               + " (the upstream stalled, failed or was unreachable); the image has gaps: run the same command again")
        }
    }

    static func loadOverlay(_ file: String) throws(CLIError) -> [Feature] {
        let url = URL(fileURLWithPath: file)
        guard FileManager.default.fileExists(atPath: file) else { throw .io("\(file): no such file") }
        guard FeatureFiles.extensions.contains(url.pathExtension.lowercased()) else {
            throw .usage("overlay \"\(file)\": not .geojson, .json, .gpx, .kml or .plist")
        }
        do {
            return try FeatureFiles.load(file)
        } catch {
            throw CLIError(error)
        }
    }

    static func marker(_ text: String) throws(CLIError) -> Feature {
        do { return try QuickOverlays.marker(text) } catch { throw .usage(error.description) }
    }

    static func path(_ text: String) throws(CLIError) -> Feature {
        do { return try QuickOverlays.path(text) } catch { throw .usage(error.description) }
    }
}

