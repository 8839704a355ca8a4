import TileMath

/// Where the bytes of an MBTiles file's tiles can be read with incremental blob I/O
/// (`SQLiteConnection.readBlob`, one copy fewer than a query's column): the rowid table that
/// holds them, and a query for the rowid of a tile's row in it. Only for the two layouts
/// whose rows are known: a `tiles` table (GDAL and most tools write one), and mbutil's `map`
/// and `images` tables under the spec's `tiles` view (TileKit writes it). Any other `tiles`
/// view could select its bytes from anywhere, so its files are read through the view.
struct TileBlobRows {
    let table: String
    let rowidQuery: String

    /// What `read` found.
    enum Read {
        case bytes([UInt8])
        /// The file has no row for the tile.
        case noRow
        /// The row's value cannot be read as a blob (NULL, a number) or has just gone: read it
        /// through the `tiles` view or table instead, as for any other layout.
        case notABlob
    }

    /// The layout of the file open on `connection`, if it is one of the two.
    static func find(in connection: SQLiteConnection) -> TileBlobRows? {
        var types = [String: (type: String, sql: String)]()
        try? connection.query("SELECT name, type, sql FROM sqlite_master WHERE name IN ('tiles', 'images', 'map')") { row in
            if let name = row.text(0) { types[name] = (row.text(1) ?? "", row.text(2) ?? "") }
        }
        let candidate: TileBlobRows
        switch types["tiles"]?.type {
        case "table":
            candidate = TileBlobRows(table: "tiles", rowidQuery: "SELECT rowid FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?")
        case "view" where normalized(types["tiles"]?.sql ?? "") == normalized("CREATE VIEW tiles AS \(MBTiles.tilesView)")
                          && types["images"]?.type == "table" && types["map"]?.type == "table":
            // The view's own join, selecting the row of `images` instead of its bytes.
            candidate = TileBlobRows(table: "images", rowidQuery: """
                SELECT images.rowid FROM map JOIN images ON images.tile_id = map.tile_id
                WHERE map.zoom_level = ? AND map.tile_column = ? AND map.tile_row = ?
                """)
        default:
            return nil
        }
        // `rowid` must name the row's own id: not a column called so (the file's to fill),
        // and the table must have one (a WITHOUT ROWID table has none: the query fails).
        var shadowed = false
        do {
            try connection.query("PRAGMA table_info(\(candidate.table))") { row in
                shadowed = shadowed || ["rowid", "_rowid_", "oid"].contains(row.text(1)?.lowercased() ?? "")
            }
            try connection.query(candidate.rowidQuery, [.integer(-1), .integer(-1), .integer(-1)])
        } catch {
            return nil
        }
        return shadowed ? nil : candidate
    }

    /// Lower case, every run of white space one space, no `;` at the end: the same view
    /// written by mbutil and by TileKit, whose whitespace differs.
    static func normalized(_ sql: String) -> String {
        var text = sql.lowercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        while text.hasSuffix(";") || text.hasSuffix(" ") { text.removeLast() }
        return text
    }

    /// The bytes of `tile`, with errors of the rowid query thrown (SQLite's, such as a
    /// writer holding the file or the connection's time limit).
    func read(_ tile: TileID, on connection: SQLiteConnection) throws -> Read {
        var rowid: Int64?
        try connection.query(rowidQuery, [.integer(tile.z), .integer(tile.x), .integer(tile.tmsY)]) { row in
            rowid = Int64(row.integer(0))  // the last row, as the query through the view keeps the last
        }
        guard let rowid else { return .noRow }
        do {
            return .bytes(try connection.readBlob(table: table, column: "tile_data", rowid: rowid))
        } catch {
            return .notABlob
        }
    }
}
