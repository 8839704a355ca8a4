import TileMath
import Rendering

// The JSON lines tilekit-bench prints for scripts/bench.py, one type per measurement,
// written with sortedJSONText like every JSON TileKit writes.

/// `decode-png`: PNGReader's and libpng's milliseconds a tile on the same files.
struct PNGDecodeTimes: Encodable {
    var files: Int
    /// The files PNGReader reads: the ones timed.
    var tiles: Int
    var rounds: Int
    var pngreaderMS: Double
    var libpngMS: Double
    var meanBytes: Int
    /// Keeps the decodes from being optimized away.
    var checksum: Int

    enum CodingKeys: String, CodingKey {
        case files, tiles, rounds, checksum, pngreaderMS = "pngreader_ms_per_tile", libpngMS = "libpng_ms_per_tile", meanBytes = "mean_bytes"
    }
}

/// `scan`: the best round's time to read every row of a large image.
struct ScanTimes: Encodable {
    var width: Int
    var height: Int
    var rounds: Int
    /// The best round's.
    var seconds: Double
    var megapixelsPerSecond: Double
    /// Keeps the rows from being optimized away.
    var checksum: Int

    enum CodingKeys: String, CodingKey {
        case width, height, rounds, seconds, checksum, megapixelsPerSecond = "megapixels_per_s"
    }
}

/// `codecs`: one encoder setting's rate over the image's tiles.
struct CodecRate: Encodable {
    var codec: String
    var tilesPerSecond: Double
    var meanBytes: Int
    var tiles: Int

    enum CodingKeys: String, CodingKey { case codec, tiles, tilesPerSecond = "tiles_per_second", meanBytes = "mean_bytes" }
}

/// `make-tiles`: how many tiles were written.
struct TilesWritten: Encodable {
    var tiles: Int
}

/// `read`: a store's read rate, and for a remote PMTiles its range requests and cached leaves.
struct StoreReadRate: Encodable {
    /// Range requests to open and list the file, to read every tile once (`--warm`), while timed, and in all.
    struct RangeRequests: Encodable {
        var openAndList: Int
        var warmUp: Int
        var timed: Int
        var total: Int

        enum CodingKeys: String, CodingKey { case timed, total, openAndList = "open_and_list", warmUp = "warm_up" }
    }

    var store: String
    var tilesPerSecond: Double
    var tiles: Int
    var reads: Int
    var bytes: Int
    @NullIfAbsent var rangeRequests: RangeRequests?
    @NullIfAbsent var cachedLeaves: Int?

    enum CodingKeys: String, CodingKey {
        case store, tiles, reads, bytes
        case tilesPerSecond = "tiles_per_second", rangeRequests = "range_requests", cachedLeaves = "cached_leaves"
    }
}

/// `snapshot`: milliseconds per static image and its mean PNG size.
struct SnapshotRate: Encodable {
    var images: Int
    var msPerImage: Double
    var meanBytes: Int

    enum CodingKeys: String, CodingKey { case images, msPerImage = "ms_per_image", meanBytes = "mean_bytes" }
}

/// `features`: feature tiles drawn and encoded per second, and label placement per zoom.
struct FeatureTileRate: Encodable {
    var tiles: Int
    var features: Int
    var drawnPerSecond: Double
    var pngPerSecond: Double
    var meanBytes: Int
    /// Per zoom, ascending.
    var labelPlacement: [LabelPlacementCounts]

    enum CodingKeys: String, CodingKey {
        case tiles, features
        case drawnPerSecond = "drawn_per_second", pngPerSecond = "png_per_second", meanBytes = "mean_bytes", labelPlacement = "label_placement"
    }
}

/// Prints one measurement as a JSON line.
func printJSONLine(_ value: some Encodable) {
    print(value.sortedJSONText() ?? "{}")
}
