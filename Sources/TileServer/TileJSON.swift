import Foundation
import TileMath
import TileSources
import MapProjects

/// TileJSON 3.0.0 (https://github.com/mapbox/tilejson-spec/tree/master/3.0.0) for a map or one of its layers.
/// Encoded with sorted keys; optional members are left out when nil, as the spec allows.
struct TileJSON: Encodable, Equatable {
    var tilejson = "3.0.0"
    var name: String
    var tiles: [String]
    var scheme = "xyz"
    var minzoom: Int
    var maxzoom: Int
    /// west, south, east, north in degrees.
    var bounds: [Double]
    /// longitude, latitude, zoom.
    var center: [Double]
    var attribution: String?
    /// The deepest zoom the sources really have; clients overzoom beyond it.
    var fillzoom: Int?

    init(map: ServedMap, layer: ServedLayer?, baseURL: String) {
        let project = map.project
        let format = layer?.spec.format ?? map.layers.first { $0.spec.isBase && $0.spec.visible }?.spec.format ?? .png
        let path = layer.map { "/maps/\(project.name)/layers/\($0.spec.id)" } ?? "/maps/\(project.name)"
        let limit = Coordinate.roundedMaxMercatorLatitude
        let box = layer?.layer.bounds ?? map.bounds ?? BoundingBox(west: -180, south: -limit, east: 180, north: limit)
        let minZoom = max(project.minZoom, layer?.spec.options.minZoom ?? 0)
        let maxZoom = min(project.maxZoom, layer?.spec.options.maxZoom ?? 22)
        name = layer?.spec.title ?? project.title
        tiles = [baseURL + path + "/{z}/{x}/{y}." + format.fileExtension]
        minzoom = minZoom
        maxzoom = maxZoom
        bounds = [box.west, box.south, box.east, box.north]
        center = [map.center.longitude, map.center.latitude, Double(max(minZoom, min(maxZoom, map.initialZoom)))]
        attribution = project.attribution
        let native = (layer.map { [$0] } ?? map.layers).map(\.layer.nativeMaxZoom).max() ?? maxZoom
        fillzoom = native < maxZoom ? max(minZoom, native) : nil
    }
}
