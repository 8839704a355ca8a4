import Foundation
import TileMath
import TileSources
import Canvas
import Features
import Rendering
import Game

/// Reads `map.json`, checking everything it can before anything is served, and collecting
/// every problem with its JSON path instead of stopping at the first.
///
/// ```json
/// {"name": "central-park", "title": "MapQuest", "attribution": "© OpenStreetMap contributors",
///  "center": [-73.9665, 40.7812], "zoom": 15, "minzoom": 13, "maxzoom": 18,
///  "bounds": [-73.9819, 40.7644, -73.9493, 40.8006], "missing-tile": 204, "cors": "*",
///  "layers": [
///    {"id": "parchment", "type": "tiles", "source": "tiles/parchment.mbtiles", "base": true,
///     "native-maxzoom": 16, "fallback": "parchment.png"},
///    {"id": "osm", "type": "remote", "source": "https://tile.openstreetmap.org/{z}/{x}/{y}.png",
///     "cache": "cache/osm.mbtiles", "user-agent": "MyGame/1.0 (me@example.com)", "base": true, "visible": false},
///    {"id": "pois", "title": "Pins", "type": "features", "files": ["pois.geojson", "route.gpx"], "zindex": 10}]}
/// ```
public enum MapProjectReader {
    static let mapKeys: Set<String> = ["name", "title", "attribution", "center", "zoom", "minzoom", "maxzoom", "bounds",
                                       "missing-tile", "cors", "layers", "description", "game"]
    static let layerKeys: Set<String> = ["id", "title", "type", "source", "scheme", "cache", "user-agent", "subdomains", "generator",
                                         "files", "base", "visible", "zindex", "opacity", "minzoom", "maxzoom", "native-minzoom",
                                         "native-maxzoom", "bounds", "fallback", "replaces-base", "max-age", "format", "tile-size", "overlay-image", "antialias",
                                         "label-priority", "draw"]

    /// Reads and checks a project; throws every problem found (`validate` reports them).
    public static func load(_ url: URL) throws(ProjectProblems) -> MapProject {
        try open(url).project
    }

    /// Reads, checks and opens a project once: the tile stores, points of interest and
    /// routes its check opened come with it, for `ServedMap` to serve; throws every problem
    /// found. The JSON goes through `JSONValue.parse`, which refuses nesting deeper than
    /// `FeatureLimits.jsonDepth` (256) and numbers beyond a Double before Foundation's
    /// recursive parser sees them.
    public static func open(_ url: URL) throws(ProjectProblems) -> OpenedProject {
        let file = url.path
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ProjectProblems(problems: [ProjectProblem(file: file, place: "", reason: FileManager.default.fileExists(atPath: file)
                ? "cannot be read" : "no such file", isIO: true)])
        }
        let root: JSONValue
        do {
            root = try JSONValue.parse(data, file: file)
        } catch {
            throw ProjectProblems(problems: [error])  // it names the file
        }
        var reader = Reader(file: file, folder: url.deletingLastPathComponent())
        let project = reader.project(root, defaultName: url.deletingPathExtension().lastPathComponent)
        guard reader.problems.isEmpty, let project else { throw ProjectProblems(problems: reader.problems) }
        return OpenedProject(project, file: file, stores: reader.stores, pois: reader.pois, routes: reader.routes, featureFiles: reader.featureFiles)
    }

    /// A plain tile store as a one-layer map named after its file (`world.mbtiles`: `world`), as mbtileserver does;
    /// a URL of a PMTiles file is named after the file at its end.
    public static func store(_ path: String) throws(ProjectProblems) -> MapProject {
        try openStore(path).project
    }

    /// `store`, with the store it opened kept for serving.
    public static func openStore(_ path: String) throws(ProjectProblems) -> OpenedProject {
        let remote = TileStore.isURL(path)
        let url = remote ? (URL(string: path) ?? URL(fileURLWithPath: path)) : URL(fileURLWithPath: path).standardizedFileURL
        let location = remote ? path : url.path
        let name = url.deletingPathExtension().lastPathComponent
        do {
            let source = try TileStore.open(location)
            var layer = LayerSpec(id: name, source: .store(path: location, scheme: nil), isBase: true)
            layer.format = source.metadata.format ?? .png
            let folder = remote ? URL(fileURLWithPath: FileManager.default.currentDirectoryPath) : url.deletingLastPathComponent()
            var project = MapProject(name: name, title: source.metadata.name, layers: [layer], folder: folder)
            project.attribution = source.metadata.attribution
            project.bounds = source.metadata.bounds
            project.center = source.metadata.center
            project.zoom = source.metadata.centerZoom
            project.minZoom = source.metadata.minZoom
            project.maxZoom = max(source.metadata.maxZoom, min(22, source.metadata.maxZoom + 2))
            return OpenedProject(project, file: path, stores: [location: source], pois: nil, routes: [:], featureFiles: [:])
        } catch {
            throw ProjectProblems(problems: [ProjectProblem(file: path, place: "", reason: error.description, isIO: error.isIO)])
        }
    }

    struct Reader {
        let file: String
        let folder: URL
        var problems = [ProjectProblem]()
        /// What the checks opened, kept for serving.
        var stores = [String: any TileSource]()
        var pois: [PointOfInterest]?
        var routes = [String: RoutePlayback]()
        var featureFiles = [String: (features: [Feature], images: [String: RGBAImage])]()

        mutating func fail(_ path: String, _ message: String, isIO: Bool = false) {
            problems.append(ProjectProblem(file: file, place: path, reason: message, isIO: isIO))
        }

        mutating func project(_ root: JSONValue, defaultName: String) -> MapProject? {
            guard case .object(let map) = root else { fail("", "expected a map object, found \(root.kind)"); return nil }
            unknownKeys(map, MapProjectReader.mapKeys, "")
            let name = string(map["name"], "name") ?? defaultName
            if !MapProjectReader.isURLName(name) { fail("name", "\"\(name)\" must be letters, digits, '-' or '_' (it is part of URLs)") }
            var layers = [LayerSpec]()
            if case .array(let items)? = map["layers"] {
                if items.isEmpty { fail("layers", "a map needs at least one layer") }
                for (i, item) in items.enumerated() {
                    if let layer = layer(item, "layers[\(i)]") { layers.append(layer) }
                }
                var seen = Set<String>()
                for (i, layer) in layers.enumerated() where !seen.insert(layer.id).inserted {
                    fail("layers[\(i)].id", "\"\(layer.id)\" is used by another layer")
                }
            } else {
                fail("layers", map["layers"] == nil ? "missing: a map needs a \"layers\" array" : "expected an array, found \(map["layers"]!.kind)")
            }
            var project = MapProject(name: name, title: string(map["title"], "title"), layers: layers, folder: folder)
            project.attribution = string(map["attribution"], "attribution")
            project.minZoom = zoom(map["minzoom"], "minzoom") ?? 0
            project.maxZoom = zoom(map["maxzoom"], "maxzoom") ?? 22
            if project.minZoom > project.maxZoom { fail("minzoom", "\(project.minZoom) is above maxzoom \(project.maxZoom)") }
            project.bounds = bounds(map["bounds"], "bounds")
            if let value = map["center"] {
                if let c = coordinate(value, "center") {
                    project.center = c
                    if let b = project.bounds, !b.contains(c) { fail("center", "[\(c.longitude), \(c.latitude)] is outside bounds") }
                }
            }
            if let z = zoom(map["zoom"], "zoom") {
                project.zoom = z
                if !(project.minZoom...max(project.minZoom, project.maxZoom)).contains(z) {
                    fail("zoom", "\(z) is outside minzoom-maxzoom \(project.minZoom)-\(project.maxZoom)")
                }
            }
            if let value = map["missing-tile"] {
                if case .number(let n) = value, n == 204 || n == 404 { project.missingTileStatus = Int(n) } else { fail("missing-tile", "expected 204 or 404") }
            }
            if let value = map["game"] { project.game = game(value, "game") }
            if let value = map["cors"] {
                switch value {
                case .null: project.cors = nil
                case .string(let s): project.cors = s
                default: fail("cors", "expected an origin such as \"*\", or null")
                }
            }
            return project
        }

        mutating func layer(_ value: JSONValue, _ path: String) -> LayerSpec? {
            guard case .object(let o) = value else { fail(path, "expected a layer object, found \(value.kind)"); return nil }
            unknownKeys(o, MapProjectReader.layerKeys, path)
            guard let id = string(o["id"], path + ".id") else {
                if o["id"] == nil { fail(path + ".id", "missing: every layer needs an id") }
                return nil
            }
            if !MapProjectReader.isURLName(id) { fail(path + ".id", "\"\(id)\" must be letters, digits, '-' or '_' (it is part of URLs)") }
            let type = string(o["type"], path + ".type") ?? (o["files"] != nil ? "features" : "tiles")
            let source: LayerSpec.Source
            switch type {
            case "tiles":
                guard let text = string(o["source"], path + ".source") else {
                    if o["source"] == nil { fail(path + ".source", "missing: a tiles layer needs a folder, .mbtiles or .pmtiles") }
                    return nil
                }
                // An http(s) URL of a .pmtiles file is read with range requests.
                let resolved = TileStore.isURL(text) ? text : resolve(text)
                var scheme: TileScheme?
                if let s = string(o["scheme"], path + ".scheme") {
                    scheme = TileScheme(rawValue: s)
                    if scheme == nil { fail(path + ".scheme", "\"\(s)\" is not xyz or tms") }
                }
                if !TileStore.isURL(resolved) && !FileManager.default.fileExists(atPath: resolved) {
                    fail(path + ".source", "no such file \"\(text)\"")
                } else {
                    do { stores[resolved] = try TileStore.open(resolved, scheme: scheme) } catch { fail(path + ".source", error.description, isIO: error.isIO) }
                }
                source = .store(path: resolved, scheme: scheme)
            case "remote":
                guard let text = string(o["source"], path + ".source") else {
                    if o["source"] == nil { fail(path + ".source", "missing: a remote layer needs a URL template") }
                    return nil
                }
                let subdomains = string(o["subdomains"], path + ".subdomains").map(URLTemplate.subdomains) ?? ["a", "b", "c"]
                let template: URLTemplate
                do { template = try URLTemplate(text, subdomains: subdomains) } catch { fail(path + ".source", error.description); return nil }
                var cache: String?
                if let c = string(o["cache"], path + ".cache") {
                    cache = resolve(c)
                    let parent = URL(fileURLWithPath: cache!).deletingLastPathComponent().path
                    var isDirectory: ObjCBool = false
                    if !FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory) || !isDirectory.boolValue {
                        fail(path + ".cache", "no folder \"\(URL(fileURLWithPath: c).deletingLastPathComponent().relativePath)\" for the cache")
                    }
                }
                guard let agent = string(o["user-agent"], path + ".user-agent") else {
                    if o["user-agent"] == nil {
                        fail(path + ".user-agent", "missing: tile servers ask for a User-Agent naming your app (OSM's tile usage policy)")
                    }
                    return nil
                }
                source = .remote(template: template, cache: cache, userAgent: agent)
            case "generated":
                let name = string(o["generator"], path + ".generator") ?? "debug-grid"
                if !["debug-grid", "parchment"].contains(name) { fail(path + ".generator", "\"\(name)\" is not a generator (debug-grid, parchment)") }
                source = .generated(name)
            case "features":
                guard case .array(let items)? = o["files"], !items.isEmpty else {
                    fail(path + ".files", "a features layer needs a non-empty array of GeoJSON, GPX, KML or plist files")
                    return nil
                }
                let overlayImage = string(o["overlay-image"], path + ".overlay-image")
                var files = [String]()
                for (i, item) in items.enumerated() {
                    guard let text = string(item, path + ".files[\(i)]") else { continue }
                    let resolved = resolve(text)
                    if !FileManager.default.fileExists(atPath: resolved) {
                        fail(path + ".files[\(i)]", "no such file \"\(text)\"")
                        continue
                    }
                    do {
                        let features = try FeatureFiles.load(resolved, overlayImage: overlayImage)
                        let images = try FeatureRenderer.loadImages(for: features, relativeTo: URL(fileURLWithPath: resolved).deletingLastPathComponent())
                        featureFiles[OpenedProject.featureKey(resolved, overlayImage: overlayImage)] = (features, images)
                    } catch let error as FeatureError {
                        fail(path + ".files[\(i)]", error.description, isIO: error.isIO)
                    } catch {
                        fail(path + ".files[\(i)]", "\(text): image: \(error)")
                    }
                    files.append(resolved)
                }
                source = .features(files: files)
            default:
                fail(path + ".type", "\"\(type)\" is not tiles, remote, generated or features")
                return nil
            }
            var layer = LayerSpec(id: id, title: string(o["title"], path + ".title"), source: source,
                                  isBase: bool(o["base"], path + ".base") ?? (type == "tiles" || type == "remote"))
            layer.visible = bool(o["visible"], path + ".visible") ?? true
            layer.overlayImage = string(o["overlay-image"], path + ".overlay-image")
            if let text = string(o["antialias"], path + ".antialias") {
                if let value = Canvas.Antialias(rawValue: text) { layer.antialias = value } else { fail(path + ".antialias", "\"\(text)\" is not best or fast") }
            }
            if let z = int(o["zindex"], path + ".zindex") { layer.options.zIndex = z }
            if let priority = int(o["label-priority"], path + ".label-priority") { layer.labelPriority = priority }
            if let draws = bool(o["draw"], path + ".draw") {
                if type == "features" { layer.draws = draws } else { fail(path + ".draw", "only a features layer can leave its drawing to another map") }
            }
            if let opacity = number(o["opacity"], path + ".opacity") {
                if (0...1).contains(opacity) { layer.options.opacity = opacity } else { fail(path + ".opacity", "\(opacity) is out of range [0, 1]") }
            }
            layer.options.minZoom = zoom(o["minzoom"], path + ".minzoom") ?? 0
            layer.options.maxZoom = zoom(o["maxzoom"], path + ".maxzoom") ?? 22
            if layer.options.minZoom > layer.options.maxZoom { fail(path + ".minzoom", "\(layer.options.minZoom) is above maxzoom \(layer.options.maxZoom)") }
            layer.options.nativeMinZoom = zoom(o["native-minzoom"], path + ".native-minzoom")
            layer.options.nativeMaxZoom = zoom(o["native-maxzoom"], path + ".native-maxzoom")
            if let a = layer.options.nativeMinZoom, let b = layer.options.nativeMaxZoom, a > b {
                fail(path + ".native-minzoom", "\(a) is above native-maxzoom \(b)")
            }
            layer.options.bounds = bounds(o["bounds"], path + ".bounds")
            layer.options.replacesBase = bool(o["replaces-base"], path + ".replaces-base") ?? false
            if let seconds = int(o["max-age"], path + ".max-age") {
                if seconds >= 0 { layer.maxAgeSeconds = seconds } else { fail(path + ".max-age", "\(seconds) must be 0 or more seconds") }
            }
            if let size = int(o["tile-size"], path + ".tile-size") {
                if size == 256 || size == 512 { layer.options.tileSize = size } else { fail(path + ".tile-size", "\(size) is not 256 or 512") }
            }
            if let f = string(o["format"], path + ".format") {
                if let format = ImageFormat(name: f) { layer.format = format } else { fail(path + ".format", "\"\(f)\" is not png, jpg or webp") }
            }
            if let value = o["fallback"] { layer.options.fallback = fallback(value, path + ".fallback") }
            return layer
        }

        /// `{"pois": "pois.geojson", "routes": {"game-test": "game-test.gpx"}, "speed": 1.4,
        ///   "tick": 1, "time-warp": 1, "autoplay": "game-test"}`
        mutating func game(_ value: JSONValue, _ path: String) -> GameSpec? {
            guard case .object(let o) = value else { fail(path, "expected an object with pois and routes"); return nil }
            unknownKeys(o, ["pois", "routes", "speed", "tick", "time-warp", "autoplay"], path)
            guard let poisText = string(o["pois"], path + ".pois") else {
                if o["pois"] == nil { fail(path + ".pois", "missing: a GeoJSON or plist of points of interest") }
                return nil
            }
            let pois = resolve(poisText)
            if !FileManager.default.fileExists(atPath: pois) {
                fail(path + ".pois", "no such file \"\(poisText)\"")
            } else {
                do { self.pois = try PointsOfInterest.load(pois) } catch { fail(path + ".pois", "\(error)", isIO: error.isIO) }
            }
            var routes = [String: String]()
            // Routes are read at the game's speed, kept for /play (a bad speed is reported
            // below; the routes are then read at the default one, only to be checked).
            var speed = GameSpec(pois: pois, routes: [:]).speed
            if case .number(let value)? = o["speed"], RoutePlayback.speedRange.contains(value) { speed = value }
            if case .object(let items)? = o["routes"] {
                for (name, item) in items.sorted(by: { $0.key < $1.key }) {
                    guard let text = string(item, path + ".routes." + name) else { continue }
                    if !MapProjectReader.isURLName(name) { fail(path + ".routes." + name, "the route name must be letters, digits, '-' or '_'") }
                    let file = resolve(text)
                    if !FileManager.default.fileExists(atPath: file) { fail(path + ".routes." + name, "no such file \"\(text)\""); continue }
                    do { self.routes[name] = try RoutePlayback.load(file, speed: speed) } catch { fail(path + ".routes." + name, "\(error)", isIO: error.isIO) }
                    routes[name] = file
                }
            } else if o["routes"] != nil {
                fail(path + ".routes", "expected an object of name: GPX file")
            }
            var spec = GameSpec(pois: pois, routes: routes)
            // The ranges playback accepts, checked here so a map never loads that /play refuses.
            for (key, range, keyPath) in [("speed", RoutePlayback.speedRange, \GameSpec.speed), ("tick", Simulation.tickSecondsRange, \GameSpec.tickSeconds),
                                          ("time-warp", RoutePlayback.timeWarpRange, \GameSpec.timeWarp)] {
                guard let v = number(o[key], path + "." + key) else { continue }
                if range.contains(v) { spec[keyPath: keyPath] = v } else { fail(path + "." + key, "\(v) is outside \(range.lowerBound)-\(range.upperBound)") }
            }
            if let name = string(o["autoplay"], path + ".autoplay") {
                if routes[name] == nil { fail(path + ".autoplay", "\"\(name)\" is not one of the routes") } else { spec.autoplay = name }
            }
            return spec
        }

        mutating func fallback(_ value: JSONValue, _ path: String) -> Fallback {
            guard let text = string(value, path) else { return .none }
            if text == "transparent" { return .transparent }
            if text.hasPrefix("#") {
                if let color = Color(hex: text) { return .color(color) }
                fail(path, "\"\(text)\" is not a colour")
                return .none
            }
            let resolved = resolve(text)
            guard FileManager.default.fileExists(atPath: resolved) else { fail(path, "no such file \"\(text)\""); return .none }
            do {
                return .image(try RGBAImage(contentsOf: URL(fileURLWithPath: resolved)))
            } catch {
                fail(path, "\"\(text)\": \(error.description)")
                return .none
            }
        }

        func resolve(_ text: String) -> String {
            text.hasPrefix("/") ? text : folder.appendingPathComponent(text).standardizedFileURL.path
        }

        mutating func unknownKeys(_ object: [String: JSONValue], _ allowed: Set<String>, _ path: String) {
            for key in object.keys.sorted() where !allowed.contains(key) {
                let near = allowed.min { a, b in editDistance(a, key) < editDistance(b, key) }
                let hint = near.map { editDistance($0, key) <= 2 ? " (did you mean \"\($0)\"?)" : "" } ?? ""
                fail(path.isEmpty ? key : path + "." + key, "unknown key\(hint)")
            }
        }

        mutating func string(_ value: JSONValue?, _ path: String) -> String? {
            guard let value else { return nil }
            guard case .string(let s) = value else { fail(path, "expected a string, found \(value.kind)"); return nil }
            return s
        }

        mutating func bool(_ value: JSONValue?, _ path: String) -> Bool? {
            guard let value else { return nil }
            guard case .bool(let b) = value else { fail(path, "expected true or false, found \(value.kind)"); return nil }
            return b
        }

        mutating func number(_ value: JSONValue?, _ path: String) -> Double? {
            guard let value else { return nil }
            guard case .number(let n) = value else { fail(path, "expected a number, found \(value.kind)"); return nil }
            return n
        }

        mutating func int(_ value: JSONValue?, _ path: String) -> Int? {
            guard let n = number(value, path) else { return nil }
            guard n == n.rounded(), abs(n) < 1e9 else { fail(path, "\(n) is not a whole number"); return nil }
            return Int(n)
        }

        mutating func zoom(_ value: JSONValue?, _ path: String) -> Int? {
            guard let z = int(value, path) else { return nil }
            guard (0...TileID.maxZoom).contains(z) else { fail(path, "zoom \(z) is out of range [0, \(TileID.maxZoom)]"); return nil }
            return z
        }

        mutating func coordinate(_ value: JSONValue, _ path: String) -> Coordinate? {
            guard case .array(let items) = value, items.count >= 2, case .number(let lon) = items[0], case .number(let lat) = items[1] else {
                fail(path, "expected [longitude, latitude]")
                return nil
            }
            guard (-90...90).contains(lat), (-180...180).contains(lon) else {
                fail(path, "[\(lon), \(lat)] is not a longitude and latitude" + ((-90...90).contains(lon) && !(-90...90).contains(lat) ? " (swapped?)" : ""))
                return nil
            }
            return Coordinate(latitude: lat, longitude: lon)
        }

        mutating func bounds(_ value: JSONValue?, _ path: String) -> BoundingBox? {
            guard let value else { return nil }
            let numbers: [Double]
            if case .array(let items) = value { numbers = items.compactMap { if case .number(let n) = $0 { return n } else { return nil } } } else { numbers = [] }
            guard numbers.count == 4, numbers.count == { if case .array(let a) = value { return a.count } else { return -1 } }() else {
                fail(path, "expected [west, south, east, north]")
                return nil
            }
            let (w, s, e, n) = (numbers[0], numbers[1], numbers[2], numbers[3])
            guard (-180...180).contains(w), (-180...180).contains(e), (-90...90).contains(s), (-90...90).contains(n) else {
                fail(path, "[\(w), \(s), \(e), \(n)] is out of range")
                return nil
            }
            guard s < n else { fail(path, "south \(s) is not below north \(n)"); return nil }
            return BoundingBox(west: w, south: s, east: e, north: n)
        }
    }

    /// Names that can be a URL segment as they are.
    public static func isURLName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy(isURLNameByte)
    }

    /// 0-9 A-Z a-z - _
    public static func isURLNameByte(_ c: UInt8) -> Bool {
        (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c) || c == 45 || c == 95
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(1, b.count) where !b.isEmpty {
                let saved = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = saved
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
