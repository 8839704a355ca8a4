import TileSources
import Features
import Canvas
import Game

/// A map project as `MapProjectReader` checked it, with what the check opened: its tile
/// stores, feature files (with their images), points of interest and routes. `ServedMap` serves from these, so reading a map
/// opens each of them once (a route is read once per map, not once per `/play`).
public struct OpenedProject: Sendable {
    public let project: MapProject
    /// The file it was read from (`map.json`, or a store served as a one-layer map); a
    /// project built in code is named by its name. Problems found opening it name this file.
    public let file: String
    /// Tile stores by resolved path (or URL).
    let stores: [String: any TileSource]
    /// The game's points of interest, when the map has a game.
    let pois: [PointOfInterest]?
    /// The game's routes by name, at its speed and a time warp of 1.
    let routes: [String: RoutePlayback]
    /// Feature files as a features layer loads them, by `featureKey`.
    let featureFiles: [String: (features: [Feature], images: [String: RGBAImage])]

    /// A feature file loads differently with another `overlay-image`: both are the key.
    static func featureKey(_ file: String, overlayImage: String?) -> String {
        (overlayImage ?? "") + "\u{0}" + file
    }

    /// A project that was not read from a file (built in code): everything opens when served.
    public init(_ project: MapProject) {
        self.init(project, file: project.name, stores: [:], pois: nil, routes: [:], featureFiles: [:])
    }

    init(_ project: MapProject, file: String, stores: [String: any TileSource], pois: [PointOfInterest]?, routes: [String: RoutePlayback],
         featureFiles: [String: (features: [Feature], images: [String: RGBAImage])]) {
        self.project = project
        self.file = file
        self.stores = stores
        self.pois = pois
        self.routes = routes
        self.featureFiles = featureFiles
    }
}
