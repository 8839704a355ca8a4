import Foundation
import TileMath
import Colors

extension GeoJSON {
    /// Features as a GeoJSON FeatureCollection (RFC 7946), with their style written back as
    /// simplestyle-spec properties and TileKit's own (`radius`, `renderer`, `image`...), so a
    /// web viewer draws what the tiles draw and shows the same titles. Features loaded from
    /// GPX, KML or plist come out the same way. Keys sorted; a collection that cannot be
    /// written (a number that is not finite) comes out empty. `formatting` adds to that
    /// (`.prettyPrinted` for a file people edit).
    public static func encode(_ features: [Feature], formatting: JSONEncoder.OutputFormatting = []) -> Data {
        (try? FeatureCollectionJSON(features: features.map(FeatureJSON.init)).sortedJSON(formatting))
            ?? Data(#"{"type":"FeatureCollection","features":[]}"#.utf8)
    }

    struct FeatureCollectionJSON: Encodable {
        var type = "FeatureCollection"
        var features: [FeatureJSON]
    }

    /// One feature: its properties with its style and TileKit's own written back; a feature
    /// without geometry has `"geometry": null`, as RFC 7946 says.
    struct FeatureJSON: Encodable {
        var id: String?
        var properties: [String: PropertyValue]
        var geometry: Geometry?

        enum CodingKeys: String, CodingKey { case type, id, properties, geometry }

        init(_ feature: Feature) {
            id = feature.id
            geometry = feature.geometry
            var properties = feature.properties
            let style = feature.style
            func put(_ key: String, _ value: PropertyValue?) { if let value { properties[key] = value } }
            func put(_ key: String, _ text: String?) { put(key, text.map(PropertyValue.string)) }
            func put(_ key: String, _ number: Double?) { put(key, number.map(PropertyValue.number)) }
            put("title", feature.title)
            put("description", feature.subtitle)
            put("stroke", style.stroke.map(GeoJSON.hex))
            put("stroke-width", style.strokeWidth)
            put("stroke-opacity", style.strokeOpacity ?? style.stroke.flatMap { $0.alpha < 1 ? $0.alpha : nil })
            put("fill", style.fill.map(GeoJSON.hex))
            put("fill-opacity", style.fillOpacity ?? style.fill.flatMap { $0.alpha < 1 ? $0.alpha : nil })
            put("marker-color", style.markerColor.map(GeoJSON.hex))
            put("marker-symbol", style.markerSymbol)
            put("marker-size", style.markerSize?.rawValue)
            put("stroke-dash", style.dash.map { .array($0.map(PropertyValue.number)) })
            put("marker-image", style.markerImage)
            put("radius", feature.radius)
            put("renderer", feature.renderer)
            if let overlay = feature.imageOverlay {
                put("image", overlay.image)
                put("image-opacity", overlay.opacity)
                switch overlay.placement {
                case .box(let b): put("image-bbox", .array([b.west, b.south, b.east, b.north].map(PropertyValue.number)))
                case .corners(let a, let b, let c, let d): put("image-corners", .array([a, b, c, d].map(GeoJSON.position)))
                }
            }
            self.properties = properties
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("Feature", forKey: .type)
            try container.encodeIfPresent(id, forKey: .id)
            try container.encode(properties, forKey: .properties)
            try container.encode(geometry, forKey: .geometry)  // null when absent
        }
    }

    /// `[longitude, latitude]`, GeoJSON's order.
    static func position(_ c: Coordinate) -> PropertyValue { .array([.number(c.longitude), .number(c.latitude)]) }

    static func hex(_ color: Color) -> String { String(color.hexString.prefix(7)) }
}

extension Geometry: Encodable {
    enum CodingKeys: String, CodingKey { case type, coordinates, geometries }

    /// RFC 7946 geometry: `{"type": "LineString", "coordinates": [[lon, lat], ...]}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        func positions(_ cs: [Coordinate]) -> [[Double]] { cs.map { [$0.longitude, $0.latitude] } }
        switch self {
        case .point(let c):
            try container.encode("Point", forKey: .type)
            try container.encode([c.longitude, c.latitude], forKey: .coordinates)
        case .multiPoint(let cs):
            try container.encode("MultiPoint", forKey: .type)
            try container.encode(positions(cs), forKey: .coordinates)
        case .lineString(let cs):
            try container.encode("LineString", forKey: .type)
            try container.encode(positions(cs), forKey: .coordinates)
        case .multiLineString(let ls):
            try container.encode("MultiLineString", forKey: .type)
            try container.encode(ls.map(positions), forKey: .coordinates)
        case .polygon(let rs):
            try container.encode("Polygon", forKey: .type)
            try container.encode(rs.map(positions), forKey: .coordinates)
        case .multiPolygon(let ps):
            try container.encode("MultiPolygon", forKey: .type)
            try container.encode(ps.map { $0.map(positions) }, forKey: .coordinates)
        case .geometryCollection(let gs):
            try container.encode("GeometryCollection", forKey: .type)
            try container.encode(gs, forKey: .geometries)
        }
    }
}

extension PropertyValue: Encodable {
    /// The JSON value it was read from.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let s): try container.encode(s)
        case .number(let n): try container.encode(n)
        case .bool(let b): try container.encode(b)
        case .null: try container.encodeNil()
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}
