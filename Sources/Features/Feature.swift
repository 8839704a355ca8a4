public import Foundation
public import TileMath
public import Colors

/// A geometry in WGS84 degrees, as RFC 7946 defines them. Polygon rings are exterior
/// first, then holes; rings are closed (first point repeated).
public indirect enum Geometry: Hashable, Sendable {
    case point(Coordinate)
    case multiPoint([Coordinate])
    case lineString([Coordinate])
    case multiLineString([[Coordinate]])
    case polygon([[Coordinate]])
    case multiPolygon([[[Coordinate]]])
    case geometryCollection([Geometry])

    /// Every coordinate, in order.
    public var coordinates: [Coordinate] {
        switch self {
        case .point(let c): return [c]
        case .multiPoint(let cs), .lineString(let cs): return cs
        case .multiLineString(let lines), .polygon(let lines): return lines.flatMap { $0 }
        case .multiPolygon(let polygons): return polygons.flatMap { $0.flatMap { $0 } }
        case .geometryCollection(let geometries): return geometries.flatMap(\.coordinates)
        }
    }

    public var bounds: BoundingBox? { BoundingBox(covering: coordinates) }
}

/// How a feature is drawn: simplestyle-spec 1.1 (https://github.com/mapbox/simplestyle-spec)
/// plus a dash pattern. nil means "the layer's default".
public struct Style: Hashable, Sendable {
    public enum MarkerSize: String, Hashable, Sendable { case small, medium, large }

    public var stroke: Color?
    public var strokeWidth: Double?
    public var strokeOpacity: Double?
    public var fill: Color?
    public var fillOpacity: Double?
    public var markerColor: Color?
    public var markerSymbol: String?
    public var markerSize: MarkerSize?
    /// Alternating on and off lengths in pixels.
    public var dash: [Double]?
    /// A custom icon image (a file name, relative to the data file), instead of a built-in icon.
    public var markerImage: String?
    /// The point of the icon that sits on the coordinate, as fractions of its width and
    /// height: (0.5, 0.5) the centre (the default), (0.5, 1) the bottom middle (a pin's tip).
    public var markerAnchor: (x: Double, y: Double)?

    public init() {}

    public static func == (a: Style, b: Style) -> Bool {
        a.stroke == b.stroke && a.strokeWidth == b.strokeWidth && a.strokeOpacity == b.strokeOpacity && a.fill == b.fill
            && a.fillOpacity == b.fillOpacity && a.markerColor == b.markerColor && a.markerSymbol == b.markerSymbol
            && a.markerSize == b.markerSize && a.dash == b.dash && a.markerImage == b.markerImage
            && a.markerAnchor?.x == b.markerAnchor?.x && a.markerAnchor?.y == b.markerAnchor?.y
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(stroke); hasher.combine(fill); hasher.combine(markerColor); hasher.combine(markerSymbol); hasher.combine(markerImage)
    }
}

/// An image laid on the map: stretched into a box, or pinned by its corners.
public struct ImageOverlay: Hashable, Sendable {
    public enum Placement: Hashable, Sendable {
        case box(BoundingBox)
        /// Top-left, top-right, bottom-right, bottom-left (the image's own corners).
        case corners(topLeft: Coordinate, topRight: Coordinate, bottomRight: Coordinate, bottomLeft: Coordinate)
    }
    /// The image file, as written in the data (relative to the data file).
    public var image: String
    public var placement: Placement
    public var opacity: Double

    public init(image: String, placement: Placement, opacity: Double = 1) {
        self.image = image
        self.placement = placement
        self.opacity = opacity
    }
}

/// A recorded track's extra data per vertex (GPX): times and elevations, nil where absent.
public struct TrackPoints: Hashable, Sendable {
    public var times: [Date?]
    public var elevations: [Double?]

    public init(times: [Date?], elevations: [Double?]) {
        self.times = times
        self.elevations = elevations
    }
}

/// A JSON value of a feature's properties.
public enum PropertyValue: Hashable, Sendable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([PropertyValue])
    case object([String: PropertyValue])

    public var string: String? {
        switch self {
        case .string(let s): return s
        case .number(let n): return n.shortDescription
        case .bool(let b): return b ? "true" : "false"
        default: return nil
        }
    }

    public var number: Double? {
        switch self {
        case .number(let n): return n
        case .string(let s): return Double(s)
        default: return nil
        }
    }
}

/// A thing on the map: a geometry, its properties, how it is drawn, and what a callout
/// shows (MKAnnotation's title and subtitle).
public struct Feature: Hashable, Sendable {
    public var id: String?
    public var geometry: Geometry?
    public var properties: [String: PropertyValue]
    public var style: Style
    public var title: String?
    public var subtitle: String?
    /// A point with a radius is a circle of that many meters (TileKit's `radius` property).
    public var radius: Double?
    public var imageOverlay: ImageOverlay?
    /// A custom renderer's name (TileKit's `renderer` property), e.g. "shimmer".
    public var renderer: String?
    /// Times and elevations of a recorded track (GPX), one per coordinate.
    public var trackPoints: TrackPoints?

    public init(id: String? = nil, geometry: Geometry?, properties: [String: PropertyValue] = [:], style: Style = Style(),
                title: String? = nil, subtitle: String? = nil) {
        self.id = id
        self.geometry = geometry
        self.properties = properties
        self.style = style
        self.title = title
        self.subtitle = subtitle
    }
}

/// A data file that is wrong: the file, the place in it (a JSON path such as
/// `features[3].geometry.coordinates`, line and column for XML, or empty for the whole
/// document), and what is wrong. TileKit's one shape for "this file, at this place, is wrong
/// because": feature files, game data (`GameDataError`) and map projects (`ProjectProblem`).
public struct FeatureError: Error, Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var place: String
    public var reason: String
    /// True when the file could not be read or reached (missing, unreadable, a server down)
    /// rather than read and found wrong: an I/O failure (exit 74) rather than data (65).
    public var isIO: Bool

    public init(file: String, place: String, reason: String, isIO: Bool = false) {
        self.file = file
        self.place = place
        self.reason = reason
        self.isIO = isIO
    }

    public var description: String { "\(file): \(place.isEmpty ? "root" : place): \(reason)" }
}

extension FeatureError {
    /// The bytes of a data file, or an error naming it. A file larger than
    /// `FeatureLimits.fileBytes` is refused before it is read (and at most one byte more is
    /// ever read, so a file that grows, or a device such as /dev/zero, cannot exhaust memory).
    public static func read(_ url: URL, limit: Int = FeatureLimits.fileBytes) throws(FeatureError) -> Data {
        let tooLarge = FeatureError(file: url.path, place: "file", reason: "larger than \(limit) bytes (TileKit's limit for a data file)")
        // A folder opens for reading on Linux, and seeking to its end gives a hash offset
        // (2^63 - 1 on ext4), which would be reported as a file too large.
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue {
            throw FeatureError(file: url.path, place: "file", reason: "is a folder, not a file", isIO: true)
        }
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            if try handle.seekToEnd() > UInt64(clamping: limit) { throw tooLarge }
            try handle.seek(toOffset: 0)
            let data = try handle.read(upToCount: min(limit, Int.max - 1) + 1) ?? Data()
            guard data.count <= limit else { throw tooLarge }
            return data
        } catch let error as FeatureError {
            throw error
        } catch {
            throw FeatureError(file: url.path, place: "file", reason: (error as NSError).localizedDescription, isIO: true)
        }
    }
}
