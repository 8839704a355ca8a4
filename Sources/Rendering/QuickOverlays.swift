import Foundation
public import Features
import Canvas
import TileMath

/// Markers and paths written inline, as `tilekit snapshot --marker/--path` and the static
/// image endpoint's `markers=`/`path=` take them.
public enum QuickOverlays {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// `LON,LAT[,COLOR][,SYMBOL]`: a colour is `#rrggbb` or a CSS name; anything else is a
    /// symbol, except what starts with `#` (a colour mistyped, refused rather than drawn as
    /// an unknown symbol in the default colour).
    public static func marker(_ text: String) throws(Failure) -> Feature {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count >= 2, let lon = Double(parts[0]), let lat = Double(parts[1]) else {
            throw Failure(description: "marker \"\(text)\" is not LON,LAT[,COLOR][,SYMBOL]")
        }
        let coordinate: Coordinate
        do { coordinate = try Coordinate(latitude: lat, longitude: lon).validated() } catch { throw Failure(description: "marker \"\(text)\": \(error.description)") }
        var feature = Feature(geometry: .point(coordinate))
        for extra in parts.dropFirst(2) where !extra.isEmpty {
            if let color = Color(hex: extra) {
                feature.style.markerColor = color
            } else if extra.hasPrefix("#") {
                throw Failure(description: "marker \"\(text)\": colour \"\(extra)\" is not #rgb, #rrggbb or #rrggbbaa")
            } else {
                feature.style.markerSymbol = extra
            }
        }
        return feature
    }

    /// `enc:POLYLINE[,WIDTH][,COLOR]` (Google's encoded polyline, precision 5).
    public static func path(_ text: String) throws(Failure) -> Feature {
        guard text.hasPrefix("enc:") else { throw Failure(description: "path \"\(text)\" must start with enc: (a Google encoded polyline)") }
        // Options follow the last commas only when they parse as a width or a colour.
        var body = String(text.dropFirst(4))
        var style = Style()
        for _ in 0..<2 {
            guard let comma = body.lastIndex(of: ",") else { break }
            let tail = String(body[body.index(after: comma)...])
            if let width = Double(tail), style.strokeWidth == nil { style.strokeWidth = width }
            else if tail.hasPrefix("#"), let color = Color(hex: tail) { style.stroke = color }
            else { break }
            body = String(body[..<comma])
        }
        let points: [Coordinate]
        do { points = try EncodedPolyline.decode(body) } catch { throw Failure(description: "path: \(error.description)") }
        guard points.count >= 2 else { throw Failure(description: "path \"\(text)\" has fewer than 2 points") }
        var feature = Feature(geometry: .lineString(points))
        feature.style = style
        feature.style.strokeWidth = style.strokeWidth ?? 4
        feature.style.stroke = style.stroke ?? Color(hex: "#1f5fbf")
        return feature
    }
}
