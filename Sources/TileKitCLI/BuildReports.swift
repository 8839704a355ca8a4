import TileMath

/// What `pyramid --json` prints: the tiles written, skipped as empty and reused from an
/// earlier run, their bytes, the zooms, the run's seconds, and for a shard its place.
struct PyramidRunReport: Encodable {
    var tiles: Int
    var empty: Int
    var reused: Int
    var bytes: Int
    var minZoom: Int
    var maxZoom: Int
    var seconds: Double
    /// `I/N`, for a shard of a split build.
    var shard: String?
    var splitZoom: Int?

    enum CodingKeys: String, CodingKey {
        case tiles, empty, reused, bytes, seconds, shard
        case minZoom = "minzoom", maxZoom = "maxzoom", splitZoom = "split_zoom"
    }
}

/// What `merge --json` prints: the tiles in the result (copied plus made), identical
/// duplicates and settled conflicts, the run's seconds, and for shards their count and split zoom.
struct MergeRunReport: Encodable {
    var tiles: Int
    var copied: Int
    var made: Int
    var identical: Int
    var conflicts: Int
    var seconds: Double
    var shards: Int?
    var splitZoom: Int?

    enum CodingKeys: String, CodingKey {
        case tiles, copied, made, identical, conflicts, seconds, shards, splitZoom = "split_zoom"
    }
}

/// What `seed --dry-run` prints: the tiles the seed would fetch, in all and per zoom, and the
/// bytes estimated from up to 3 sampled tiles (`null` when none could be fetched).
struct SeedEstimateReport: Encodable {
    var tiles: Int
    var zooms: [ZoomTiles]
    @NullIfAbsent var estimatedBytes: Int?
    var sampledTiles: Int

    enum CodingKeys: String, CodingKey {
        case tiles, zooms, estimatedBytes = "estimated_bytes", sampledTiles = "sampled_tiles"
    }
}

/// What `stitch --json` prints: the image written, its size in pixels, the zoom and its tile count.
struct StitchReport: Encodable {
    var image: String
    var width: Int
    var height: Int
    var zoom: Int
    var tiles: Int
}

/// What `split --json` prints: tiles written because they changed, left as they were,
/// copied over unchanged into a new store, and parents redrawn.
struct SplitReport: Encodable {
    var changed: Int
    var unchanged: Int
    var copied: Int
    var parents: Int
}
