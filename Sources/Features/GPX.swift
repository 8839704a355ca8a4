import Foundation
import TileMath

/// Reads GPX 1.1 (https://www.topografix.com/GPX/1/1/): waypoints become Point features,
/// routes LineStrings, tracks MultiLineStrings (one line per segment), with names
/// (`title`), descriptions (`subtitle`), symbols, and per-point times and elevations kept in
/// `trackPoints`. Errors name the line and column.
public enum GPX {
    public static func load(_ url: URL) throws(FeatureError) -> [Feature] {
        try parse(try FeatureError.read(url), file: url.path)
    }

    public static func parse(_ data: Data, file: String = "<data>") throws(FeatureError) -> [Feature] {
        let root = try MarkupElement.parse(data, file: file, root: "gpx", format: "GPX")
        func fail(_ element: MarkupElement, _ reason: String) -> FeatureError { FeatureError(file: file, place: element.place, reason: reason) }

        /// A point element's coordinate, time and elevation.
        func point(_ element: MarkupElement) throws(FeatureError) -> (Coordinate, Date?, Double?) {
            guard let lat = element.attributes["lat"].flatMap(Double.init), let lon = element.attributes["lon"].flatMap(Double.init) else {
                throw fail(element, "a point needs numeric lat and lon attributes")
            }
            let coordinate: Coordinate
            do { coordinate = try Coordinate(latitude: lat, longitude: lon).validated() } catch { throw fail(element, error.description) }
            var time: Date?
            if let t = element.child("time") {
                guard let parsed = date(t.trimmedText) else { throw fail(t, "time \"\(t.trimmedText)\" is not ISO 8601") }
                time = parsed
            }
            var elevation: Double?
            if let e = element.child("ele") {
                guard let parsed = Double(e.trimmedText), parsed.isFinite else { throw fail(e, "elevation \"\(e.trimmedText)\" is not a number") }
                elevation = parsed
            }
            return (coordinate, time, elevation)
        }

        func feature(_ element: MarkupElement, _ geometry: Geometry?, _ points: [(Coordinate, Date?, Double?)]) -> Feature {
            var feature = Feature(geometry: geometry, properties: ["gpx": .string(element.localName)],
                                  title: element.child("name")?.trimmedText, subtitle: element.child("desc")?.trimmedText)
            if let symbol = element.child("sym")?.trimmedText {
                feature.style.markerSymbol = symbol
                feature.properties["sym"] = .string(symbol)
            }
            if points.contains(where: { $0.1 != nil || $0.2 != nil }) || element.localName != "wpt" {
                feature.trackPoints = TrackPoints(times: points.map(\.1), elevations: points.map(\.2))
            }
            return feature
        }

        var features = [Feature]()
        for child in root.children {
            switch child.localName {
            case "wpt":
                let p = try point(child)
                features.append(feature(child, .point(p.0), [p]))
            case "rte":
                var points = [(Coordinate, Date?, Double?)]()
                for rtept in child.children("rtept") { points.append(try point(rtept)) }
                features.append(feature(child, points.isEmpty ? nil : .lineString(points.map(\.0)), points))
            case "trk":
                var segments = [[Coordinate]]()
                var points = [(Coordinate, Date?, Double?)]()
                for segment in child.children("trkseg") {
                    var line = [Coordinate]()
                    for trkpt in segment.children("trkpt") {
                        let p = try point(trkpt)
                        line.append(p.0)
                        points.append(p)
                    }
                    if !line.isEmpty { segments.append(line) }
                }
                features.append(feature(child, segments.isEmpty ? nil : .multiLineString(segments), points))
            default:
                continue
            }
        }
        return features
    }

    /// A `<wpt>` of a GPX file as Xcode's location simulation reads it: a stop on a route.
    public struct Waypoint: Hashable, Sendable {
        public let coordinate: Coordinate
        /// Its `<time>`, nil when it has none.
        public let time: Date?
        /// Where it is: `wpt[index] (line L, column C)`, the index counting waypoints from 0.
        public let place: String
    }

    /// The `<wpt>` elements of a GPX file in document order, the way Xcode plays a location
    /// file (its "Game Test" route is such a file). Errors (a waypoint without numeric lat
    /// and lon, a bad time) name the line and column.
    public static func waypoints(_ url: URL) throws(FeatureError) -> [Waypoint] {
        try waypoints(try FeatureError.read(url), file: url.path)
    }

    public static func waypoints(_ data: Data, file: String = "<data>") throws(FeatureError) -> [Waypoint] {
        let root = try MarkupElement.parse(data, file: file, root: "gpx", format: "GPX")
        var waypoints = [Waypoint]()
        for element in root.children("wpt") {
            let place = "wpt[\(waypoints.count)] (\(element.place))"
            guard let lat = element.attributes["lat"].flatMap(Double.init), let lon = element.attributes["lon"].flatMap(Double.init) else {
                throw FeatureError(file: file, place: place, reason: "a waypoint needs numeric lat and lon attributes")
            }
            let coordinate: Coordinate
            do { coordinate = try Coordinate(latitude: lat, longitude: lon).validated() } catch {
                throw FeatureError(file: file, place: place, reason: error.description)
            }
            var time: Date?
            if let t = element.child("time") {
                guard let parsed = date(t.trimmedText) else { throw FeatureError(file: file, place: place, reason: "time \"\(t.trimmedText)\" is not ISO 8601") }
                time = parsed
            }
            waypoints.append(Waypoint(coordinate: coordinate, time: time, place: place))
        }
        return waypoints
    }

    /// ISO 8601 times as GPX writes them, with or without fractional seconds. A time
    /// without a zone (xsd:dateTime allows it) is UTC, as GPX says all its times are.
    /// Foundation's `Date.ISO8601FormatStyle` is native Swift; `ISO8601DateFormatter` goes
    /// through ICU at about 150 µs a time, most of the time of reading a long track.
    static func date(_ text: String) -> Date? {
        let value = hasZone(text) ? text : text + "Z"
        return (try? wholeSeconds.parse(value)) ?? (try? fractionalSeconds.parse(value))
    }

    private static let wholeSeconds = Date.ISO8601FormatStyle()
    private static let fractionalSeconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Ends with `Z`, `±hh:mm` or `±hhmm`.
    static func hasZone(_ text: String) -> Bool {
        if text.hasSuffix("Z") { return true }
        let tail = Array(text.utf8.suffix(6))
        func isOffset(_ bytes: ArraySlice<UInt8>) -> Bool {
            let digits = bytes.dropFirst().filter { $0 != UInt8(ascii: ":") }
            return (bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-")) && digits.count == 4
                && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        return (tail.count == 6 && tail[3] == UInt8(ascii: ":") && isOffset(tail[...])) || isOffset(tail.suffix(5))
    }
}
