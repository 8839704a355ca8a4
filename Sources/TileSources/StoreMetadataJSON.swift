import Foundation
import TileMath

/// What TileKit writes as a store's own metadata: a folder's `metadata.json` (MBTiles 1.3's
/// names: `format`, `scheme`, `bounds` as "W,S,E,N" text) and the metadata JSON of a PMTiles
/// file (PMTiles v3: `name`, `type`, `format`, `attribution`, `description`). Absent fields
/// are left out; `tilekit_shard` holds a shard's record (`TileSetMetadata.shardRecord`).
struct StoreMetadataJSON: Encodable {
    var name: String
    /// PMTiles metadata's layer type (always "overlay"); not written for a folder.
    var type: String?
    var scheme: String?
    var minZoom: Int?
    var maxZoom: Int?
    var format: String?
    var tileSize: Int
    var bounds: String?
    var attribution: String?
    var description: String?
    var shardRecord: String?

    enum CodingKeys: String, CodingKey {
        case name, type, scheme, format, bounds, attribution, description
        case minZoom = "minzoom", maxZoom = "maxzoom", tileSize = "tile_size"
        case shardRecord = "tilekit_shard"  // TileSetMetadata.shardRecordKey
    }

    /// A folder's `metadata.json`.
    static func folder(_ metadata: TileSetMetadata, scheme: TileScheme, format: String) -> StoreMetadataJSON {
        StoreMetadataJSON(name: metadata.name, scheme: scheme.rawValue, minZoom: metadata.minZoom, maxZoom: metadata.maxZoom, format: format,
                          tileSize: metadata.tileSize, bounds: metadata.bounds.map(MetadataText.bounds), attribution: metadata.attribution,
                          description: metadata.description, shardRecord: metadata.shardRecord)
    }

    /// A PMTiles file's metadata JSON (its zooms and bounds are in the header).
    static func pmtiles(_ metadata: TileSetMetadata) -> StoreMetadataJSON {
        StoreMetadataJSON(name: metadata.name, type: "overlay", format: metadata.format?.fileExtension, tileSize: metadata.tileSize,
                          attribution: metadata.attribution, description: metadata.description, shardRecord: metadata.shardRecord)
    }
}
