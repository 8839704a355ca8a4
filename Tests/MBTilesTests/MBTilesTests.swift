import Foundation
import Testing
import Canvas
import TileMath
import CSQLite
@testable import MBTiles
@testable import TileSources

@Suite struct MBTilesTests {
    let park = BoundingBox(west: -73.9819, south: 40.7644, east: -73.9493, north: 40.8006)

    /// Tiles of the park at zooms 13-15, each coloured by position, plus repeated blank tiles.
    func writeSample(_ path: String) throws -> [TileID: [UInt8]] {
        let store = try MBTilesStoreWriter(path: path)
        var written = [TileID: [UInt8]]()
        for zoom in 13...15 {
            for range in TileRange.covering(park, zoom: zoom) {
                for tile in range {
                    let color = tile.z == 15 && tile.x % 2 == 0 ? Color.white
                        : Color(red: Double(tile.x % 7) / 7, green: Double(tile.y % 5) / 5, blue: Double(tile.z) / 20)
                    let bytes = try RGBAImage(width: 256, height: 256, color: color).encoded()
                    try store.write(tile, bytes: bytes)
                    written[tile] = bytes
                }
            }
        }
        var metadata = TileSetMetadata(name: "Central Park", format: .png, bounds: park, minZoom: 13, maxZoom: 15)
        metadata.attribution = "© OpenStreetMap contributors"
        try store.finish(metadata: metadata)
        return written
    }

    /// SQLite's memory statistics take one process-wide mutex on every allocation: two server
    /// threads reading tiles waited for each other. TileKit turns them off before its first
    /// connection (CLibrariesTests, the other opener, does too, so the order tests run in does
    /// not matter), and the figure SQLite keeps then stays 0 with a file open and read.
    @Test func sqliteKeepsNoMemoryStatistics() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("park.mbtiles").path
        let written = try writeSample(path)
        let reader = try MBTilesReader(path: path)
        let tile = try #require(written.keys.first)
        #expect(try reader.tile(tile) == written[tile])
        var current: sqlite3_int64 = -1, highest: sqlite3_int64 = -1
        #expect(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highest, 0) == SQLITE_OK)
        #expect(current == 0 && highest == 0)
    }

    @Test func roundTripWithMetadataAndDeduplication() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("park.mbtiles").path
        let written = try writeSample(path)
        let source = try MBTilesSource(path: path)
        #expect(source.metadata.name == "Central Park" && source.metadata.format == .png)
        #expect(source.metadata.minZoom == 13 && source.metadata.maxZoom == 15 && source.metadata.scheme == .tms)
        #expect(source.metadata.bounds == park && source.metadata.attribution == "© OpenStreetMap contributors")
        #expect(source.metadata.center != nil && source.metadata.centerZoom == 13)
        for (tile, bytes) in written {
            #expect(try await source.tile(TileRequest(tile)).data?.bytes == bytes)
        }
        #expect(try await source.tile(TileRequest(TileID(z: 15, x: 0, y: 0))) == .noTile)
        // tile_row is the TMS row, as the spec says.
        let someTile = written.keys.sorted().first!
        let raw = try MBTilesReader(path: path)
        var rows = [Int]()
        try raw.forEachTile { tile, _ in rows.append(tile.tmsY) }
        #expect(rows.count == written.count)
        #expect(try raw.tile(someTile) == written[someTile])
        // The white tiles are stored once.
        let writer = try MBTilesWriter(path: path)
        let whites = written.keys.filter { $0.z == 15 && $0.x % 2 == 0 }.count
        let unique = try writer.uniqueImageCount()
        #expect(whites > 2 && unique == written.count - whites + 1)
        let stats = try raw.statistics()
        #expect(stats.map(\.zoom) == [13, 14, 15] && stats.map(\.tiles).reduce(0, +) == written.count)
    }

    /// New files get 16 KB pages (a 117 KB tile is 8 reads, not 30), and a tile spanning many
    /// overflow pages reads back whole; a file made with 4 KB pages keeps them.
    @Test func newFilesHaveSixteenKilobytePages() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func pageSize(_ path: String) throws -> Int {
            var size = 0
            try SQLiteConnection(path: path, mode: .readOnly).query("PRAGMA page_size") { size = $0.integer(0) }
            return size
        }
        let path = directory.appendingPathComponent("large.mbtiles").path
        let store = try MBTilesStoreWriter(path: path)
        // Noise does not compress: a PNG of about 170 KB, a chain of overflow pages.
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<(256 * 170 * 4)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let large = try RGBAImage(width: 256, height: 170, pixels: noise).encoded()
        #expect(large.count > 100_000)
        try store.write(TileID(z: 3, x: 1, y: 2), bytes: large)
        try store.finish(metadata: TileSetMetadata(name: "large", format: .png, bounds: nil, minZoom: 3, maxZoom: 3))
        #expect(try pageSize(path) == 16384)
        #expect(try await MBTilesSource(path: path).tile(TileRequest(TileID(z: 3, x: 1, y: 2))).data?.bytes == large)

        let old = directory.appendingPathComponent("old.mbtiles").path
        try SQLiteConnection(path: old, mode: .create).execute("PRAGMA page_size=4096; CREATE TABLE t (x)")
        _ = try MBTilesWriter(path: old)
        #expect(try pageSize(old) == 4096)
    }

    /// Many readers at once while one writer adds tiles (WAL).
    @Test func concurrentReadersWithAWriter() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("busy.mbtiles").path
        let written = try writeSample(path)
        let source = try MBTilesSource(path: path)
        let tiles = Array(written.keys)
        let writer = try MBTilesStoreWriter(path: path)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for reader in 0..<8 {
                group.addTask {
                    var found = 0, order = SeededRandom(seed: UInt64(reader) + 1)  // each reader its own order, reproducible
                    for tile in tiles.shuffled(using: &order) where try await source.tile(TileRequest(tile)).data != nil { found += 1 }
                    return found
                }
            }
            // Meanwhile a writer adds a zoom.
            for tile in TileRange.covering(park, zoom: 16)[0] {
                try writer.write(tile, bytes: try RGBAImage(width: 256, height: 256, color: .black).encoded())
            }
            try writer.finish(metadata: TileSetMetadata(name: "Central Park", minZoom: 13, maxZoom: 16))
            for try await found in group { #expect(found == tiles.count) }
        }
        #expect(try MBTilesSource(path: path).metadata.maxZoom == 16)
    }

    @Test func notMBTilesFilesAreNamed() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = directory.appendingPathComponent("notes.mbtiles")
        try Data(String(repeating: "not a database ", count: 100).utf8).write(to: text)
        #expect {
            try MBTilesSource(path: text.path)
        } throws: { error in
            guard case .corrupt(let path, let reason) = error as? TileSourceError else { return false }
            return path == text.path && reason.contains("not a database")
        }
        #expect(throws: TileSourceError.notFound(path: "/nonexistent/x.mbtiles")) { try MBTilesSource(path: "/nonexistent/x.mbtiles") }
    }
}
