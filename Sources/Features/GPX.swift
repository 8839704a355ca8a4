import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
public import TileMath

/// Reads GPX 1.1 (https://www.topografix.com/GPX/1/1/): waypoints become Point features,
/// routes LineStrings, tracks MultiLineStrings (one line per segment), with names
/// (`title`), descriptions (`subtitle`), and per-point times and elevations kept in
/// `trackPoints`. Errors name the line and column.
public enum GPX {
    public static func load(_ url: URL) throws(FeatureError) -> [Feature] {
        try parse(try FeatureError.read(url), file: url.path)
    }

    public static func parse(_ data: Data, file: String = "<data>") throws(FeatureError) -> [Feature] {
        let delegate = Delegate(file: file)
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        let ok = parser.parse()
        if let error = delegate.error { throw error }
        // On Linux parse() can return true and still set parserError (an unclosed element).
        guard ok, parser.parserError == nil, delegate.kind == nil else {
            var reason = "malformed XML"
            if let error = parser.parserError as NSError? {
                reason += " (XMLParser error \(error.code))"
            }
            if let open = delegate.kind { reason += ": <\(open)> is never closed" }
            throw FeatureError(file: file, place: "line \(parser.lineNumber), column \(parser.columnNumber)", reason: reason)
        }
        guard delegate.sawRoot else { throw FeatureError(file: file, place: "line 1", reason: "not a GPX file (no <gpx> element)") }
        return delegate.features
    }

    /// ISO 8601 times as GPX writes them, with or without fractional seconds.
    static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }

    final class Delegate: NSObject, XMLParserDelegate {
        let file: String
        var features = [Feature]()
        var error: FeatureError?
        var sawRoot = false

        // The element being read: a waypoint, a route or a track.
        var kind: String?
        var name: String?
        var summary: String?
        var symbol: String?
        var segments: [[Coordinate]] = []
        var times: [Date?] = []
        var elevations: [Double?] = []
        var text = ""
        var inPoint = false

        init(file: String) { self.file = file }

        func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            text = ""
            switch element {
            case "gpx": sawRoot = true
            case "wpt", "rte", "trk":
                if element != "wpt" || kind == nil { start(element) }
                if element == "wpt" { try? point(parser, attributes, newSegment: true) }
            case "trkseg": segments.append([])
            case "rtept", "trkpt": try? point(parser, attributes, newSegment: element == "rtept" && segments.isEmpty)
            default: break
            }
        }

        func start(_ element: String) {
            kind = element
            name = nil; summary = nil; symbol = nil
            segments = []; times = []; elevations = []
        }

        func point(_ parser: XMLParser, _ attributes: [String: String], newSegment: Bool) throws {
            guard let latText = attributes["lat"], let lonText = attributes["lon"], let lat = Double(latText), let lon = Double(lonText) else {
                fail(parser, "a point needs numeric lat and lon attributes")
                return
            }
            let coordinate: Coordinate
            do { coordinate = try Coordinate(latitude: lat, longitude: lon).validated() } catch {
                fail(parser, error.description)
                return
            }
            if newSegment || segments.isEmpty { segments.append([]) }
            segments[segments.count - 1].append(coordinate)
            times.append(nil)
            elevations.append(nil)
            inPoint = true
        }

        func fail(_ parser: XMLParser, _ reason: String) {
            guard error == nil else { return }
            error = FeatureError(file: file, place: "line \(parser.lineNumber), column \(parser.columnNumber)", reason: reason)
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            switch element {
            case "name" where !inPoint || kind == "wpt": name = value
            case "desc" where !inPoint || kind == "wpt": summary = value
            case "sym" where kind == "wpt": symbol = value
            case "ele" where inPoint:
                guard let e = Double(value) else { return fail(parser, "elevation \"\(value)\" is not a number") }
                elevations[elevations.count - 1] = e
            case "time" where inPoint:
                guard let t = GPX.date(value) else { return fail(parser, "time \"\(value)\" is not ISO 8601") }
                times[times.count - 1] = t
            case "rtept", "trkpt": inPoint = false
            case "wpt", "rte", "trk": finish(element)
            default: break
            }
            text = ""
        }

        func finish(_ element: String) {
            inPoint = false
            let lines = segments.filter { !$0.isEmpty }
            let geometry: Geometry?
            switch element {
            case "wpt": geometry = lines.first?.first.map(Geometry.point)
            case "rte": geometry = lines.isEmpty ? nil : .lineString(lines.flatMap { $0 })
            default: geometry = lines.isEmpty ? nil : .multiLineString(lines)
            }
            var feature = Feature(geometry: geometry, properties: ["gpx": .string(element)], title: name, subtitle: summary)
            if let symbol {
                feature.style.markerSymbol = symbol
                feature.properties["sym"] = .string(symbol)
            }
            if element != "wpt" || times.contains(where: { $0 != nil }) || elevations.contains(where: { $0 != nil }) {
                feature.trackPoints = TrackPoints(times: times, elevations: elevations)
            }
            features.append(feature)
            kind = nil
        }
    }
}
