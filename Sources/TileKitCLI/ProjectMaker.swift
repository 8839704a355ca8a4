import Foundation
import TileMath
import Canvas
import TileSources
import Features
import Pyramids
import Game

/// Makes the files of a new map project in `folder` (the hidden staging folder): copies the
/// user's data, cuts a scan, and writes map.json with a README.md that explains each key.
struct ProjectMaker {
    let request: InitRequest
    let folder: URL
    let io: CommandIO

    struct Made {
        var summary: String
    }

    private var document = ProjectDocument()
    /// Every coordinate the map shows, for its center, zooms and bounds.
    private var extent = [Coordinate]()
    /// The scan's pyramid zooms, when there is a scan.
    private var scanZooms: ClosedRange<Int>?
    private var usedFiles = Set<String>()
    private var usedIDs = Set<String>()
    /// The park plist whose overlay corners pin the artwork: its boundary polygon would
    /// cover the art, so its layer starts hidden.
    private var cornersPlist: String?

    init(request: InitRequest, folder: URL, io: CommandIO) {
        self.request = request
        self.folder = folder
        self.io = io
    }

    func make() async throws(CLIError) -> Made {
        var maker = self
        return try await maker.build()
    }

    private mutating func build() async throws(CLIError) -> Made {
        document.map.append(.init("name", request.name,
                                  "the map's name in URLs: the viewer is /maps/\(request.name)/, its tiles /maps/\(request.name)/{z}/{x}/{y}.png"))
        document.map.append(.init("title", request.title ?? request.name, "shown by the viewer and the server's start page"))
        if let attribution = request.attribution {
            document.map.append(.init("attribution", attribution, "credits shown in the corner of every view; keep your sources' licences here"))
        }
        if let base = request.base { try addBase(base) }
        var paper: [ProjectDocument.Entry] = [
            .init("title", "Paper", "its name in the viewer's layer control"),
            .init("type", "generated", "tiles drawn by code"),
            .init("generator", "parchment", "which drawing: `parchment`, or `debug-grid`"),
            .init("base", true, "a base layer: base layers are alternatives (radio buttons), the rest stack above the one shown"),
        ]
        if request.base != nil { paper.append(.init("visible", false, "the map from --base is shown first; paper is the other choice")) }
        document.layers.append(ProjectLayer(id: claim("paper"), about: request.base == nil
            ? "the base: hand-drawn parchment, made by TileKit (no file, no network)" : "another base: hand-drawn parchment, made by TileKit", entries: paper))
        document.layers.append(ProjectLayer(id: claim("grid"), about: "another base, hidden at first: every tile labelled with its z/x/y", entries: [
            .init("title", "Tile grid", "its name in the viewer's layer control"),
            .init("type", "generated", "tiles drawn by code"),
            .init("generator", "debug-grid", "tile borders and addresses"),
            .init("base", true, "a base layer"),
            .init("visible", false, "not shown until chosen in the layer control"),
        ]))
        var kinds = [String]()
        let under = request.base == nil ? "paper" : "the base map"
        if let image = request.image {
            switch image {
            case .scan(let path):
                try await addScan(path)
                kinds.append("a scan cut into tiles over \(under)")
            case .art(let path):
                try addArt(path)
                kinds.append("artwork pinned by its corners over \(under)")
            }
        }
        for (index, overlay) in request.overlays.enumerated() { try addOverlay(overlay, zIndex: 20 + index) }
        if !request.overlays.isEmpty { kinds.append("\(request.overlays.count) overlay layer\(request.overlays.count == 1 ? "" : "s")") }
        if let pois = request.pois {
            let count = try addGame(pois: pois, routes: request.routes)
            kinds.append("a game: \(count) point\(count == 1 ? "" : "s") of interest, \(request.routes.count) route\(request.routes.count == 1 ? "" : "s")")
        }
        let zooms = try addCamera()
        try write()
        return Made(summary: "\(kinds.joined(separator: ", ")); \(document.layers.count) layers, zooms \(zooms.lowerBound)-\(zooms.upperBound)")
    }

    /// The map under everything, from `--base`: first of the base layers, so it is shown.
    private mutating func addBase(_ base: InitRequest.Base) throws(CLIError) {
        switch base {
        case .remote(let template, let userAgent):
            do {
                try FileManager.default.createDirectory(at: folder.appendingPathComponent("cache"), withIntermediateDirectories: true)
            } catch {
                throw CLIError(error, .writing, "cache")
            }
            document.layers.append(ProjectLayer(id: claim("base"), about: "the base map, fetched from a tile server and kept in a cache", entries: [
                .init("title", "Base map", "its name in the viewer's layer control"),
                .init("type", "remote", "tiles fetched from a tile server by a URL template"),
                .init("source", template, "the template: {z} {x} {y}, {s} for subdomains, {r} for @2x"),
                .init("cache", "cache/base.mbtiles", "fetched tiles are kept here (and served stale when the server is down)"),
                .init("user-agent", userAgent, "names your app to the tile server, as its usage policy asks"),
                .init("base", true, "a base layer: base layers are alternatives (radio buttons), the rest stack above the one shown"),
            ]))
        case .pmtiles(let url):
            document.layers.append(ProjectLayer(id: claim("base"), about: "the base map, read from a PMTiles file by HTTP range requests", entries: [
                .init("title", "Base map", "its name in the viewer's layer control"),
                .init("type", "tiles", "tiles from a store: here the URL of a .pmtiles file"),
                .init("source", url, "read by range requests, a directory at a time"),
                .init("base", true, "a base layer: base layers are alternatives (radio buttons), the rest stack above the one shown"),
            ]))
        }
    }

    // MARK: - Images

    private func imageSize(_ image: InitRequest.Image, limits: ImageLimits) throws(CLIError) -> (width: Int, height: Int) {
        do {
            let reader = try ImageRowReader(path: image.path, limits: limits)
            return (reader.width, reader.height)
        } catch {
            let hint = limits == .default ? " (an image this large is a --scan: it is cut into tiles)" : ""
            throw CLIError(error, message: "\(image.flag) \(error.description)\(hint)")
        }
    }

    /// Where the image goes, as `tilekit pyramid` finds it; nil when nothing places it.
    private func georeference(_ image: InitRequest.Image, width: Int, height: Int) throws(CLIError) -> Georeference? {
        let arguments = request.arguments
        let placed = arguments.values["corners"] != nil || arguments.values["bounds"] != nil || PyramidCommand.hasGeoreferenceFile(image.path)
        guard placed else { return nil }
        do {
            return try PyramidCommand.locate(image.path, arguments: arguments, width: width, height: height)
        } catch {
            switch error {
            case .usage(let m): throw .usage("\(image.flag) \(m)")
            default: throw error
            }
        }
    }

    private func noGeoreference(_ image: InitRequest.Image, orPlist: Bool) -> CLIError {
        let stem = URL(fileURLWithPath: image.path).deletingPathExtension().lastPathComponent
        let worldFiles = PyramidCommand.worldFileCandidates(image.path).prefix(2).map { URL(fileURLWithPath: $0).lastPathComponent }
        return .usage("\(image.flag) \(image.path): the image has no georeference, so it has no place on the map: give --corners TL;TR;BR;BL "
            + "(LON,LAT each) or --bounds W,S,E,N, or put a world file beside it (\(worldFiles.joined(separator: " or ")), or \(stem).wld)"
            + (orPlist ? ", or give a park plist with overlay corners as --overlay" : ""))
    }

    private mutating func addScan(_ path: String) async throws(CLIError) {
        let image = InitRequest.Image.scan(path)
        let size = try imageSize(image, limits: .scan)
        guard let placement = try georeference(image, width: size.width, height: size.height) else { throw noGeoreference(image, orPlist: false) }
        extent += Self.clampedToMercator(placement.cornerCoordinates)

        let store = fileName("scan.mbtiles")
        var line = [path, "--out", folder.appendingPathComponent(store).path]
        for key in ["corners", "bounds", "crs", "zoom", "attribution"] {
            if let value = request.arguments.values[key] { line += ["--\(key)", value] }
        }
        if request.arguments.flag("quiet") { line.append("--quiet") }
        // `tilekit pyramid` itself, its path line on stdout dropped (init prints its own summary).
        let pyramidIO = CommandIO(readLine: io.readLine, write: { _ in }, writeError: io.writeError)
        let bound = try BoundArguments(Token.tokenize(line), spec: PyramidCommand.options)
        do {
            try await PyramidCommand.run(bound, io: pyramidIO)
        } catch {
            switch error {
            case .usage(let m): throw .usage("--scan \(m)")
            default: throw error
            }
        }
        let metadata: TileSetMetadata
        do { metadata = try TileStore.open(folder.appendingPathComponent(store).path).metadata } catch { throw CLIError(error) }
        scanZooms = metadata.minZoom...max(metadata.minZoom, metadata.maxZoom)
        let box = BoundingBox(covering: Self.clampedToMercator(placement.cornerCoordinates))
        let shownPlacement = request.arguments.values["corners"].map { "--corners \"\($0)\"" }
            ?? request.arguments.values["bounds"].map { "--bounds \($0)" } ?? "its world file"
        document.sources.append("`\(store)`: cut from `\(URL(fileURLWithPath: path).lastPathComponent)` by `tilekit pyramid` (placed by \(shownPlacement)); "
            + "to cut it again, `tilekit pyramid IMAGE \(shownPlacement.hasPrefix("--") ? shownPlacement + " " : "")--out \(store)`")
        var entries: [ProjectDocument.Entry] = [
            .init("title", URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent, "its name in the viewer's layer control"),
            .init("type", "tiles", "tiles from a store: a folder, .mbtiles or .pmtiles"),
            .init("source", store, "the store, relative to this folder"),
            .init("base", false, "an overlay: drawn over the base layer shown"),
            .init("opacity", 0.8, "0 to 1: at 0.8 the paper shows through a little"),
            .init("zindex", 10, "overlays stack by zindex, highest on top"),
            .init("native-maxzoom", metadata.maxZoom, "the deepest zoom the pyramid has; beyond it its tiles are scaled up (overzoom)"),
        ]
        if let box {
            entries.append(.init("bounds", ProjectDocument.box(box), "[west, south, east, north] of the scan: no tile is asked for outside it"))
        }
        document.layers.append(ProjectLayer(id: claim("scan"), about: "the scan, cut into tiles", entries: entries))
    }

    private mutating func addArt(_ path: String) throws(CLIError) {
        let image = InitRequest.Image.art(path)
        let size = try imageSize(image, limits: .default)
        let placement: ImageOverlay.Placement
        if let text = request.arguments.values["bounds"] {
            let box = try Parse.boundingBox(text)
            placement = .box(box)
            extent += [box.northWest, box.southEast]
        } else {
            var corners: [Coordinate]
            if let text = request.arguments.values["corners"] {
                corners = try ImageCorners(parsing: text).coordinates
            } else if let placement = try georeference(image, width: size.width, height: size.height) {
                corners = placement.cornerCoordinates
            } else if let (plist, plistCorners) = try parkPlistCorners() {
                corners = plistCorners
                cornersPlist = plist
            } else {
                throw noGeoreference(image, orPlist: true)
            }
            corners = try ImageCorners(corners, flag: "--art \(path)").coordinates
            extent += corners
            // To 7 decimals (about a centimetre), as the rest of map.json.
            let c = corners.map { $0.rounded(decimals: 7) }
            placement = .corners(topLeft: c[0], topRight: c[1], bottomRight: c[2], bottomLeft: c[3])
        }
        let imageFile = fileName("art." + URL(fileURLWithPath: path).pathExtension.lowercased())
        try copy(path, to: imageFile)
        var art = Feature(geometry: nil)
        art.imageOverlay = ImageOverlay(image: imageFile, placement: placement, opacity: 0.9)
        let geojson = fileName("art.geojson")
        // Pretty-printed: the note below tells people to edit the corners here.
        try writeFile(geojson, String(decoding: GeoJSON.encode([art], formatting: [.prettyPrinted, .withoutEscapingSlashes]), as: UTF8.self) + "\n")
        document.sources.append("`\(imageFile)`: your artwork; `\(geojson)`: where it lies (`image-corners`: top-left, top-right, bottom-right, bottom-left as [lon, lat], "
            + "or `image-bbox`), at 90% (`image-opacity`). Edit the corners there to move it.")
        document.layers.append(ProjectLayer(id: claim("art"), about: "your artwork, warped onto the map by its corners", entries: [
            .init("title", URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent, "its name in the viewer's layer control"),
            .init("type", "features", "drawn from data files into tiles"),
            .init("files", [geojson], "GeoJSON, GPX, KML or plist files, relative to this folder"),
            .init("zindex", 1, "overlays stack by zindex: the art lies under the pins and routes"),
        ]))
    }

    /// The overlay corners of a park plist among the overlays (MapKit's Park Pin layout:
    /// top-left, top-right and bottom-left; the fourth completes the parallelogram).
    private func parkPlistCorners() throws(CLIError) -> (String, [Coordinate])? {
        for file in request.overlays where URL(fileURLWithPath: file).pathExtension.lowercased() == "plist" {
            let features: [Feature]
            do { features = try PropertyList.load(URL(fileURLWithPath: file), overlayImage: "art") } catch { continue }
            for feature in features {
                if case .corners(let tl, let tr, let br, let bl)? = feature.imageOverlay?.placement { return (file, [tl, tr, br, bl]) }
            }
        }
        return nil
    }

    // MARK: - Feature layers and the game

    private mutating func addOverlay(_ path: String, zIndex: Int) throws(CLIError) {
        let features = try load(path, flag: "--overlay")
        extent += Self.coordinates(of: features)
        let name = try copyWithImages(path, features: features)
        let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        var entries: [ProjectDocument.Entry] = [
            .init("title", stem, "its name in the viewer's layer control"),
            .init("type", "features", "drawn from data files into tiles"),
            .init("files", [name], "GeoJSON, GPX, KML or plist files, relative to this folder"),
            .init("zindex", zIndex, "overlays stack by zindex, highest on top"),
        ]
        if path == cornersPlist {
            entries.append(.init("visible", false, "the park's boundary would cover the artwork: shown when ticked in the layer control"))
        }
        document.layers.append(ProjectLayer(id: claim(InitRequest.urlName(stem)), about: "`\(name)`, \(Self.describe(features))", entries: entries))
    }

    /// Returns the number of points of interest.
    private mutating func addGame(pois path: String, routes: [String]) throws(CLIError) -> Int {
        let features = try load(path, flag: "--pois")
        let points = features.filter { if case .point = $0.geometry { return true } else { return false } }
        guard !points.isEmpty else {
            throw .data("--pois \(path): no points: a game needs Point features (its points of interest), and the \(features.count) feature\(features.count == 1 ? "" : "s") in it \(features.count == 1 ? "is" : "are") \(Self.describe(features))")
        }
        extent += points.flatMap { $0.geometry?.coordinates ?? [] }
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        let name = fileName("pois." + ext)
        var defaulted = 0
        if ext == "geojson" || ext == "json" {
            defaulted = try writePOIs(from: path, to: name)
        } else {
            try copy(path, to: name)
        }
        do {
            _ = try PointsOfInterest.load(folder.appendingPathComponent(name).path)
        } catch {
            throw CLIError(error, message: "--pois \(String(describing: error).replacingOccurrences(of: folder.appendingPathComponent(name).path, with: path))")
        }
        document.sources.append("`\(name)`: your points of interest" + (defaulted > 0
            ? "; \(defaulted) were given a `kind` of quest (or a `title` from their `name`) (a kind is quest, monster, store, treasure or warp; `radius` is the encounter zone in meters, 10 by default)"
            : " (`kind`: quest, monster, store, treasure or warp; `radius`: the encounter zone in meters, 10 by default)"))
        document.layers.append(ProjectLayer(id: claim("points"), about: "the game's points of interest", entries: [
            .init("title", "Points of interest", "its name in the viewer's layer control"),
            .init("type", "features", "drawn from data files into tiles"),
            .init("files", [name], "the points, relative to this folder"),
            .init("zindex", 30, "on top of everything"),
        ]))
        var routeEntries = [(String, String)]()
        var routeFiles = [String]()
        var routeNames = Set<String>()
        for route in routes {
            do { _ = try RoutePlayback.load(route) } catch { throw CLIError(error, message: "--route \(String(describing: error))") }
            extent += try load(route, flag: "--route").flatMap { $0.geometry?.coordinates ?? [] }
            let file = fileName(URL(fileURLWithPath: route).lastPathComponent)
            try copy(route, to: file)
            var routeName = InitRequest.urlName(URL(fileURLWithPath: route).deletingPathExtension().lastPathComponent)
            var n = 2
            while !routeNames.insert(routeName).inserted { routeName = "\(InitRequest.urlName(URL(fileURLWithPath: route).deletingPathExtension().lastPathComponent))-\(n)"; n += 1 }
            routeEntries.append((routeName, file))
            routeFiles.append(file)
        }
        if !routeFiles.isEmpty {
            document.layers.append(ProjectLayer(id: claim("routes"), about: "the routes the game plays, as lines", entries: [
                .init("title", "Routes", "its name in the viewer's layer control"),
                .init("type", "features", "drawn from data files into tiles"),
                .init("files", routeFiles, "GPX files, relative to this folder"),
                .init("zindex", 25, "under the points"),
            ]))
        }
        var game = GameSection(pois: name, routes: Dictionary(uniqueKeysWithValues: routeEntries))
        var note = "the location game: `pois` are the points of interest, `routes` the GPX routes by name (played at /maps/\(request.name)/play?gpx=NAME)"
        if let first = routeEntries.first {
            game.timeWarp = 4
            game.autoplay = first.0
            note += "; `time-warp` plays them 4 times faster than walking, `autoplay` starts one when the viewer opens (the hero walks it and popups open at each encounter)"
        }
        document.game = .init("game", game, note)
        return points.count
    }

    /// Copies a GeoJSON of points, giving each Point without a `kind` (or `type`) the kind
    /// `quest` and a `title` from its `name`, so anyone's list of places is a playable game.
    /// Returns how many points it changed.
    /// (Numbers are read as JSON numbers, into Doubles: an integer id beyond 2^53 would come
    /// back rounded, so a file with none to change is copied as it is.)
    private func writePOIs(from path: String, to name: String) throws(CLIError) -> Int {
        let root: JSONValue
        do {
            root = try JSONValue.parse(FeatureError.read(URL(fileURLWithPath: path)), file: path)
        } catch {
            throw CLIError(error, message: "--pois \(error.description)")
        }
        guard case .object(var collection) = root.propertyValue, case .array(var features)? = collection["features"] else {
            try copy(path, to: name)  // a lone Feature or a geometry: as it is
            return 0
        }
        var changed = 0
        for index in features.indices {
            guard case .object(var feature) = features[index], case .object(let geometry)? = feature["geometry"],
                  geometry["type"] == .string("Point") else { continue }
            var properties: [String: PropertyValue]
            if case .object(let given)? = feature["properties"] { properties = given } else { properties = [:] }
            var touched = false
            if properties["kind"] == nil && properties["type"] == nil {
                properties["kind"] = .string("quest")
                touched = true
            }
            // Most lists of places call it "name"; the viewer's popups show "title".
            if properties["title"] == nil, case .string(let placeName)? = properties["name"] {
                properties["title"] = .string(placeName)
                touched = true
            }
            guard touched else { continue }
            feature["properties"] = .object(properties)
            features[index] = .object(feature)
            changed += 1
        }
        guard changed > 0 else {
            try copy(path, to: name)
            return 0
        }
        collection["features"] = .array(features)
        // The user's own keys stay, sorted as every JSON TileKit writes.
        guard let text = PropertyValue.object(collection).sortedJSONText() else {
            throw .failure("--pois \(path): cannot write its points back as JSON")
        }
        try writeFile(name, text + "\n")
        return changed
    }

    private func load(_ path: String, flag: String) throws(CLIError) -> [Feature] {
        do {
            return try FeatureFiles.load(path)
        } catch {
            throw CLIError(error, message: "\(flag) \(error.description)")
        }
    }

    /// Where features are: their geometry, and the corners of the images they lay.
    static func coordinates(of features: [Feature]) -> [Coordinate] {
        features.flatMap { feature -> [Coordinate] in
            var all = feature.geometry?.coordinates ?? []
            switch feature.imageOverlay?.placement {
            case .box(let box)?: all += [box.northWest, box.southEast]
            case .corners(let tl, let tr, let br, let bl)?: all += [tl, tr, br, bl]
            case nil: break
            }
            return all
        }
    }

    static func describe(_ features: [Feature]) -> String {
        var counts = [String: Int]()
        for feature in features {
            let kind: String
            switch feature.geometry {
            case .point?, .multiPoint?: kind = "point"
            case .lineString?, .multiLineString?: kind = "line"
            case .polygon?, .multiPolygon?: kind = "area"
            case .geometryCollection?: kind = "collection"
            case nil: kind = feature.imageOverlay == nil ? "feature without geometry" : "image"
            }
            counts[kind, default: 0] += 1
        }
        guard !counts.isEmpty else { return "empty" }
        return counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)\($0.value == 1 ? "" : "s")" }.joined(separator: ", ")
    }

    // MARK: - Camera

    /// Center, zoom, zoom range and bounds from everything the map shows: fitted to a
    /// 1024x768 window, a few zooms out and in, panning limited to the data and half again.
    private mutating func addCamera() throws(CLIError) -> ClosedRange<Int> {
        // Data beyond Web Mercator's ±85.05° is shown at its edge (bounds must stay on the map).
        guard let box = BoundingBox(covering: Self.clampedToMercator(extent)) else {
            throw .data("no coordinates in the files given: nothing to center the map on")
        }
        let fitted = Zoom.fitting(box, in: PixelSize(width: 1024, height: 768), maxZoom: 20).rounded(.down)
        let zoom = min(20, max(0, Int(exactly: fitted) ?? 0))
        var minZoom = max(0, zoom - 3)
        var maxZoom = min(22, max(zoom + 4, 18))
        if let scan = scanZooms {
            minZoom = max(0, min(minZoom, scan.lowerBound))
            maxZoom = min(22, max(scan.upperBound + 2, zoom + 2))
        }
        let growX = max(box.longitudeSpan / 2, 0.005), growY = max(box.latitudeSpan / 2, 0.005)
        let limit = Coordinate.maxMercatorLatitude
        let bounds = BoundingBox(west: max(-180, box.west - growX), south: max(-limit, box.south - growY),
                                 east: min(180, box.east + growX), north: min(limit, box.north + growY))
        let center = Coordinate(latitude: min(max(box.center.latitude, -limit), limit), longitude: box.center.longitude)
        document.map.append(.init("center", ProjectDocument.position(center), "[longitude, latitude] where the viewer opens"))
        document.map.append(.init("zoom", zoom, "the zoom it opens at (the data fits a 1024x768 window)"))
        document.map.append(.init("minzoom", minZoom, "how far out one may zoom"))
        document.map.append(.init("maxzoom", maxZoom, "how far in (past a layer's own zooms its tiles are scaled up)"))
        document.map.append(.init("bounds", ProjectDocument.box(bounds),
                                  "[west, south, east, north]: the viewer cannot pan out of it and no tile outside it is served (the data and half again around it)"))
        return minZoom...maxZoom
    }

    /// A world scan reaches ±90°; Web Mercator stops at ±85.05°.
    static func clampedToMercator(_ coordinates: [Coordinate]) -> [Coordinate] {
        let limit = Coordinate.maxMercatorLatitude
        return coordinates.map { Coordinate(latitude: min(max($0.latitude, -limit), limit), longitude: $0.longitude) }
    }

    // MARK: - Files

    /// A layer id not taken yet (`pins`, `pins-2`, ...).
    private mutating func claim(_ id: String) -> String {
        var candidate = id, n = 2
        while !usedIDs.insert(candidate).inserted {
            candidate = "\(id)-\(n)"
            n += 1
        }
        return candidate
    }

    /// A file name in the project not taken yet (`route.gpx`, `route-2.gpx`, ...).
    private mutating func fileName(_ wanted: String) -> String {
        let url = URL(fileURLWithPath: wanted)
        let stem = url.deletingPathExtension().lastPathComponent, ext = url.pathExtension
        var candidate = wanted, n = 2
        while !usedFiles.insert(candidate.lowercased()).inserted || candidate == "map.json" || candidate.lowercased() == "readme.md" {
            candidate = "\(stem)-\(n)" + (ext.isEmpty ? "" : ".\(ext)")
            n += 1
        }
        return candidate
    }

    /// Copies a file into the project under `name` (claimed with `fileName`).
    private func copy(_ path: String, to name: String) throws(CLIError) {
        do {
            try FileManager.default.copyItem(atPath: path, toPath: folder.appendingPathComponent(name).path)
        } catch {
            throw CLIError(error, .reading, path)
        }
    }

    /// A data file and the images it names by a plain relative path (overlay images,
    /// marker images), which must stay beside it.
    private mutating func copyWithImages(_ path: String, features: [Feature]) throws(CLIError) -> String {
        let name = fileName(URL(fileURLWithPath: path).lastPathComponent)
        try copy(path, to: name)
        let source = URL(fileURLWithPath: path).deletingLastPathComponent()
        let images = Set(features.compactMap { $0.imageOverlay?.image } + features.compactMap { $0.style.markerImage })
        for image in images.sorted() where !image.hasPrefix("/") {
            guard !image.split(separator: "/").contains("..") else {
                throw .data("--overlay \(path): the image \"\(image)\" is outside the file's folder; put it beside the file (or below it) so the project can hold both")
            }
            let target = folder.appendingPathComponent(image)
            guard !FileManager.default.fileExists(atPath: target.path) else { continue }
            do {
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: source.appendingPathComponent(image), to: target)
            } catch {
                throw CLIError(error, .reading, source.appendingPathComponent(image).path)
            }
            usedFiles.insert(image.lowercased())
        }
        return name
    }

    private func writeFile(_ name: String, _ text: String) throws(CLIError) {
        do {
            try Data(text.utf8).write(to: folder.appendingPathComponent(name))
        } catch {
            throw CLIError(error, .writing, name)
        }
    }

    private func write() throws(CLIError) {
        try writeFile("map.json", document.json)
        try writeFile("README.md", document.readme(name: request.name, title: request.title ?? request.name))
    }
}

/// map.json's `game` section as `init` writes it.
struct GameSection: Encodable {
    var pois: String
    var routes: [String: String]
    var timeWarp: Double?
    var autoplay: String?

    enum CodingKeys: String, CodingKey {
        case pois, routes, autoplay
        case timeWarp = "time-warp"
    }
}
