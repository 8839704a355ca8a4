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
      --scale N             pixel density 1-3 (default: 1)
      --base SOURCE         a folder, .mbtiles, .pmtiles or URL template; none: a plain background
      --overlay FILE        GeoJSON (.geojson, .json), GPX (.gpx), KML (.kml) or plist (.plist); repeatable
      --marker M            LON,LAT with an optional colour (#rrggbb) and symbol; repeatable
      --path P              enc:POLYLINE (Google, precision 5) with optional width and colour; repeatable
      --padding PX          space around fitted overlays (default: 20)
      --attribution TEXT    drawn bottom-right (default: the base's attribution; "none" for none)
      -o, --output OUT      the image; its extension picks the format
      --geometry OUT.json   also write where it is: center, zoom, scale, size, bbox, and every marker's pixel,
                        title and subtitle (from --marker and the overlays)
      --user-agent UA       for a URL template base
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
                throw .data("\(file): image overlay: \(error.description)")
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
        if let baseText = arguments.values["base"] {
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
            try AtomicFile.write(try snapshot.image.encoded(.defaults(for: format)), to: output)
        } catch let error as CLIError {
            throw error
        } catch let error as SnapshotError {
            throw .usage(error.description)
        } catch {
            throw .failure("\(error)")
        }
        if let geometryPath = arguments.values["geometry"] {
            let g = snapshot.geometry
            let box = g.bounds
            let placed = snapshot.markers.map { marker -> String in
                var fields = [("lon", JSON.number(marker.coordinate.longitude)), ("lat", JSON.number(marker.coordinate.latitude)),
                              ("x", JSON.number(marker.point.x)), ("y", JSON.number(marker.point.y))]
                if let title = marker.title { fields.append(("title", JSON.string(title))) }
                if let subtitle = marker.subtitle { fields.append(("subtitle", JSON.string(subtitle))) }
                if let symbol = marker.symbol { fields.append(("symbol", JSON.string(symbol))) }
                return JSON.object(fields)
            }
            let json = JSON.object([
                ("center", "[\(JSON.number(g.center.longitude)),\(JSON.number(g.center.latitude))]"), ("zoom", JSON.number(g.zoom)),
                ("scale", "\(g.scale)"), ("width", "\(g.width)"), ("height", "\(g.height)"),
                ("bbox", "[\(JSON.number(box.west)),\(JSON.number(box.south)),\(JSON.number(box.east)),\(JSON.number(box.north))]"),
                ("markers", "[" + placed.joined(separator: ",") + "]"),
            ])
            try AtomicFile.write(Array((json + "\n").utf8), to: geometryPath)
        }
        io.write(output)
    }

    static func loadOverlay(_ file: String) throws(CLIError) -> [Feature] {
        let url = URL(fileURLWithPath: file)
        guard FileManager.default.fileExists(atPath: file) else { throw .io("\(file): no such file") }
        do {
            switch url.pathExtension.lowercased() {
            case "geojson", "json": return try GeoJSON.load(url)
            case "gpx": return try GPX.load(url)
            case "kml": return try KML.load(url)
            case "plist": return try PropertyList.load(url)
            default: throw CLIError.usage("overlay \"\(file)\": not .geojson, .json, .gpx, .kml or .plist")
            }
        } catch let error as CLIError {
            throw error
        } catch let error as FeatureError {
            throw .data(error.description)
        } catch {
            throw .data("\(file): \(error)")
        }
    }

    /// `LON,LAT[,#color][,symbol]`.
    static func marker(_ text: String) throws(CLIError) -> Feature {
        let parts = text.split(separator: ",").map(String.init)
        guard parts.count >= 2 else { throw .usage("marker \"\(text)\" is not LON,LAT[,COLOR][,SYMBOL]") }
        var feature = Feature(geometry: .point(try Parse.coordinate(parts[0] + "," + parts[1])))
        for extra in parts.dropFirst(2) {
            if let color = Color(hex: extra) {  // #rrggbb or a CSS name; anything else is a symbol
                feature.style.markerColor = color
            } else {
                feature.style.markerSymbol = extra
            }
        }
        return feature
    }

    /// `enc:POLYLINE[,width][,color]`.
    static func path(_ text: String) throws(CLIError) -> Feature {
        guard text.hasPrefix("enc:") else { throw .usage("path \"\(text)\" must start with enc: (a Google encoded polyline)") }
        // The polyline alphabet includes ',', so options follow the last commas only when they parse.
        var body = String(text.dropFirst(4))
        var style = Style()
        for _ in 0..<2 {
            guard let comma = body.lastIndex(of: ",") else { break }
            let tail = String(body[body.index(after: comma)...])
            if let width = Double(tail), style.strokeWidth == nil { style.strokeWidth = width }
            else if tail.hasPrefix("#"), let color = Color(hex: tail) { style.stroke = color }
            else { break }
            body = String(body[..<comma])
        }
        let points: [Coordinate]
        do { points = try EncodedPolyline.decode(body) } catch { throw .usage("path: \(error.description)") }
        guard points.count >= 2 else { throw .usage("path \"\(text)\" has fewer than 2 points") }
        var feature = Feature(geometry: .lineString(points))
        feature.style = style
        feature.style.strokeWidth = style.strokeWidth ?? 4
        feature.style.stroke = style.stroke ?? Color(hex: "#1f5fbf")
        return feature
    }
}

