/// One fuzz target: a parser or reader of TileKit fed arbitrary bytes. Whatever the bytes,
/// it must return (an error is a fine answer); a trap, a hang or an allocation without
/// bound is a bug. The same functions run under libFuzzer (`make fuzz`) and in the replay
/// of Fuzz/corpus and Fuzz/crashes (`make test`).
struct FuzzTarget: Sendable {
    let name: String
    /// What the bytes are taken as.
    let input: String
    let run: @Sendable ([UInt8]) -> Void

    static let all: [FuzzTarget] = [
        .geojson, .gpx, .kml, .plist, .snapshot, .raster,
        .mapJSON, .urlTemplate, .route, .http1,
        .png, .pngReader, .pngRows, .jpeg, .webp, .tiff, .worldFile,
        .pmtiles, .pmtilesDirectory, .mbtiles, .mbtilesMetadata,
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}
