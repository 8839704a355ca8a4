import Foundation
import TileMath
import Colors

/// Reads GeoJSON (RFC 7946): a FeatureCollection, a Feature or a bare geometry, every
/// geometry type, polygons with holes; simplestyle-spec 1.1 properties; and TileKit's own:
///
/// | property | meaning |
/// | --- | --- |
/// | `radius` | on a Point: a circle of that many meters |
/// | `renderer` | a custom renderer's name, e.g. `"shimmer"` |
/// | `stroke-dash` | `[on, off, ...]` in pixels |
/// | `image` + `image-bbox` | an image stretched into `[west, south, east, north]` |
/// | `image` + `image-corners` | an image pinned by `[[lon, lat] × 4]`: top-left, top-right, bottom-right, bottom-left |
/// | `image-opacity` | in [0, 1] |
/// | `geodesic` | `true`: a line follows great circles instead of straight Mercator lines |
/// | `marker-image` | a custom icon file, relative to the GeoJSON file |
/// | `marker-anchor` | `[x, y]`: the icon's point on the coordinate, fractions of its size (default `[0.5, 0.5]`) |
///
/// Errors name the place as a path: `features[3].geometry.coordinates[0][2]`.
public enum GeoJSON {
    public static func load(_ url: URL) throws(FeatureError) -> [Feature] {
        try parse(try FeatureError.read(url), file: url.path)
    }

    public static func parse(_ data: Data, file: String = "<data>") throws(FeatureError) -> [Feature] {
        try Reader(file: file).document(try JSONValue.parse(data, file: file))
    }

    /// Where a document stops being JSON, as line and column (JSONSerialization tells the
    /// character offset; JSONDecoder does not).
    static func syntaxError(_ data: Data, file: String) -> FeatureError {
        var reason = "not valid JSON"
        var place = "JSON"
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let detail = (error as NSError).userInfo["NSDebugDescription"] as? String ?? "\(error)"
            reason = "not valid JSON: " + detail
            if let range = detail.range(of: #"character (\d+)"#, options: .regularExpression),
               let offset = Int(detail[range].dropFirst("character ".count)) {
                let prefix = data.prefix(offset)
                let line = prefix.filter { $0 == 10 }.count + 1
                let column = offset - (prefix.lastIndex(of: 10).map { $0 + 1 } ?? 0) + 1
                place = "line \(line), column \(column)"
            }
        }
        return FeatureError(file: file, place: place, reason: reason)
    }

    /// Walks the document, keeping the file name for errors.
    struct Reader {
        let file: String

        func fail(_ place: String, _ reason: String) -> FeatureError {
            FeatureError(file: file, place: place.isEmpty ? "root" : place, reason: reason)
        }

        func document(_ root: JSONValue) throws(FeatureError) -> [Feature] {
            guard case .object(let object) = root else { throw fail("", "expected a GeoJSON object, found \(root.kind)") }
            let type = try string(object["type"], "type")
            switch type {
            case "FeatureCollection":
                guard case .array(let items) = object["features"] ?? .null else {
                    throw fail("features", "a FeatureCollection needs a \"features\" array")
                }
                var features = [Feature]()
                for (index, item) in items.enumerated() { features.append(try feature(item, "features[\(index)]")) }
                return features
            case "Feature":
                return [try feature(root, "")]
            default:
                return [Feature(geometry: try geometry(root, ""))]
            }
        }

        func feature(_ value: JSONValue, _ path: String) throws(FeatureError) -> Feature {
            guard case .object(let object) = value else { throw fail(path, "expected a Feature object, found \(value.kind)") }
            let dot = path.isEmpty ? "" : path + "."
            guard case .string("Feature") = object["type"] ?? .null else { throw fail(dot + "type", "expected \"Feature\"") }
            var feature = Feature(geometry: nil)
            if let geometryValue = object["geometry"], geometryValue != .null {
                feature.geometry = try geometry(geometryValue, dot + "geometry")
            }
            switch object["id"] ?? .null {
            case .string(let s): feature.id = s
            case .number(let n): feature.id = n.shortDescription
            case .null: break
            default: throw fail(dot + "id", "an id is a string or a number")
            }
            switch object["properties"] ?? .null {
            case .object(let properties):
                feature.properties = properties.mapValues(\.propertyValue)
                try applyProperties(properties, to: &feature, dot + "properties")
            case .null: break
            default: throw fail(dot + "properties", "expected an object or null")
            }
            return feature
        }

        func applyProperties(_ p: [String: JSONValue], to feature: inout Feature, _ path: String) throws(FeatureError) {
            func at(_ key: String) -> String { "\(path).\(key)" }
            feature.style.stroke = try color(p["stroke"], at("stroke"))
            feature.style.fill = try color(p["fill"], at("fill"))
            feature.style.markerColor = try color(p["marker-color"], at("marker-color"))
            feature.style.strokeWidth = try number(p["stroke-width"], at("stroke-width"), 0...1000)
            feature.style.strokeOpacity = try number(p["stroke-opacity"], at("stroke-opacity"), 0...1)
            feature.style.fillOpacity = try number(p["fill-opacity"], at("fill-opacity"), 0...1)
            feature.style.markerSymbol = try optionalString(p["marker-symbol"], at("marker-symbol"))
            if let size = try optionalString(p["marker-size"], at("marker-size")) {
                guard let parsed = Style.MarkerSize(rawValue: size) else { throw fail(at("marker-size"), "\"\(size)\" is not small, medium or large") }
                feature.style.markerSize = parsed
            }
            if let dash = p["stroke-dash"] {
                guard case .array(let items) = dash else { throw fail(at("stroke-dash"), "expected an array of numbers") }
                var lengths = [Double]()
                for (i, item) in items.enumerated() {
                    guard case .number(let n) = item, (0...10_000).contains(n) else {
                        throw fail(at("stroke-dash") + "[\(i)]", "expected a length in pixels in [0, 10000]")
                    }
                    lengths.append(n)
                }
                feature.style.dash = lengths
            }
            feature.style.markerImage = try optionalString(p["marker-image"], at("marker-image"))
            if let anchor = p["marker-anchor"] {
                guard case .array(let v) = anchor, v.count == 2, case .number(let x) = v[0], case .number(let y) = v[1],
                      (0...1).contains(x), (0...1).contains(y) else {
                    throw fail(at("marker-anchor"), "expected [x, y] fractions of the icon in [0, 1], e.g. [0.5, 1] for the bottom middle")
                }
                feature.style.markerAnchor = (x, y)
            }
            feature.title = try optionalString(p["title"], at("title"))
            feature.subtitle = try optionalString(p["description"], at("description"))
            feature.renderer = try optionalString(p["renderer"], at("renderer"))
            if let radius = try number(p["radius"], at("radius"), 0...20_037_508) {
                guard case .point = feature.geometry else { throw fail(at("radius"), "a radius needs a Point geometry") }
                guard radius > 0 else { throw fail(at("radius"), "a radius is a number of meters above 0") }
                feature.radius = radius
            }
            if let image = try optionalString(p["image"], at("image")) {
                let opacity = try number(p["image-opacity"], at("image-opacity"), 0...1) ?? 1
                if let box = p["image-bbox"] {
                    guard case .array(let v) = box, v.count == 4 else { throw fail(at("image-bbox"), "expected [west, south, east, north]") }
                    var n = [Double]()
                    for (i, item) in v.enumerated() {
                        guard case .number(let x) = item else { throw fail(at("image-bbox") + "[\(i)]", "expected a number") }
                        n.append(x)
                    }
                    let bbox: BoundingBox
                    do { bbox = try BoundingBox(west: n[0], south: n[1], east: n[2], north: n[3]).validated() } catch {
                        throw fail(at("image-bbox"), error.description)
                    }
                    // An image cannot be stretched into no area (the renderer would divide by a zero span).
                    guard bbox.west != bbox.east, bbox.south != bbox.north else {
                        throw fail(at("image-bbox"), "the box has no area (west equals east or south equals north)")
                    }
                    feature.imageOverlay = ImageOverlay(image: image, placement: .box(bbox), opacity: opacity)
                } else if let corners = p["image-corners"] {
                    guard case .array(let v) = corners, v.count == 4 else {
                        throw fail(at("image-corners"), "expected four [lon, lat] corners: top-left, top-right, bottom-right, bottom-left")
                    }
                    var c = [Coordinate]()
                    for (i, item) in v.enumerated() { c.append(try position(item, at("image-corners") + "[\(i)]")) }
                    feature.imageOverlay = ImageOverlay(image: image, placement: .corners(topLeft: c[0], topRight: c[1], bottomRight: c[2], bottomLeft: c[3]), opacity: opacity)
                } else {
                    throw fail(at("image"), "an image overlay needs \"image-bbox\" or \"image-corners\"")
                }
            }
        }

        func geometry(_ value: JSONValue, _ path: String) throws(FeatureError) -> Geometry {
            guard case .object(let object) = value else { throw fail(path, "expected a geometry object, found \(value.kind)") }
            let dot = path.isEmpty ? "" : path + "."
            let type = try string(object["type"], dot + "type")
            if type == "GeometryCollection" {
                guard case .array(let items) = object["geometries"] ?? .null else { throw fail(dot + "geometries", "expected an array") }
                var geometries = [Geometry]()
                for (i, item) in items.enumerated() { geometries.append(try geometry(item, dot + "geometries[\(i)]")) }
                return .geometryCollection(geometries)
            }
            let coordinates = object["coordinates"] ?? .null
            let place = dot + "coordinates"
            switch type {
            case "Point": return .point(try position(coordinates, place))
            case "MultiPoint": return .multiPoint(try positions(coordinates, place, minimum: 0))
            case "LineString": return .lineString(try positions(coordinates, place, minimum: 2))
            case "MultiLineString":
                return .multiLineString(try list(coordinates, place) { item, p throws(FeatureError) in try positions(item, p, minimum: 2) })
            case "Polygon": return .polygon(try rings(coordinates, place))
            case "MultiPolygon":
                return .multiPolygon(try list(coordinates, place) { item, p throws(FeatureError) in try rings(item, p) })
            default:
                throw fail(dot + "type", "\"\(type)\" is not a GeoJSON geometry type")
            }
        }

        func rings(_ value: JSONValue, _ path: String) throws(FeatureError) -> [[Coordinate]] {
            try list(value, path) { item, p throws(FeatureError) in
                let ring = try positions(item, p, minimum: 4)
                guard ring.first == ring.last else { throw fail(p, "a linear ring must end where it starts") }
                return ring
            }
        }

        func list<T>(_ value: JSONValue, _ path: String, _ each: (JSONValue, String) throws(FeatureError) -> T) throws(FeatureError) -> [T] {
            guard case .array(let items) = value else { throw fail(path, "expected an array, found \(value.kind)") }
            var out = [T]()
            for (i, item) in items.enumerated() { out.append(try each(item, "\(path)[\(i)]")) }
            return out
        }

        func positions(_ value: JSONValue, _ path: String, minimum: Int) throws(FeatureError) -> [Coordinate] {
            let out = try list(value, path) { item, p throws(FeatureError) in try position(item, p) }
            guard out.count >= minimum else { throw fail(path, "needs at least \(minimum) positions, has \(out.count)") }
            return out
        }

        /// `[lon, lat]` or `[lon, lat, altitude]`, in range.
        func position(_ value: JSONValue, _ path: String) throws(FeatureError) -> Coordinate {
            guard case .array(let items) = value, (2...3).contains(items.count) else {
                throw fail(path, "a position is [longitude, latitude] or [longitude, latitude, altitude]")
            }
            guard case .number(let lon) = items[0], case .number(let lat) = items[1] else { throw fail(path, "positions hold numbers") }
            do {
                return try Coordinate(latitude: lat, longitude: lon).validated()
            } catch {
                throw fail(path, error.description)
            }
        }

        func string(_ value: JSONValue?, _ path: String) throws(FeatureError) -> String {
            guard case .string(let s) = value ?? .null else { throw fail(path, "expected a string") }
            return s
        }

        func optionalString(_ value: JSONValue?, _ path: String) throws(FeatureError) -> String? {
            switch value ?? .null {
            case .null: return nil
            case .string(let s): return s
            case .number(let n): return n.shortDescription
            default: throw fail(path, "expected a string")
            }
        }

        func number(_ value: JSONValue?, _ path: String, _ range: ClosedRange<Double>) throws(FeatureError) -> Double? {
            switch value ?? .null {
            case .null: return nil
            case .number(let n):
                guard range.contains(n) else { throw fail(path, "\(n.shortDescription) is out of range [\(range.lowerBound.shortDescription), \(range.upperBound.shortDescription)]") }
                return n
            case .string(let s):
                guard let n = Double(s), range.contains(n) else { throw fail(path, "\"\(s)\" is not a number in [\(range.lowerBound.shortDescription), \(range.upperBound.shortDescription)]") }
                return n
            default: throw fail(path, "expected a number")
            }
        }

        func color(_ value: JSONValue?, _ path: String) throws(FeatureError) -> Color? {
            guard let text = try optionalString(value, path) else { return nil }
            guard let color = Color(hex: text) else { throw fail(path, "\"\(text)\" is not a colour (#rgb, #rrggbb or a CSS name)") }
            return color
        }
    }
}
