import Foundation
import TileMath
import TileSources
import MapProjects

/// TileJSON 3.0.0 (https://github.com/mapbox/tilejson-spec/tree/master/3.0.0) for a map or one of its layers.
enum TileJSON {
    static func document(map: ServedMap, layer: ServedLayer?, baseURL: String) -> [String: Any] {
        let project = map.project
        let format = layer?.spec.format ?? map.layers.first { $0.spec.isBase && $0.spec.visible }?.spec.format ?? .png
        let path = layer.map { "/maps/\(project.name)/layers/\($0.spec.id)" } ?? "/maps/\(project.name)"
        let limit = Coordinate.roundedMaxMercatorLatitude
        let bounds = layer?.layer.bounds ?? map.bounds ?? BoundingBox(west: -180, south: -limit, east: 180, north: limit)
        let minZoom = max(project.minZoom, layer?.spec.options.minZoom ?? 0)
        let maxZoom = min(project.maxZoom, layer?.spec.options.maxZoom ?? 22)
        let center = map.center
        var document: [String: Any] = [
            "tilejson": "3.0.0",
            "name": layer?.spec.title ?? project.title,
            "tiles": [baseURL + path + "/{z}/{x}/{y}." + format.fileExtension],
            "scheme": "xyz",
            "minzoom": minZoom,
            "maxzoom": maxZoom,
            "bounds": [bounds.west, bounds.south, bounds.east, bounds.north],
            "center": [center.longitude, center.latitude, Double(max(minZoom, min(maxZoom, map.initialZoom)))],
        ]
        if let attribution = project.attribution { document["attribution"] = attribution }
        // fillzoom: the deepest zoom the sources really have; clients overzoom beyond it.
        let native = (layer.map { [$0] } ?? map.layers).map(\.layer.nativeMaxZoom).max() ?? maxZoom
        if native < maxZoom { document["fillzoom"] = max(minZoom, native) }
        return document
    }
}
