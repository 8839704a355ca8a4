import Foundation
public import Canvas
public import TileMath

/// Row order of a tile set on disk: XYZ counts rows from the north (OSM, Google, MapKit);
/// TMS from the south (MBTiles, old gdal2tiles and MapTiler folders; MapKit's
/// `isGeometryFlipped`).
public enum TileScheme: String, Hashable, Sendable, CaseIterable {
    case xyz, tms

    /// The row to store or look up for a tile.
    public func row(for tile: TileID) -> Int { self == .xyz ? tile.y : tile.tmsY }

    /// The tile for a stored row.
    public func tile(z: Int, x: Int, row: Int) -> TileID {
        self == .xyz ? TileID(z: z, x: x, y: row) : TileID(z: z, x: x, tmsY: row)
    }
}

/// What a tile set says about itself, in the vocabulary of TileJSON 3.0 and MBTiles 1.3.
public struct TileSetMetadata: Hashable, Sendable {
    public var name: String
    public var format: ImageFormat?
    public var scheme: TileScheme
    /// Where tiles exist, degrees; nil when unknown (the whole world).
    public var bounds: BoundingBox?
    /// A sensible first view: a coordinate and a zoom.
    public var center: Coordinate?
    public var centerZoom: Int?
    /// The zooms the set has tiles for, both included.
    public var minZoom: Int
    public var maxZoom: Int
    /// Width and height of a tile in pixels at scale 1.
    public var tileSize: Int
    public var attribution: String?
    public var description: String?
    /// TileKit's record of the build this store is one shard of (`pyramid --shard`, `seed
    /// --shard`), JSON that `tilekit merge` reads; nil for a finished store. Stored under
    /// `shardRecordKey` in MBTiles metadata, PMTiles metadata JSON and a folder's metadata.json.
    public var shardRecord: String?
    /// Optional fields of the store that were ignored because their values made no sense
    /// (a center at latitude NaN, bounds beyond 180°), each naming the field and value.
    public var warnings: [String] = []

    /// The zooms a store may declare: TileKit's pyramid, 0 to `TileID.maxZoom`.
    public static let zooms = 0...TileID.maxZoom
    /// The tile sizes, in pixels, a store may declare: TileKit writes 256 and 512 (1024 for
    /// retina 512s); anything outside this is a broken file, not a tile size.
    public static let tileSizes = 16...4096
    /// The metadata key of `shardRecord`.
    public static let shardRecordKey = "tilekit_shard"

    public init(name: String, format: ImageFormat? = nil, scheme: TileScheme = .xyz, bounds: BoundingBox? = nil,
                center: Coordinate? = nil, centerZoom: Int? = nil, minZoom: Int = 0, maxZoom: Int = 22,
                tileSize: Int = 256, attribution: String? = nil, description: String? = nil) {
        self.name = name
        self.format = format
        self.scheme = scheme
        self.bounds = bounds
        self.center = center
        self.centerZoom = centerZoom
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.tileSize = tileSize
        self.attribution = attribution
        self.description = description
    }
}

/// Parsing of the text forms MBTiles metadata uses ("W,S,E,N", "LON,LAT,ZOOM", "14").
public enum MetadataText {
    /// A box from "W,S,E,N" in degrees; nil unless four finite numbers in range with S ≤ N.
    public static func bounds(_ text: String) -> BoundingBox? {
        let values = numbers(text)
        guard values.count == 4 else { return nil }
        return try? BoundingBox(west: values[0], south: values[1], east: values[2], north: values[3]).validated()
    }

    /// A centre from "LON,LAT" or "LON,LAT,ZOOM"; nil unless the coordinate is finite and in
    /// range. The zoom is nil when absent or not a zoom TileKit has (see `zoom`).
    public static func center(_ text: String) -> (Coordinate, Int?)? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let values = numbers(text)
        guard (2...3).contains(parts.count), values.count == parts.count,
              let c = try? Coordinate(latitude: values[1], longitude: values[0]).validated() else { return nil }
        return (c, parts.count > 2 ? zoom(String(parts[2])) : nil)
    }

    /// A zoom from text: a whole number ("14", also "14.0" as some tools write it) within
    /// `TileSetMetadata.zooms`; nil otherwise (never a trap on "1e309" or "nan").
    public static func zoom(_ text: String) -> Int? {
        guard let value = wholeNumber(text), TileSetMetadata.zooms.contains(value) else { return nil }
        return value
    }

    /// A whole number from text ("512", "512.0"); nil for fractions, text, infinities, NaN and
    /// values beyond `Int`.
    public static func wholeNumber(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let value = Int(trimmed) { return value }
        guard let value = Double(trimmed), value.isFinite else { return nil }
        return Int(exactly: value)
    }

    public static func bounds(_ box: BoundingBox) -> String {
        [box.west, box.south, box.east, box.north].map(\.shortDescription).joined(separator: ",")
    }

    private static func numbers(_ text: String) -> [Double] {
        text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }
}
