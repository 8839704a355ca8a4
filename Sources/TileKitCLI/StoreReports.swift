import Foundation
import TileMath
import TileSources
import MBTiles

/// What `tilekit info` prints (pretty, keys sorted): a store's metadata, with `null` for what
/// it does not say, and its tiles and bytes in all and per zoom.
struct StoreInfoReport: Encodable {
    /// One zoom's tiles and bytes; `zooms` is an array of these, ascending, so that zooms
    /// keep numeric order (keys are written sorted as text: "10" sorts before "9").
    struct Zoom: Encodable {
        var zoom: Int
        var tiles: Int
        var bytes: Int
    }

    var name: String
    var kind: String
    @NullIfAbsent var format: String?
    var scheme: String
    var tileSize: Int
    var minZoom: Int
    var maxZoom: Int
    /// `[west, south, east, north]` in degrees.
    @NullIfAbsent var bounds: [Double]?
    /// `[longitude, latitude, zoom]`: the metadata's center, else the middle of its bounds.
    @NullIfAbsent var center: [Double]?
    @NullIfAbsent var attribution: String?
    var tiles: Int
    var bytes: Int
    var zooms: [Zoom]
    /// Present only when the metadata had values that were ignored.
    var warnings: [String]?

    init(_ metadata: TileSetMetadata, kind: String, perZoom: [Int: (tiles: Int, bytes: Int)]) {
        name = metadata.name
        self.kind = kind
        format = metadata.format?.fileExtension
        scheme = metadata.scheme.rawValue
        tileSize = metadata.tileSize
        minZoom = metadata.minZoom
        maxZoom = metadata.maxZoom
        bounds = metadata.bounds.map { [$0.west, $0.south, $0.east, $0.north] }
        center = (metadata.center ?? metadata.bounds?.center).map {
            [$0.longitude, $0.latitude, Double(metadata.centerZoom ?? metadata.minZoom)]
        }
        attribution = metadata.attribution
        zooms = perZoom.keys.sorted().map { Zoom(zoom: $0, tiles: perZoom[$0]?.tiles ?? 0, bytes: perZoom[$0]?.bytes ?? 0) }
        tiles = saturatingSum(zooms.map(\.tiles))
        bytes = saturatingSum(zooms.map(\.bytes))
        warnings = metadata.warnings.isEmpty ? nil : metadata.warnings
    }

    enum CodingKeys: String, CodingKey {
        case name, kind, format, scheme, bounds, center, attribution, tiles, bytes, zooms, warnings
        case tileSize = "tile_size", minZoom = "minzoom", maxZoom = "maxzoom"
    }
}

/// What `tilekit cache info` prints: the cache's tiles, bytes, expired tiles, and its oldest
/// and newest fetch as ISO 8601 UTC times (`null` in an empty cache).
struct CacheInfoReport: Encodable {
    var tiles: Int
    var bytes: Int
    var expired: Int
    @NullIfAbsent var oldestFetch: String?
    @NullIfAbsent var newestFetch: String?

    init(_ summary: TileCacheStore.Summary) {
        (tiles, bytes, expired) = (summary.tiles, summary.bytes, summary.expired)
        let format = ISO8601DateFormatter()
        oldestFetch = summary.oldestFetch.map { format.string(from: Date(timeIntervalSince1970: $0)) }
        newestFetch = summary.newestFetch.map { format.string(from: Date(timeIntervalSince1970: $0)) }
    }

    enum CodingKeys: String, CodingKey {
        case tiles, bytes, expired, oldestFetch = "oldest_fetch", newestFetch = "newest_fetch"
    }
}

/// The product, or `Int.max` when it would overflow (an estimate over a huge region).
func saturatingProduct(_ a: Int, _ b: Int) -> Int {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? .max : product
}

/// The sum, or `Int.max` when it would overflow (counts of a hostile PMTiles run can be huge).
func saturatingSum(_ values: [Int]) -> Int {
    values.reduce(0) { total, value in
        let (sum, overflow) = total.addingReportingOverflow(value)
        return overflow ? .max : sum
    }
}
