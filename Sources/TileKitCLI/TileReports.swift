import TileMath

/// What `tile at` prints: `{"x":X,"y":Y,"z":Z}`, an XYZ tile.
struct TileReport: Encodable {
    var z: Int
    var x: Int
    var y: Int

    init(_ tile: TileID) { (z, x, y) = (tile.z, tile.x, tile.y) }
}

/// What `tile bounds` prints: a tile's edges, in degrees or (with `--meters`) EPSG:3857 meters.
struct EdgesReport: Encodable {
    var west: Double
    var south: Double
    var east: Double
    var north: Double
}

/// One zoom's tile count, in the `zooms` array of `tile list --count` and `seed --dry-run`.
/// The zooms are an array of these rather than an object keyed by zoom so that they keep
/// numeric order (JSON keys are written sorted as text, and "10" sorts before "9").
struct ZoomTiles: Encodable {
    var zoom: Int
    var tiles: Int
}

/// What `tile list --count` prints for a box: `{"tiles":TOTAL,"zooms":[{"tiles":N,"zoom":Z},...]}`.
struct TileCountReport: Encodable {
    var tiles: Int
    var zooms: [ZoomTiles]

    /// Every zoom of `zooms` in ascending order; the total saturates at `Int.max`.
    init(_ counts: [Int: Int], zooms range: ClosedRange<Int>) {
        zooms = range.map { ZoomTiles(zoom: $0, tiles: counts[$0] ?? 0) }
        tiles = saturatingSum(zooms.map(\.tiles))
    }
}
