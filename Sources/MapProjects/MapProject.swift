import Foundation
public import Canvas
public import TileMath
public import TileSources
public import Features

/// One map as `map.json` describes it: where it is, how far one may zoom and pan (MapKit's
/// camera zoom range and boundary), and its layers bottom to top. Paths in the file are
/// relative to the file's folder; `MapProjectReader` resolves them.
public struct MapProject: Sendable {
    /// The map's name in URLs (`/maps/{name}/`): the file's name when the file gives none.
    public var name: String
    public var title: String
    public var attribution: String?
    public var center: Coordinate?
    public var zoom: Int?
    public var minZoom: Int = 0
    public var maxZoom: Int = 22
    /// The camera boundary: the viewer cannot pan out of it, and no tile outside is served.
    public var bounds: BoundingBox?
    /// The HTTP status for "no tile here": 204 (the default, as martin answers; browsers
    /// log no error for it) or 404. Leaflet shows nothing either way.
    public var missingTileStatus: Int = 204
    /// `Access-Control-Allow-Origin`; nil sends none.
    public var cors: String? = "*"
    public var layers: [LayerSpec]
    /// The location game played on this map, if any.
    public var game: GameSpec?
    /// The folder relative paths start from.
    public var folder: URL

    public init(name: String, title: String? = nil, layers: [LayerSpec], folder: URL) {
        self.name = name
        self.title = title ?? name
        self.layers = layers
        self.folder = folder
    }
}

/// One layer of a map: where its tiles or features come from and how it is shown.
public struct LayerSpec: Sendable {
    public enum Source: Sendable {
        /// A folder, .mbtiles or .pmtiles (an absolute path).
        case store(path: String, scheme: TileScheme?)
        /// A URL template, with the MBTiles file its tiles are cached in (nil: not cached).
        case remote(template: URLTemplate, cache: String?, userAgent: String)
        /// Tiles drawn by code: `debug-grid`.
        case generated(String)
        /// GeoJSON, GPX, KML or plist files (absolute paths), drawn into tiles.
        case features(files: [String])
    }

    /// The layer's name in URLs (`/maps/{map}/layers/{id}/...`).
    public var id: String
    public var title: String
    public var source: Source
    /// Base layers are alternatives (radio buttons); overlays stack (checkboxes).
    public var isBase: Bool
    /// Shown when the viewer opens, and part of the composed map.
    public var visible: Bool = true
    /// False (map.json `"draw": false`) for a features layer drawn by another map: its labels
    /// and icons take their room in this map's label placement, but it draws nothing. Tiles
    /// pre-rendered from this map then leave room for the live layer that goes over them.
    public var draws: Bool = true
    public var options = LayerOptions()
    /// `Cache-Control: max-age` for its tiles, in seconds.
    public var maxAgeSeconds: Int = 3600
    /// The encoding of drawn tiles (feature layers, generated tiles).
    public var format: ImageFormat = .png
    /// For a feature layer's plist park: the image its overlay corners pin (relative to the plist).
    public var overlayImage: String?
    /// Edge smoothing of a feature layer's tiles.
    public var antialias: Canvas.Antialias = .best
    /// A features layer's label priority (map.json `label-priority`), replacing its labels'
    /// kind priorities (points of interest 40, stations 30, landmarks 20, paths 10).
    public var labelPriority: Int?

    public init(id: String, title: String? = nil, source: Source, isBase: Bool) {
        self.id = id
        self.title = title ?? id
        self.source = source
        self.isBase = isBase
    }

    public var isFeatureLayer: Bool {
        if case .features = source { return true }
        return false
    }
}

/// A problem in a map project, with its JSON path as the place (empty for the document's
/// root): `layers[2].source: no such file "tiles/parchment.png"`. The same shape as every
/// "this file, at this place, is wrong because" error (`FeatureError`); `isIO` marks a file
/// that could not be read or reached (missing, a server down) rather than read and found wrong.
public typealias ProjectProblem = FeatureError

/// Every problem found in a project, not just the first.
public struct ProjectProblems: Error, Sendable, CustomStringConvertible {
    public var problems: [ProjectProblem]

    public init(problems: [ProjectProblem]) {
        self.problems = problems
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// `"game"` in map.json: the points of interest and the routes the server can play.
public struct GameSpec: Sendable {
    /// Absolute path of the POI file (GeoJSON or plist).
    public var pois: String
    /// Route name → absolute path of its GPX file.
    public var routes: [String: String]
    public var speed: Double = 1.4
    /// Seconds between positions (`"tick"`).
    public var tickSeconds: Double = 1
    public var timeWarp: Double = 1
    /// A route the viewer starts playing when it opens.
    public var autoplay: String?

    public init(pois: String, routes: [String: String]) {
        self.pois = pois
        self.routes = routes
    }
}
