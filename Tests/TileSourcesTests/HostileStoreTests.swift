import Foundation
import Testing
import Canvas
import TileMath
@testable import MBTiles
@testable import PMTiles
@testable import TileSources

/// The hostile stores of issue 11 (written by Hostile/make-hostile-stores.py): each once
/// trapped, allocated gigabytes or walked for minutes; each is now an error naming the
/// file, the field and the value.
@Suite struct HostileStoreTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Hostile")
    static func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// PMTiles refused when opened: (fixture, field, value, reason).
    @Test(arguments: [
        ("pmtiles-header/root-length-2e63.pmtiles", "root directory length", 9_223_372_036_854_775_807, "exceeds the file size 773"),
        ("pmtiles-header/root-offset-overflow.pmtiles", "root directory offset", 18_446_744_073_709_551_600, "plus its length 26 exceeds the file size 773"),
        ("pmtiles-header/root-beyond-16k.pmtiles", "root directory length", 27, "at offset 16364 ends beyond the first 16384 bytes, where the spec keeps it"),
        ("pmtiles-header/metadata-length-3gb.pmtiles", "metadata length", 3_000_000_000, "exceeds the limit of 33554432 bytes"),
        ("pmtiles-header/metadata-length-beyond-file.pmtiles", "metadata offset", 153, "plus its length 773 exceeds the file size 773"),
        ("pmtiles-header/metadata-not-gzip.pmtiles", "metadata length", 17, "does not hold gzip metadata: incorrect header check"),
        ("pmtiles-header/leaf-offset-2e64.pmtiles", "leaf directories offset", UInt64.max, "plus its length 2 exceeds the file size 773"),
        ("pmtiles-header/tile-data-offset-2e63.pmtiles", "tile data offset", 1 << 63, "plus its length 570 exceeds the file size 773"),
        ("pmtiles-header/tile-data-length-2e64.pmtiles", "tile data length", UInt64.max, "exceeds the file size 773"),
        ("pmtiles-header/minzoom-200.pmtiles", "minzoom", 200, "is outside the zooms 0-31 of the spec"),
        ("pmtiles-header/maxzoom-200.pmtiles", "maxzoom", 200, "is outside the zooms 0-31 of the spec"),
        ("pmtiles-header/minzoom-above-maxzoom.pmtiles", "minzoom", 5, "is above maxzoom 2"),
        ("pmtiles-header/short-header.pmtiles", "file size", 60, "is smaller than the 127-byte header"),
        ("pmtiles-directory/entry-count-2e63.pmtiles", "root directory entry count", 1 << 63, "exceeds the limit of 2097152 entries"),
        ("pmtiles-directory/entry-count-above-bytes.pmtiles", "root directory entry count", 1000, "needs at least 4000 bytes but 8 follow it"),
        ("pmtiles-directory/varint-11-bytes.pmtiles", "root directory byte", 0, "starts a varint longer than 64 bits"),
        ("pmtiles-directory/varint-above-64-bits.pmtiles", "root directory byte", 1, "starts a varint longer than 64 bits"),
        ("pmtiles-directory/id-delta-overflow.pmtiles", "root directory entry 1 tile id delta", UInt64.max, "overflows the tile id after 1"),
        ("pmtiles-directory/id-beyond-maxzoom.pmtiles", "root directory entry 0 tile id", 5, "is outside the ids 0..<5 this directory may hold"),
        ("pmtiles-directory/ids-not-ascending.pmtiles", "root directory entry 1 tile id delta", 0, "repeats the previous tile id 0"),
        ("pmtiles-directory/run-length-2e32-1.pmtiles", "root directory entry 0 run length", 4_294_967_295,
         "from tile id 0 reaches past the last id this directory may hold, 1365"),
        ("pmtiles-directory/run-length-2e40.pmtiles", "root directory entry 0 run length", 1 << 40, "exceeds 4294967295"),
        ("pmtiles-directory/run-overlaps-next.pmtiles", "root directory entry 0 run length", 3, "from tile id 0 reaches past the next entry's tile id 1"),
        ("pmtiles-directory/length-2e40.pmtiles", "root directory entry 0 length", 1 << 40, "exceeds 4294967295"),
        ("pmtiles-directory/length-zero.pmtiles", "root directory entry 0 length", 0, "is empty"),
        ("pmtiles-directory/entry-offset-overflow.pmtiles", "root directory entry 0 offset", UInt64.max - 1,
         "plus its length 100 exceeds the tile data length 570"),
        ("pmtiles-directory/implicit-offset-overflow.pmtiles", "root directory entry 1 offset", 0,
         "follows entry 0 at 18446744073709551605 + 100, which overflows"),
        ("pmtiles-directory/first-offset-zero.pmtiles", "root directory entry 0 offset", 0, "means \"after the previous entry\" but there is none"),
        ("pmtiles-directory/not-gzip.pmtiles", "root directory length", 20, "does not hold a gzip directory: incorrect header check"),
        ("pmtiles-directory/leaf-pointer-beyond-section.pmtiles", "root directory entry 0 length", 1000, "exceeds the leaf directories length 26"),
    ] as [(String, String, UInt64, String)])
    func pmtilesRefusedWhenOpened(name: String, field: String, value: UInt64, reason: String) {
        let path = Self.path(name)
        #expect(throws: PMTilesError.invalid(file: path, field: field, value: value, reason: reason)) { try PMTilesReader(path: path) }
        // The same through the tile source, as `info`, `convert` and `serve` see it.
        #expect(throws: TileSourceError.corrupt(path: path, reason: "not a valid PMTiles file: \(field) \(value) \(reason)")) {
            try TileStore.open(path)
        }
    }

    /// PMTiles whose root is sound but whose leaves are not: opening succeeds (a leaf is
    /// read when a tile needs it), the lookup and the listing fail. The self-referencing
    /// leaf and the three levels of 100 shared leaves once took minutes.
    @Test(arguments: [
        ("leaf-entry-offset-overflow", "leaf directory at offset 0 entry 0 offset", UInt64.max - 1, "plus its length 100 exceeds the tile data length 570"),
        ("leaf-empty", "leaf directory at offset 0 entry count", 0, "is empty"),
        ("leaf-below-pointer", "leaf directory at offset 0 entry 0 tile id", 0, "is below the tile id 1 of the entry pointing at it"),
        ("leaf-gzip-bomb", "leaf directory at offset 0 length", 40789, "does not hold a gzip directory: output larger than 33554432 bytes"),
        ("self-referencing-leaf", "leaf directory at offset 0 depth", 4, "exceeds the 3 levels of leaves a lookup follows"),
        ("fan-out-100-three-levels", "leaf directory at offset 67 entry 99 tile id", 99,
         "reaches past 1, the tile id of the entry after the one pointing at it"),
    ] as [(String, String, UInt64, String)])
    func pmtilesLeavesRefusedWhenRead(name: String, field: String, value: UInt64, reason: String) async throws {
        let path = Self.path("pmtiles-directory/\(name).pmtiles")
        let expected = PMTilesError.invalid(file: path, field: field, value: value, reason: reason)
        let reader = try PMTilesReader(path: path)
        let tile = name == "leaf-below-pointer" ? TileID(z: 1, x: 0, y: 0) : TileID(z: 0, x: 0, y: 0)
        #expect(throws: expected) { try reader.tile(tile) }
        #expect(throws: expected) { try reader.forEachEntry { _ in } }
        // The source answers with an error (a 500 from the server), not a trap.
        let source = try PMTilesSource(path: path)
        await #expect(throws: TileSourceError.corrupt(path: path, reason: expected.reason)) { try await source.tile(TileRequest(tile)) }
        #expect(throws: TileSourceError.corrupt(path: path, reason: expected.reason)) { try TileStore.statistics(of: source) }
    }

    /// Refused by TileKit rather than by the spec: zooms TileKit cannot serve, compression it
    /// does not read, a version it does not know.
    @Test(arguments: [
        ("pmtiles-header/zoom-31.pmtiles", "minzoom 31 is beyond TileKit's deepest zoom 30"),
        ("pmtiles-header/internal-compression-brotli.pmtiles", "unsupported compression: internal brotli"),
        ("pmtiles-header/version-2.pmtiles", "PMTiles version 2 is not supported (only 3)"),
    ])
    func pmtilesTileKitCannotRead(name: String, reason: String) {
        let path = Self.path(name)
        #expect(throws: TileSourceError.corrupt(path: path, reason: reason)) { try TileStore.open(path) }
    }

    /// A center zoom out of range is informative only: ignored, with a warning.
    @Test func pmtilesCenterZoomIsIgnored() throws {
        let source = try PMTilesSource(path: Self.path("pmtiles-header/center-zoom-200.pmtiles"))
        #expect(source.metadata.centerZoom == nil)
        #expect(source.metadata.warnings == ["header center zoom 200 is beyond TileKit's deepest zoom; ignored"])
    }

    /// A valid run of 2^32 - 1 tiles: lookups find it at once, and counting its tiles does
    /// not expand it.
    @Test func pmtilesHugeRunIsCountedNotExpanded() async throws {
        let source = try PMTilesSource(path: Self.path("pmtiles-directory/valid-run-2e32-1-z16.pmtiles"))
        #expect(try await source.tile(TileRequest(TileID(z: 15, x: 12345, y: 6789))).data != nil)
        let perZoom = try TileStore.statistics(of: source)
        #expect(perZoom.count == 17 && perZoom[0]?.tiles == 1 && perZoom[15]?.tiles == 1 << 30)
        #expect(perZoom.values.map(\.tiles).reduce(0, +) == 4_294_967_295)
    }

    /// MBTiles refused when opened, naming the metadata field or tiles row and its value.
    @Test(arguments: [
        ("maxzoom--1", "metadata maxzoom \"-1\" is not a whole zoom in 0-30"),
        ("minzoom-200", "metadata minzoom \"200\" is not a whole zoom in 0-30"),
        ("maxzoom-1e309", "metadata maxzoom \"1e309\" is not a whole zoom in 0-30"),
        ("maxzoom-text", "metadata maxzoom \"ten\" is not a whole zoom in 0-30"),
        ("minzoom-above-maxzoom", "metadata minzoom 5 is above maxzoom 2"),
        ("tile-size--2147483649", "metadata tile_size \"-2147483649\" is not a tile size in 16-4096 pixels"),
        ("tile-size-0", "metadata tile_size \"0\" is not a tile size in 16-4096 pixels"),
        ("tile-size-1e12", "metadata tile_size \"1e12\" is not a tile size in 16-4096 pixels"),
        ("tile-zoom--1-no-zooms", "tiles table: zoom_level -1 is outside 0-30 (and the metadata names no minzoom and maxzoom)"),
        ("tile-zoom-2e62-no-zooms", "tiles table: zoom_level 4611686018427387904 is outside 0-30 (and the metadata names no minzoom and maxzoom)"),
        // Text sorts after numbers in SQLite: max(zoom_level) was "one", read as 0, below min (a Range trap, found by fuzzing).
        ("tile-zoom-text-no-zooms", "tiles table: zoom_level \"one\" is not a number (and the metadata names no minzoom and maxzoom)"),
    ])
    func mbtilesRefusedWhenOpened(name: String, reason: String) {
        let path = Self.path("mbtiles/\(name).mbtiles")
        #expect(throws: TileSourceError.corrupt(path: path, reason: reason)) { try TileStore.open(path) }
    }

    /// MBTiles whose metadata is fine but whose tiles table holds rows outside the pyramid:
    /// lookups never ask for them; listing every tile (convert, info) names the row.
    @Test(arguments: [
        ("tile-zoom--1", -1, 0, 0, "zoom_level -1 is outside 0-30"),
        ("tile-column-out-of-range", 1, 5, 0, "tile_column 5 is outside 0-1 at zoom 1"),
        ("tile-row-2e62", 2, 0, 1 << 62, "tile_row 4611686018427387904 is outside 0-3 at zoom 2"),
    ])
    func mbtilesRowsOutsideThePyramid(name: String, z: Int, x: Int, row: Int, problem: String) async throws {
        let path = Self.path("mbtiles/\(name).mbtiles")
        let source = try MBTilesSource(path: path)
        #expect(try await source.tile(TileRequest(TileID(z: 0, x: 0, y: 0))).data != nil)
        #expect(throws: MBTilesError.invalidTile(file: path, zoomLevel: z, tileColumn: x, tileRow: row)) {
            try source.reader.forEachTile { _, _ in }
        }
        let reason = "tiles table row zoom_level \(z), tile_column \(x), tile_row \(row): \(problem)"
        #expect(throws: TileSourceError.corrupt(path: path, reason: reason)) { try TileStore.forEachTile(in: source) { _, _ in } }
    }

    /// Informative fields that make no sense are ignored with a warning naming them.
    @Test(arguments: [
        ("center-zoom-1e309", "metadata center \"0,0,1e309\": the zoom is not a whole zoom in 0-30; ignored"),
        ("center-nan", "metadata center \"nan,nan,0\" is not LON,LAT,ZOOM in degrees; ignored"),
        ("bounds-1e309", "metadata bounds \"-1e309,-85,1e309,85\" is not W,S,E,N in degrees; ignored"),
    ])
    func mbtilesInformativeFieldsIgnored(name: String, warning: String) async throws {
        let source = try MBTilesSource(path: Self.path("mbtiles/\(name).mbtiles"))
        #expect(source.metadata.warnings == [warning])
        #expect(source.metadata.centerZoom == nil && source.metadata.minZoom == 0 && source.metadata.maxZoom == 0)
        if name == "center-zoom-1e309" { #expect(source.metadata.center == Coordinate(latitude: 0, longitude: 0)) }
        if name == "bounds-1e309" { #expect(source.metadata.bounds == nil) }
        // The layer over it still serves its tile.
        guard case .image = try await TileLayer(source: source).render(TileRequest(TileID(z: 0, x: 0, y: 0))) else {
            Issue.record("no tile from \(name)")
            return
        }
    }

    /// Views that never end: opening reads at most 10,000 metadata rows, a lookup gives up
    /// 2 s after its last row, a listing after 30 s (here shortened) without its first.
    @Test func endlessViewsAreGivenUp() async throws {
        let metadataView = try MBTilesSource(path: Self.path("mbtiles/endless-metadata-view.mbtiles"))
        #expect(metadataView.reader.metadata.values.count == MBTilesReader.metadataRows)
        let path = Self.path("mbtiles/endless-tiles-view.mbtiles")
        let source = try MBTilesSource(path: path)  // the metadata names its zooms: nothing is scanned
        let reason = "gave up after 2.0 seconds without a row from SQLite (a view that never ends?) (SQLite 9)"
        await #expect(throws: TileSourceError.corrupt(path: path, reason: reason)) { try await source.tile(TileRequest(TileID(z: 0, x: 0, y: 0))) }
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        connection.timeLimit = .milliseconds(300)
        #expect(throws: SQLiteError(code: 9, message: "gave up after 0.3 seconds without a row from SQLite (a view that never ends?)", path: path)) {
            try connection.query("SELECT zoom_level, tile_column, tile_row FROM tiles ORDER BY zoom_level, tile_column, tile_row")
        }
    }

    @Test func validFixturesOpen() async throws {
        for name in ["mbtiles/valid.mbtiles", "pmtiles-header/valid.pmtiles"] {
            let source = try TileStore.open(Self.path(name))
            #expect(source.metadata.warnings.isEmpty && source.metadata.minZoom == 0 && source.metadata.maxZoom == 0)
            #expect(try await source.tile(TileRequest(TileID(z: 0, x: 0, y: 0))).data != nil, "\(name)")
        }
    }
}
