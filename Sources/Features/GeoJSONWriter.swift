import Foundation
import TileMath
import Colors

extension GeoJSON {
    /// Features as a GeoJSON FeatureCollection (RFC 7946), with their style written back as
    /// simplestyle-spec properties and TileKit's own (`radius`, `renderer`, `image`...), so a
    /// web viewer draws what the tiles draw and shows the same titles. Features loaded from
    /// GPX, KML or plist come out the same way.
    public static func encode(_ features: [Feature]) -> Data {
        let collection: [String: Any] = ["type": "FeatureCollection", "features": features.map(object)]
        return (try? JSONSerialization.data(withJSONObject: collection, options: [.sortedKeys])) ?? Data(#"{"type":"FeatureCollection","features":[]}"#.utf8)
    }

    static func object(_ feature: Feature) -> [String: Any] {
        var properties = [String: Any]()
        for (key, value) in feature.properties { properties[key] = any(value) }
        let style = feature.style
        func put(_ key: String, _ value: Any?) { if let value { properties[key] = value } }
        put("title", feature.title)
        put("description", feature.subtitle)
        put("stroke", style.stroke.map { hex($0) })
        put("stroke-width", style.strokeWidth)
        put("stroke-opacity", style.strokeOpacity ?? style.stroke.flatMap { $0.alpha < 1 ? $0.alpha : nil })
        put("fill", style.fill.map { hex($0) })
        put("fill-opacity", style.fillOpacity ?? style.fill.flatMap { $0.alpha < 1 ? $0.alpha : nil })
        put("marker-color", style.markerColor.map { hex($0) })
        put("marker-symbol", style.markerSymbol)
        put("marker-size", style.markerSize?.rawValue)
        put("stroke-dash", style.dash)
        put("marker-image", style.markerImage)
        put("radius", feature.radius)
        put("renderer", feature.renderer)
        if let overlay = feature.imageOverlay {
            properties["image"] = overlay.image
            properties["image-opacity"] = overlay.opacity
            switch overlay.placement {
            case .box(let b): properties["image-bbox"] = [b.west, b.south, b.east, b.north]
            case .corners(let a, let b, let c, let d): properties["image-corners"] = [a, b, c, d].map(position)
            }
        }
        var object: [String: Any] = ["type": "Feature", "properties": properties, "geometry": feature.geometry.map(geometry) ?? NSNull()]
        if let id = feature.id { object["id"] = id }
        return object
    }

    static func geometry(_ g: Geometry) -> [String: Any] {
        switch g {
        case .point(let c): return ["type": "Point", "coordinates": position(c)]
        case .multiPoint(let cs): return ["type": "MultiPoint", "coordinates": cs.map(position)]
        case .lineString(let cs): return ["type": "LineString", "coordinates": cs.map(position)]
        case .multiLineString(let ls): return ["type": "MultiLineString", "coordinates": ls.map { $0.map(position) }]
        case .polygon(let rs): return ["type": "Polygon", "coordinates": rs.map { $0.map(position) }]
        case .multiPolygon(let ps): return ["type": "MultiPolygon", "coordinates": ps.map { $0.map { $0.map(position) } }]
        case .geometryCollection(let gs): return ["type": "GeometryCollection", "geometries": gs.map(geometry)]
        }
    }

    static func position(_ c: Coordinate) -> [Double] { [c.longitude, c.latitude] }

    static func hex(_ color: Color) -> String { String(color.hexString.prefix(7)) }

    static func any(_ value: PropertyValue) -> Any {
        switch value {
        case .string(let s): return s
        case .number(let n): return n
        case .bool(let b): return b
        case .null: return NSNull()
        case .array(let a): return a.map(any)
        case .object(let o): return o.mapValues(any)
        }
    }
}
