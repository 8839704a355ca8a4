import Foundation
public import TileMath
import Features

/// Something on the game board: a quest, a monster, a store, a treasure or a warp zone,
/// with the circle (in meters) in which the player meets it.
public struct PointOfInterest: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case quest, monster, store, treasure, warp
    }

    public var id: String
    public var kind: Kind
    public var coordinate: Coordinate
    /// The encounter radius in meters (10 by default).
    public var radius: Double
    public var title: String?
    /// For warp zones: the lines that stop there (a subway station's routes).
    public var lines: [String]

    public init(id: String, kind: Kind, coordinate: Coordinate, radius: Double = 10, title: String? = nil, lines: [String] = []) {
        self.id = id
        self.kind = kind
        self.coordinate = coordinate
        self.radius = radius
        self.title = title
        self.lines = lines
    }
}

/// A game data file that is wrong: the one shape of "this file, at this place, is wrong
/// because" (`FeatureError`), under the name the game's API uses.
public typealias GameDataError = FeatureError

/// Points of interest from GeoJSON Point features (`id`, `kind`, optional `radius`, `title`,
/// `lines`) or a plist of annotations (`name`, `type`, `location`: kind from `type`).
public enum PointsOfInterest {
    public static func load(_ path: String) throws(GameDataError) -> [PointOfInterest] {
        let features = try FeatureFiles.load(path)
        var pois = [PointOfInterest]()
        var seen = Set<String>()
        for (index, feature) in features.enumerated() {
            let place = "features[\(index)]"
            guard case .point(let c) = feature.geometry else { continue }
            let kindText = feature.properties["kind"]?.string ?? feature.properties["type"]?.string
            guard let kindText else { throw GameDataError(file: path, place: place + ".properties.kind", reason: "missing: quest, monster, store, treasure or warp") }
            guard let kind = PointOfInterest.Kind(rawValue: kindText.lowercased()) else {
                throw GameDataError(file: path, place: place + ".properties.kind", reason: "\"\(kindText)\" is not quest, monster, store, treasure or warp")
            }
            let id = feature.properties["id"]?.string ?? feature.id ?? feature.title ?? "\(kind.rawValue)-\(index)"
            guard seen.insert(id).inserted else { throw GameDataError(file: path, place: place + ".properties.id", reason: "\"\(id)\" is used twice") }
            var radius = 10.0
            if let value = feature.properties["radius"] {
                guard let r = value.number, r > 0, r <= 10_000 else {
                    throw GameDataError(file: path, place: place + ".properties.radius", reason: "expected meters in (0, 10000]")
                }
                radius = r
            } else if let r = feature.radius {
                radius = r
            }
            var lines = [String]()
            if case .array(let items)? = feature.properties["lines"] { lines = items.compactMap(\.string) }
            else if let text = feature.properties["lines"]?.string { lines = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init) }
            pois.append(PointOfInterest(id: id, kind: kind, coordinate: c, radius: radius, title: feature.title, lines: lines))
        }
        return pois
    }
}
