import Foundation
import TileMath

/// Reads the plist layouts iOS map projects ship (the MapKit tutorials' park and game data):
///
/// - an array of dictionaries with `name`, `subtitle`, `type` and `location` `"{lat,lon}"`:
///   annotations (Point features; `type` kept as a property, e.g. ride, food, firstaid);
/// - an array of `"{lat,lon}"` strings: a route, a boundary or points, as `shape` says;
/// - a dictionary with `midCoord`, `overlayTopLeftCoord`, `overlayTopRightCoord`,
///   `overlayBottomLeftCoord` and `boundary`: a park, as its boundary polygon and, when
///   `overlayImage` is given, the image pinned by its corners (the fourth corner completes
///   the parallelogram).
///
/// Only XML plists are read (the form projects keep in source control); errors name the
/// line and column.
public enum PropertyList {
    /// What an array of coordinates is.
    public enum Shape: Sendable { case route, boundary, points }

    public static func load(_ url: URL, shape: Shape = .route, overlayImage: String? = nil) throws(FeatureError) -> [Feature] {
        try parse(try FeatureError.read(url), file: url.path, shape: shape, overlayImage: overlayImage)
    }

    public static func parse(_ data: Data, file: String = "<data>", shape: Shape = .route, overlayImage: String? = nil) throws(FeatureError) -> [Feature] {
        if data.starts(with: Array("bplist".utf8)) {
            throw FeatureError(file: file, place: "line 1", reason: "binary plists are not read; convert it with `plutil -convert xml1`")
        }
        let root = try MarkupElement.parse(data, file: file)
        func fail(_ element: MarkupElement, _ reason: String) -> FeatureError { FeatureError(file: file, place: element.place, reason: reason) }
        guard root.localName == "plist", let top = root.children.first else { throw fail(root, "not a property list (no <plist> with a value)") }

        func coordinate(_ element: MarkupElement) throws(FeatureError) -> Coordinate {
            guard element.localName == "string" else { throw fail(element, "expected a \"{lat,lon}\" string, found <\(element.name)>") }
            let text = element.trimmedText
            let parts = text.trimmingCharacters(in: CharacterSet(charactersIn: "{} ")).split(separator: ",")
            guard text.hasPrefix("{"), text.hasSuffix("}"), parts.count == 2,
                  let lat = Double(parts[0].trimmingCharacters(in: .whitespaces)), let lon = Double(parts[1].trimmingCharacters(in: .whitespaces)) else {
                throw fail(element, "\"\(text)\" is not a \"{latitude,longitude}\" coordinate")
            }
            do { return try Coordinate(latitude: lat, longitude: lon).validated() } catch { throw fail(element, error.description) }
        }

        func dictionary(_ element: MarkupElement) throws(FeatureError) -> [(key: String, value: MarkupElement)] {
            var pairs = [(String, MarkupElement)]()
            var key: String?
            for child in element.children {
                if child.localName == "key" { key = child.trimmedText; continue }
                guard let k = key else { throw fail(child, "a value without a <key>") }
                pairs.append((k, child))
                key = nil
            }
            return pairs
        }

        func coordinates(_ element: MarkupElement) throws(FeatureError) -> [Coordinate] {
            guard element.localName == "array" else { throw fail(element, "expected an <array> of \"{lat,lon}\" strings") }
            var out = [Coordinate]()
            for child in element.children { out.append(try coordinate(child)) }
            return out
        }

        switch top.localName {
        case "array" where top.children.first?.localName == "dict":
            var features = [Feature]()
            for entry in top.children {
                guard entry.localName == "dict" else { throw fail(entry, "expected a <dict> annotation") }
                let pairs = try dictionary(entry)
                guard let location = pairs.first(where: { $0.key == "location" })?.value else {
                    throw fail(entry, "an annotation needs a \"location\" \"{lat,lon}\" string")
                }
                var feature = Feature(geometry: .point(try coordinate(location)))
                for (key, value) in pairs where key != "location" {
                    feature.properties[key] = .string(value.trimmedText)
                }
                feature.title = feature.properties["name"]?.string
                feature.subtitle = feature.properties["subtitle"]?.string
                feature.style.markerSymbol = feature.properties["type"]?.string
                features.append(feature)
            }
            return features
        case "array":
            let points = try coordinates(top)
            switch shape {
            case .route:
                guard points.count >= 2 else { throw fail(top, "a route needs at least 2 coordinates") }
                return [Feature(geometry: .lineString(points))]
            case .boundary:
                guard points.count >= 3 else { throw fail(top, "a boundary needs at least 3 coordinates") }
                return [Feature(geometry: .polygon([points.first == points.last ? points : points + [points[0]]]))]
            case .points:
                return [Feature(geometry: .multiPoint(points))]
            }
        case "dict":
            let pairs = try dictionary(top)
            func value(_ key: String) throws(FeatureError) -> MarkupElement {
                guard let element = pairs.first(where: { $0.key == key })?.value else { throw fail(top, "the park needs \"\(key)\"") }
                return element
            }
            let topLeft = try coordinate(try value("overlayTopLeftCoord"))
            let topRight = try coordinate(try value("overlayTopRightCoord"))
            let bottomLeft = try coordinate(try value("overlayBottomLeftCoord"))
            let middle = try coordinate(try value("midCoord"))
            var boundary = try coordinates(try value("boundary"))
            guard boundary.count >= 3 else { throw fail(try value("boundary"), "a boundary needs at least 3 coordinates") }
            if boundary.first != boundary.last { boundary.append(boundary[0]) }
            var park = Feature(geometry: .polygon([boundary]), properties: ["midCoord": .array([.number(middle.longitude), .number(middle.latitude)])])
            park.title = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
            var features = [park]
            if let overlayImage {
                let bottomRight: Coordinate
                do {
                    bottomRight = try Coordinate(latitude: topRight.latitude + bottomLeft.latitude - topLeft.latitude,
                                                 longitude: topRight.longitude + bottomLeft.longitude - topLeft.longitude).validated()
                } catch {
                    throw fail(try value("overlayBottomLeftCoord"), "the overlay's fourth corner (completing the parallelogram) is off the map: \(error.description)")
                }
                var overlay = Feature(geometry: nil)
                overlay.imageOverlay = ImageOverlay(image: overlayImage, placement: .corners(topLeft: topLeft, topRight: topRight, bottomRight: bottomRight, bottomLeft: bottomLeft))
                features.append(overlay)
            }
            return features
        default:
            throw fail(top, "expected an <array> or a <dict>, found <\(top.name)>")
        }
    }
}
