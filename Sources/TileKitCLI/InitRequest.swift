import Foundation
import MapProjects
import TileSources

/// What `tilekit init` was asked to make, checked before anything is written: which flags
/// go together, that every file exists, that corners are a proper quadrilateral.
struct InitRequest {
    enum Image {
        /// Cut into a pyramid.
        case scan(String)
        /// Laid as it is, pinned by its corners.
        case art(String)

        var path: String {
            switch self {
            case .scan(let p), .art(let p): return p
            }
        }
        var flag: String {
            switch self {
            case .scan: return "--scan"
            case .art: return "--art"
            }
        }
    }

    var image: Image?
    var overlays: [String]
    var pois: String?
    var routes: [String]
    /// A base map under everything (`--base`): a tile server's URL template, fetched with
    /// `userAgent` and cached, or the http(s) URL of a PMTiles file.
    enum Base {
        case remote(template: String, userAgent: String)
        case pmtiles(String)
    }

    var base: Base?
    var name: String
    var title: String?
    var attribution: String?
    /// The options `tilekit pyramid` reads to place an image (`bounds`, `corners`, `crs`, `zoom`).
    var arguments: BoundArguments

    init(_ arguments: BoundArguments, folder: String) throws(CLIError) {
        self.arguments = arguments
        if arguments.values["scan"] != nil && arguments.values["art"] != nil {
            throw .usage("--scan and --art: give one image (a scan is cut into tiles, artwork is laid as it is)")
        }
        image = arguments.values["scan"].map(Image.scan) ?? arguments.values["art"].map(Image.art)
        overlays = arguments.all("overlay")
        pois = arguments.values["pois"]
        routes = arguments.all("route")
        title = arguments.values["title"]
        attribution = arguments.values["attribution"]

        if !routes.isEmpty && pois == nil {
            throw .usage("--route is a route of a game: give its points of interest with --pois FILE")
        }
        if image == nil && overlays.isEmpty && pois == nil {
            throw .usage("nothing to make a map of: give --scan IMAGE, --art IMAGE, --overlay FILE or --pois FILE (see --help)")
        }
        if arguments.values["corners"] != nil && arguments.values["bounds"] != nil {
            throw .usage("--corners and --bounds: give one placement for the image")
        }
        if image == nil {
            for flag in ["corners", "bounds", "crs"] where arguments.values[flag] != nil {
                throw .usage("--\(flag) places an image: give --scan IMAGE or --art IMAGE with it")
            }
        }
        if arguments.values["zoom"] != nil {
            guard case .scan? = image else { throw .usage("--zoom sets the zooms of a scan's pyramid: give --scan IMAGE with it") }
            _ = try Parse.zoomRange(arguments.values["zoom"] ?? "")
        }
        if let text = arguments.values["base"] {
            base = try Self.base(text, userAgent: arguments.values["user-agent"])
        } else if arguments.values["user-agent"] != nil {
            throw .usage("--user-agent names your app to the tile server of --base: give --base URL with it")
        }
        if let text = arguments.values["corners"] { _ = try ImageCorners(parsing: text) }
        if let text = arguments.values["bounds"] { _ = try Parse.boundingBox(text) }

        let files = [(image?.flag ?? "", image?.path)] + overlays.map { ("--overlay", Optional($0)) }
            + [("--pois", pois)] + routes.map { ("--route", Optional($0)) }
        for case let (flag, path?) in files {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .io("\(flag) \(path): no such file") }
            if isDirectory.boolValue { throw .usage("\(flag) \(path): is a folder, not a file") }
        }
        for route in routes where URL(fileURLWithPath: route).pathExtension.lowercased() != "gpx" {
            throw .usage("--route \(route): a route is a GPX file (.gpx)")
        }

        let folderName = URL(fileURLWithPath: folder).standardizedFileURL.lastPathComponent
        name = arguments.values["name"] ?? Self.urlName(folderName)
        guard MapProjectReader.isURLName(name) else {
            throw .usage("--name \"\(name)\": a map's name is part of its URLs: letters, digits, '-' or '_', at most 64 bytes")
        }
    }

    /// `--base`: a URL template (checked as the server will read it) or a PMTiles URL.
    static func base(_ text: String, userAgent: String?) throws(CLIError) -> Base {
        guard TileStore.isURL(text) else {
            throw .usage("--base \"\(text)\": expected a tile server's URL template (https://tile.example.com/{z}/{x}/{y}.png) or the https URL of a .pmtiles file")
        }
        guard text.contains("{") else {
            guard URL(string: text)?.pathExtension.lowercased() == "pmtiles" else {
                throw .usage("--base \"\(text)\": a URL without {z}/{x}/{y} must be a .pmtiles file")
            }
            return .pmtiles(text)
        }
        do { _ = try URLTemplate(text) } catch { throw .usage("--base \"\(text)\": \(error.description)") }
        guard let userAgent, !userAgent.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .usage("--base \"\(text)\": give --user-agent \"YourApp/1.0 (you@example.com)\" too: tile servers ask for one that names your app (OpenStreetMap's tile usage policy)")
        }
        return .remote(template: text, userAgent: userAgent)
    }

    /// `My Park (1890)` → `my-park-1890`, `MagicMountainAttractions` → `magic-mountain-attractions`: a name that can be a URL segment as it is.
    static func urlName(_ text: String) -> String {
        var name = ""
        var previousWasLower = false
        for scalar in text.unicodeScalars {
            if scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "_") {
                let isUpper = CharacterSet.uppercaseLetters.contains(scalar)
                // CamelCase words (MagicMountainAttractions) keep their boundaries.
                if isUpper && previousWasLower && !name.hasSuffix("-") { name += "-" }
                previousWasLower = CharacterSet.lowercaseLetters.contains(scalar) || CharacterSet.decimalDigits.contains(scalar)
                name += String(scalar).lowercased()
            } else {
                previousWasLower = false
                if !name.isEmpty && !name.hasSuffix("-") { name += "-" }
            }
        }
        while name.hasSuffix("-") { name.removeLast() }
        return name.isEmpty ? "map" : String(name.prefix(64))
    }
}
