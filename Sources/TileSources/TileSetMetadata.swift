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
