import Foundation
import TileMath
import Colors

/// Reads KML 2.2 (https://developers.google.com/kml/documentation/kmlreference): Placemarks
/// with Point, LineString, Polygon (inner rings are holes) and MultiGeometry; their Style or
/// StyleMap (the `normal` pair) by `styleUrl` or inline: LineStyle colour and width,
/// PolyStyle colour; and GroundOverlays (an image in a LatLonBox). KML colours are
/// `aabbggrr`. Errors name the line and column.
public enum KML {
    public static func load(_ url: URL) throws(FeatureError) -> [Feature] {
        try parse(try FeatureError.read(url), file: url.path)
    }

    public static func parse(_ data: Data, file: String = "<data>") throws(FeatureError) -> [Feature] {
        let root = try MarkupElement.parse(data, file: file, root: "kml", format: "KML")
        return try Reader(file: file, root: root).features()
    }

    struct Reader {
        let file: String
        let root: MarkupElement

        func fail(_ element: MarkupElement, _ reason: String) -> FeatureError {
            FeatureError(file: file, place: element.place, reason: reason)
        }

        func features() throws(FeatureError) -> [Feature] {
            var styles = [String: Style]()
            for style in root.descendants("Style") {
                if let id = style.attributes["id"] { styles[id] = try self.style(style) }
            }
            // A StyleMap stands for its "normal" style.
            for map in root.descendants("StyleMap") {
                guard let id = map.attributes["id"] else { continue }
                let normal = map.children("Pair").first { $0.child("key")?.trimmedText == "normal" }
                if let url = normal?.child("styleUrl")?.trimmedText, let style = styles[String(url.drop(while: { $0 == "#" }))] {
                    styles[id] = style
                }
            }
            var features = [Feature]()
            for placemark in root.descendants("Placemark") {
                var feature = Feature(geometry: try geometry(of: placemark))
                feature.title = placemark.child("name")?.trimmedText
                feature.subtitle = placemark.child("description")?.trimmedText
                if let styleUrl = placemark.child("styleUrl") {
                    let id = String(styleUrl.trimmedText.drop(while: { $0 == "#" }))
                    guard let style = styles[id] else { throw fail(styleUrl, "no Style or StyleMap with id \"\(id)\"") }
                    feature.style = style
                }
                if let inline = placemark.child("Style") { feature.style = try style(inline) }
                features.append(feature)
            }
            for overlay in root.descendants("GroundOverlay") {
                guard let href = overlay.child("Icon")?.child("href")?.trimmedText, !href.isEmpty else {
                    throw fail(overlay, "a GroundOverlay needs <Icon><href>")
                }
                guard let box = overlay.child("LatLonBox") else { throw fail(overlay, "a GroundOverlay needs a <LatLonBox>") }
                func edge(_ name: String) throws(FeatureError) -> Double {
                    guard let element = box.child(name), let value = Double(element.trimmedText) else {
                        throw fail(box, "<LatLonBox> needs a numeric <\(name)>")
                    }
                    return value
                }
                let bounds: BoundingBox
                do {
                    bounds = try BoundingBox(west: try edge("west"), south: try edge("south"), east: try edge("east"), north: try edge("north")).validated()
                } catch let error as FeatureError {
                    throw error
                } catch {
                    throw fail(box, "\(error)")
                }
                // An image cannot be stretched into no area (the renderer would divide by a zero span).
                guard bounds.west != bounds.east, bounds.south != bounds.north else {
                    throw fail(box, "<LatLonBox> has no area (west equals east or south equals north)")
                }
                var opacity = 1.0
                if let color = overlay.child("color") { opacity = try self.color(color).alpha }
                var feature = Feature(geometry: nil)
                feature.title = overlay.child("name")?.trimmedText
                feature.imageOverlay = ImageOverlay(image: href, placement: .box(bounds), opacity: opacity)
                features.append(feature)
            }
            return features
        }

        func geometry(of element: MarkupElement) throws(FeatureError) -> Geometry? {
            var parts = [Geometry]()
            for child in element.children {
                switch child.localName {
                case "Point":
                    guard let c = child.child("coordinates") else { throw fail(child, "a Point needs <coordinates>") }
                    let points = try coordinates(c)
                    guard points.count == 1 else { throw fail(c, "a Point has exactly one coordinate, found \(points.count)") }
                    parts.append(.point(points[0]))
                case "LineString":
                    guard let c = child.child("coordinates") else { throw fail(child, "a LineString needs <coordinates>") }
                    let points = try coordinates(c)
                    guard points.count >= 2 else { throw fail(c, "a LineString needs at least 2 coordinates") }
                    parts.append(.lineString(points))
                case "Polygon":
                    guard let outer = child.child("outerBoundaryIs")?.child("LinearRing")?.child("coordinates") else {
                        throw fail(child, "a Polygon needs <outerBoundaryIs><LinearRing><coordinates>")
                    }
                    var rings = [try ring(outer)]
                    for inner in child.children("innerBoundaryIs") {
                        guard let c = inner.child("LinearRing")?.child("coordinates") else { throw fail(inner, "an inner boundary needs <LinearRing><coordinates>") }
                        rings.append(try ring(c))
                    }
                    parts.append(.polygon(rings))
                case "MultiGeometry":
                    if let nested = try geometry(of: child) { parts.append(nested) }
                default:
                    continue
                }
            }
            if parts.isEmpty { return nil }
            return parts.count == 1 ? parts[0] : .geometryCollection(parts)
        }

        func ring(_ element: MarkupElement) throws(FeatureError) -> [Coordinate] {
            var points = try coordinates(element)
            guard points.count >= 3 else { throw fail(element, "a LinearRing needs at least 3 coordinates") }
            if points.first != points.last { points.append(points[0]) }
            return points
        }

        /// `lon,lat[,alt]` tuples separated by white space.
        func coordinates(_ element: MarkupElement) throws(FeatureError) -> [Coordinate] {
            var out = [Coordinate]()
            for tuple in element.trimmedText.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }) {
                let values = tuple.split(separator: ",").map { Double($0) }
                guard (2...3).contains(values.count), let lon = values[0], let lat = values[1] else {
                    throw fail(element, "\"\(tuple)\" is not longitude,latitude[,altitude]")
                }
                do { out.append(try Coordinate(latitude: lat, longitude: lon).validated()) } catch { throw fail(element, error.description) }
            }
            return out
        }

        func style(_ element: MarkupElement) throws(FeatureError) -> Style {
            var style = Style()
            if let line = element.child("LineStyle") {
                if let c = line.child("color") {
                    let color = try self.color(c)
                    style.stroke = color.withAlpha(1)
                    style.strokeOpacity = color.alpha
                }
                if let w = line.child("width") {
                    // The range GeoJSON's stroke-width has; NaN and infinity fail it.
                    guard let width = Double(w.trimmedText), (0...1000).contains(width) else {
                        throw fail(w, "width \"\(w.trimmedText)\" is not a number of pixels in [0, 1000]")
                    }
                    style.strokeWidth = width
                }
            }
            if let poly = element.child("PolyStyle") {
                if let c = poly.child("color") {
                    let color = try self.color(c)
                    style.fill = color.withAlpha(1)
                    style.fillOpacity = color.alpha
                }
                if poly.child("fill")?.trimmedText == "0" { style.fillOpacity = 0 }
            }
            if let icon = element.child("IconStyle"), let c = icon.child("color") {
                style.markerColor = try self.color(c)
            }
            return style
        }

        /// KML's `aabbggrr` hexadecimal colour.
        func color(_ element: MarkupElement) throws(FeatureError) -> Color {
            let text = element.trimmedText.lowercased()
            guard text.count == 8, let value = UInt32(text, radix: 16) else { throw fail(element, "colour \"\(element.trimmedText)\" is not aabbggrr hexadecimal") }
            return Color(red8: UInt8(value & 0xFF), green8: UInt8(value >> 8 & 0xFF), blue8: UInt8(value >> 16 & 0xFF), alpha8: UInt8(value >> 24))
        }
    }
}
