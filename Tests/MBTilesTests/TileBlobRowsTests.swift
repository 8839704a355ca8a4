import Foundation
import Testing
import TileMath
@testable import MBTiles

/// Tiles are read with incremental blob I/O from the layouts whose rows are known (a `tiles`
/// table; mbutil's `map` and `images` under the spec's view), through the `tiles` view or
/// table from any other, and both ways give the same bytes.
@Suite struct TileBlobRowsTests {
    /// A file made by the SQL given, with a rollback journal (no -wal beside it).
    func file(_ sql: String, in directory: URL, name: String = "layout.mbtiles") throws -> String {
        let path = directory.appendingPathComponent(name).path
        try SQLiteConnection(path: path, mode: .create).execute("PRAGMA journal_mode = DELETE;\n" + sql)
        return path
    }

    /// 0/0/0 holds 40 KB (three 16 KB pages and more), 1/1/1 (TMS row 0) 3 bytes.
    let tilesTable = """
        CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
        CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
        INSERT INTO tiles VALUES (0, 0, 0, zeroblob(40000)), (1, 1, 0, x'010203');
        """
    let large = [UInt8](repeating: 0, count: 40000)

    @Test func tileKitsLayoutIsReadAsBlobs() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("written.mbtiles").path
        let writer = try MBTilesWriter(path: path)
        let tiles = [TileID(z: 3, x: 2, y: 5): [UInt8](repeating: 7, count: 120_000), TileID(z: 3, x: 2, y: 6): [1, 2, 3],
                     TileID(z: 3, x: 3, y: 6): [1, 2, 3]]
        for (tile, bytes) in tiles { try writer.write(tile, bytes: bytes) }
        try writer.finish(metadata: MBTiles.Metadata())
        let reader = try MBTilesReader(path: path)
        #expect(reader.blobRows?.table == "images")
        for (tile, bytes) in tiles { #expect(try reader.tile(tile) == bytes) }
        #expect(try reader.tile(TileID(z: 3, x: 0, y: 0)) == nil)
    }

    @Test func aTilesTableAndMbutilsOwnViewAreReadAsBlobs() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let table = try MBTilesReader(path: file(tilesTable, in: directory))
        #expect(table.blobRows?.table == "tiles")
        #expect(try table.tile(TileID(z: 0, x: 0, y: 0)) == large)
        #expect(try table.tile(TileID(z: 1, x: 1, y: 1)) == [1, 2, 3])
        #expect(try table.tile(TileID(z: 1, x: 0, y: 0)) == nil)

        // mbutil's words for the view: other case and spacing, a semicolon.
        let mbutil = try MBTilesReader(path: file("""
            CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT);
            CREATE TABLE images (tile_data blob, tile_id text);
            create view tiles as select map.zoom_level as zoom_level, map.tile_column as tile_column,
              map.tile_row as tile_row, images.tile_data as tile_data from map
              join images on images.tile_id = map.tile_id;
            INSERT INTO images VALUES (zeroblob(40000), 'a'), (x'010203', 'b');
            INSERT INTO map VALUES (0, 0, 0, 'a'), (1, 1, 0, 'b');
            """, in: directory, name: "mbutil.mbtiles"))
        #expect(mbutil.blobRows?.table == "images")
        #expect(try mbutil.tile(TileID(z: 0, x: 0, y: 0)) == large)
        #expect(try mbutil.tile(TileID(z: 1, x: 1, y: 1)) == [1, 2, 3])
        #expect(try mbutil.tile(TileID(z: 2, x: 0, y: 0)) == nil)
    }

    /// A `rowid` that is a column of the file's own, plain or generated (here pointing at the
    /// other tile), a generated column before `tile_data` (SQLite 3.40's blob I/O then opens
    /// the wrong column), a table without rowids, a view of another shape or one that only
    /// looks like mbutil's (a no-break space is part of a name to SQLite), a UTF-16 file:
    /// read through the view or table, rightly. (Found by a review: each gave the other tile
    /// or other bytes through blob I/O.)
    @Test func otherLayoutsAreReadThroughTheirTiles() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let layouts = [
            "rowid column": """
                CREATE TABLE tiles (rowid INTEGER, zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
                INSERT INTO tiles VALUES (2, 0, 0, 0, zeroblob(40000)), (1, 1, 1, 0, x'010203');
                """,
            "without rowid": """
                CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB,
                    PRIMARY KEY (zoom_level, tile_column, tile_row)) WITHOUT ROWID;
                INSERT INTO tiles VALUES (0, 0, 0, zeroblob(40000)), (1, 1, 0, x'010203');
                """,
            "generated rowid": """
                CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB,
                    rowid INTEGER GENERATED ALWAYS AS (2 - zoom_level) VIRTUAL);
                INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (0, 0, 0, zeroblob(40000)), (1, 1, 0, x'010203');
                """,
            "generated column first": """
                CREATE TABLE tiles (zoom_level INTEGER, g BLOB GENERATED ALWAYS AS (x'ee') VIRTUAL, tile_column INTEGER,
                    tile_row INTEGER, tile_data BLOB, extra BLOB);
                INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data, extra)
                    VALUES (0, 0, 0, zeroblob(40000), x'0bad'), (1, 1, 0, x'010203', x'0bad');
                """,
            "no-break space": """
                CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT);
                CREATE TABLE images (tile_data BLOB, tile_id TEXT, "tile_data\u{A0}as" BLOB);
                CREATE VIEW tiles AS SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column,
                    map.tile_row AS tile_row, images.tile_data\u{A0}as tile_data FROM map JOIN images ON images.tile_id = map.tile_id;
                INSERT INTO images VALUES (x'ff', 'a', zeroblob(40000)), (x'ff', 'b', x'010203');
                INSERT INTO map VALUES (0, 0, 0, 'a'), (1, 1, 0, 'b');
                """,
            "utf-16": """
                PRAGMA encoding = 'UTF-16le';
                \(tilesTable)
                """,
            "another view": """
                CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT);
                CREATE TABLE images (tile_data BLOB, tile_id TEXT, other BLOB);
                CREATE VIEW tiles AS SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column,
                    map.tile_row AS tile_row, images.other AS tile_data FROM map JOIN images ON images.tile_id = map.tile_id;
                INSERT INTO images VALUES (x'ff', 'a', zeroblob(40000)), (x'ff', 'b', x'010203');
                INSERT INTO map VALUES (0, 0, 0, 'a'), (1, 1, 0, 'b');
                """,
        ]
        for (name, sql) in layouts {
            let reader = try MBTilesReader(path: file(sql, in: directory, name: name + ".mbtiles"))
            #expect(reader.blobRows == nil, "\(name)")
            #expect(try reader.tile(TileID(z: 0, x: 0, y: 0)) == large, "\(name)")
            #expect(try reader.tile(TileID(z: 1, x: 1, y: 1)) == [1, 2, 3], "\(name)")
        }
    }

    /// A value that is no blob (NULL, a number) cannot be opened as one: it is read as the
    /// query reads it, so the tile is what it was before blob reads (no bytes; the number's
    /// text); text is read as its bytes, as the query reads it.
    @Test func valuesThatAreNoBlobsAreReadAsBefore() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let reader = try MBTilesReader(path: file("""
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            INSERT INTO tiles VALUES (0, 0, 0, NULL), (1, 0, 0, 42), (1, 1, 0, x'010203'), (2, 0, 0, 'AB');
            """, in: directory))
        #expect(reader.blobRows != nil)
        #expect(try reader.tile(TileID(z: 0, x: 0, y: 0)) == [])
        #expect(try reader.tile(TileID(z: 1, x: 0, y: 1)) == Array("42".utf8))
        #expect(try reader.tile(TileID(z: 1, x: 1, y: 1)) == [1, 2, 3])
        #expect(try reader.tile(TileID(z: 2, x: 0, y: 3)) == Array("AB".utf8))  // text is read as stored: UTF-8
    }

    /// A blob handle outside a transaction is closed after each read: it would keep a read
    /// transaction of its own, and a writer that will not wait could not commit. (A reader
    /// without a held read does not read blobs: its rowid and bytes would come from two
    /// snapshots.)
    @Test func noHandleOutlivesARead() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try file(tilesTable, in: directory)
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try reader.readBlob(table: "tiles", column: "tile_data", rowid: 1) == large)
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        writer.waitsForWriters = false
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO tiles VALUES (2, 0, 0, x'02'); COMMIT")
        #expect(try reader.readBlob(table: "tiles", column: "tile_data", rowid: 3) == [2])
        #expect(throws: SQLiteError.self) { try reader.readBlob(table: "tiles", column: "tile_data", rowid: 4) }
    }
}
