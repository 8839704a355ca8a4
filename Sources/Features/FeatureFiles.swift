import Foundation

/// Loads a feature file by its extension: GeoJSON (`.geojson`, `.json`), GPX, KML or plist.
public enum FeatureFiles {
    public static let extensions = ["geojson", "json", "gpx", "kml", "plist"]

    public static func load(_ path: String) throws(FeatureError) -> [Feature] {
        let url = URL(fileURLWithPath: path)
        switch url.pathExtension.lowercased() {
        case "geojson", "json": return try GeoJSON.load(url)
        case "gpx": return try GPX.load(url)
        case "kml": return try KML.load(url)
        case "plist": return try PropertyList.load(url)
        default: throw FeatureError(file: path, place: "file", reason: "not .geojson, .json, .gpx, .kml or .plist")
        }
    }
}
