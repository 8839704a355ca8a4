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
        // hidden or generated columns neither (`table_info` leaves those out, and SQLite
        // 3.40's blob I/O opens the wrong column when a virtual one comes before
        // `tile_data`), and the table must have one (a WITHOUT ROWID table has none: the
        // query does not compile). Text is read as stored, so a UTF-16 file's would differ
        // from what a query converts to UTF-8. (A column added after the file was opened is
        // not seen: whoever alters the file can change its tiles anyway.)
        var plain = true, encoding = ""
        do {
            try connection.query("PRAGMA table_xinfo(\(candidate.table))") { row in
                let hidden = row.integer(6) != 0
                plain = plain && !hidden && !["rowid", "_rowid_", "oid"].contains(row.text(1)?.lowercased() ?? "")
            }
            try connection.query("PRAGMA encoding") { row in encoding = row.text(0) ?? "" }
        } catch {
            return nil
        }
        guard plain, encoding == "UTF-8", connection.compiles(candidate.rowidQuery) else { return nil }
        return candidate
    }

    /// Lower case, every run of ASCII white space one space, no `;` at the end: the same
    /// view written by mbutil and by TileKit, whose spacing differs. (Only ASCII: to SQLite a
    /// no-break space is part of a name, so "tile_data\u{A0}as" names another column.)
    static func normalized(_ sql: String) -> String {
        let spaces: Set<Character> = [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}", "\r\n"]
        var text = sql.lowercased().split(whereSeparator: { spaces.contains($0) }).joined(separator: " ")
        while text.hasSuffix(";") || text.hasSuffix(" ") { text.removeLast() }
        return text
    }

    /// The bytes of `tile`, with errors of the rowid query thrown (SQLite's, such as a
    /// writer holding the file or the connection's time limit).
    func read(_ tile: TileID, on connection: SQLiteConnection) throws -> Read {
        var rowid: Int64?
        try connection.query(rowidQuery, [.integer(tile.z), .integer(tile.x), .integer(tile.tmsY)]) { row in
            rowid = Int64(row.integer(0))  // the last, as `tile` keeps (a file with two rows for a tile breaks the spec)
        }
        guard let rowid else { return .noRow }
        do {
            return .bytes(try connection.readBlob(table: table, column: "tile_data", rowid: rowid))
        } catch {
            return .notABlob
        }
    }
}
