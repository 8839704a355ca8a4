import Foundation

/// Loads a feature file by its extension: GeoJSON (`.geojson`, `.json`), GPX, KML or plist.
public enum FeatureFiles {
    public static let extensions = ["geojson", "json", "gpx", "kml", "plist"]

    /// `overlayImage`: for a plist park, the image pinned by its overlay corners.
    public static func load(_ path: String, overlayImage: String? = nil) throws(FeatureError) -> [Feature] {
        let url = URL(fileURLWithPath: path)
        switch url.pathExtension.lowercased() {
        case "geojson", "json": return try GeoJSON.load(url)
        case "gpx": return try GPX.load(url)
        case "kml": return try KML.load(url)
        case "plist": return try PropertyList.load(url, overlayImage: overlayImage)
        default: throw FeatureError(file: path, place: "file", reason: "not .geojson, .json, .gpx, .kml or .plist")
        }
    }
}
