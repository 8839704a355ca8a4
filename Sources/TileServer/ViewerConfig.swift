import Foundation
import TileMath
import TileSources
import MapProjects

/// The JSON block the viewer page hands to viewer.js (sorted keys, unescaped slashes; nil
/// members are left out). Bounds are Leaflet's `[[south, west], [north, east]]`.
struct ViewerConfig: Encodable {
    struct Layer: Encodable {
        var id: String
        var title: String
        var base: Bool
        var visible: Bool
        var opacity: Double
        var zIndex: Int
        var minZoom: Int
        var maxZoom: Int
        var tiles: String
        var features: String?
        var bounds: [[Double]]?
    }

    struct Game: Encodable {
        var routes: [String]
        var play: String
        var warps: String
        var autoplay: String?
    }

    var name: String
    var title: String
    /// latitude, longitude.
    var center: [Double]
    var zoom: Int
    var minZoom: Int
    var maxZoom: Int
    var layers: [Layer]
    var composed: String
    var tilejson: String
    var bounds: [[Double]]?
    /// The debug grid asks the base layer how each tile was made (native, overzoomed, fallback).
    var debugTiles: String?
    /// The debug grid also outlines each label the map draws in a tile (its text and pixel
    /// box), from the .json twin of a static image of exactly that tile.
    var debugLabels: String?
    var attribution: String?
    var game: Game?

    init(map: ServedMap, tileJSONURL: String) {
        let project = map.project
        let name = project.name
        func leaflet(_ b: BoundingBox) -> [[Double]] { [[b.south, b.west], [b.north, b.east]] }
        layers = map.layers.map { served in
            let spec = served.spec
            return Layer(id: spec.id, title: spec.title, base: spec.isBase, visible: spec.visible, opacity: spec.options.opacity,
                         zIndex: spec.options.zIndex, minZoom: max(project.minZoom, spec.options.minZoom),
                         maxZoom: min(project.maxZoom, spec.options.maxZoom),
                         tiles: "/maps/\(name)/layers/\(spec.id)/{z}/{x}/{y}{r}.\(spec.format.fileExtension)",
                         features: spec.isFeatureLayer ? "/maps/\(name)/features/\(spec.id).geojson" : nil,
                         bounds: served.layer.bounds.map(leaflet))
        }
        self.name = name
        title = project.title
        center = [map.center.latitude, map.center.longitude]
        zoom = map.initialZoom
        minZoom = project.minZoom
        maxZoom = project.maxZoom
        composed = "/maps/\(name)/{z}/{x}/{y}.png"
        tilejson = tileJSONURL
        bounds = map.bounds.map(leaflet)
        if let base = map.layers.first(where: { $0.spec.isBase && $0.spec.visible }) {
            debugTiles = "/maps/\(name)/layers/\(base.spec.id)/{z}/{x}/{y}.\(base.spec.format.fileExtension)"
        }
        if map.layers.contains(where: { $0.spec.isFeatureLayer && $0.spec.visible }) {
            debugLabels = "/maps/\(name)/static/{lon},{lat},{z}/256x256.json"
        }
        attribution = project.attribution
        game = project.game.map {
            Game(routes: $0.routes.keys.sorted(), play: "/maps/\(name)/play", warps: "/maps/\(name)/warps/", autoplay: $0.autoplay)
        }
    }

    var json: String {
        sortedJSONText() ?? "{}"
    }
}
