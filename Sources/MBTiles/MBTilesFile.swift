import Foundation
import Synchronization
import Compression
public import TileMath

/// An MBTiles 1.3 file: tiles and metadata in SQLite, rows in TMS order (`tile_row`
/// counts from the south). See https://github.com/mapbox/mbtiles-spec/blob/master/1.3/spec.md.
///
/// TileKit writes mbutil's deduplicating layout: `map` (zoom, column, row → tile id) and
/// `images` (tile id → bytes), with the spec's `tiles` view over them, so a tile that
/// repeats (ocean, parchment) is stored once. It reads either layout. The journal is in
/// WAL mode: many readers and one writer at once.
public enum MBTiles {
    /// Metadata keys with their meaning in MBTiles 1.3.
    public struct Metadata: Hashable, Sendable {
        public var values: [String: String]
        public init(_ values: [String: String] = [:]) { self.values = values }

        public var name: String? { values["name"] }
        /// `png`, `jpg`, `webp` (or `pbf`).
        public var format: String? { values["format"] }
        public var bounds: String? { values["bounds"] }
        public var center: String? { values["center"] }
        public var minZoom: Int? { values["minzoom"].flatMap { Int($0) } }
        public var maxZoom: Int? { values["maxzoom"].flatMap { Int($0) } }
        public var attribution: String? { values["attribution"] }
        public var description: String? { values["description"] }
    }

    /// 16 KB pages (SQLite's default is 4 KB), set before the first table makes the file: a
    /// tile larger than a page continues in a chain of overflow pages, each one more read, so
    /// a 117 KB tile took 30 reads and now takes 8. `tilekit serve` answering such tiles from
    /// the file used 127-138 µs of CPU a tile with 4 KB pages, 92-101 with 16 KB (64 KB:
    /// 88-91, but the file 9% larger; 8 KB made it larger than 16 KB did). A file of 10-20 KB
    /// tiles grows by 12%. SQLite's own measurements (sqlite.org/intern-v-extern-blob.html)
    /// favour 8-16 KB pages for blobs of this size. A file that exists keeps its pages (a
    /// `VACUUM` in rollback-journal mode would move it to 16 KB; in WAL mode it keeps them).
    static let schema = """
        PRAGMA page_size=16384;
        PRAGMA journal_mode=WAL;
        CREATE TABLE IF NOT EXISTS metadata (name TEXT NOT NULL, value TEXT);
        CREATE UNIQUE INDEX IF NOT EXISTS metadata_name ON metadata (name);
        CREATE TABLE IF NOT EXISTS map (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL, tile_id TEXT NOT NULL);
        CREATE UNIQUE INDEX IF NOT EXISTS map_index ON map (zoom_level, tile_column, tile_row);
        CREATE TABLE IF NOT EXISTS images (tile_data BLOB NOT NULL, tile_id TEXT NOT NULL);
        CREATE UNIQUE INDEX IF NOT EXISTS images_id ON images (tile_id);
        CREATE VIEW IF NOT EXISTS tiles AS
            \(tilesView);
        """

    /// What the `tiles` view of mbutil's layout selects (mbutil's own words, as TileKit writes them).
    static let tilesView = """
        SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column, map.tile_row AS tile_row,
                   images.tile_data AS tile_data
            FROM map JOIN images ON images.tile_id = map.tile_id
        """

    /// A content id for deduplication (the same digest PMTiles uses).
    static func contentID(_ bytes: [UInt8]) -> String { ContentDigest(bytes).text }
}

/// Reads tiles from an MBTiles file: a small pool of read-only connections, so many tasks
/// read at once while one writer may be adding tiles.
public final class MBTilesReader: Sendable {
    public let path: String
    public let metadata: MBTiles.Metadata
    /// Connections not in use. Each is used by one task at a time: it is taken out of this
    /// Mutex-guarded pool for the duration of a query.
    private let pool: Mutex<ConnectionPool>
    /// How long tile lookups on one connection share a read transaction before it ends, so a
    /// writer adding tiles to the file waits at most about this long for its commit (see
    /// `SQLiteConnection.holdRead` for what sharing saves). Between 0 and an hour.
    public let readHold: Duration

    /// Where `tile` reads a tile's bytes with incremental blob I/O, or nil when the file's
    /// layout is not one known to allow it (see `TileBlobRows`).
    let blobRows: TileBlobRows?

    /// Opens a file, checking that it is SQLite with a `tiles` table or view; errors name the path.
    public init(path: String, readHold: Duration = .milliseconds(5)) throws(SQLiteError) {
        self.readHold = min(max(readHold, .zero), .seconds(3600))
        guard FileManager.default.fileExists(atPath: path) else {
            throw SQLiteError(code: 14, message: "no such file", path: path)
        }
        self.path = path
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        var hasTiles = false
        do {
            try connection.query("SELECT count(*) FROM sqlite_master WHERE name = 'tiles' AND type IN ('table', 'view')") { row in
                hasTiles = row.integer(0) > 0
            }
        } catch let error as SQLiteError {
            throw SQLiteError(code: error.code, message: error.message + "; not an MBTiles file", path: path)
        } catch {
            throw SQLiteError(code: 1, message: "\(error)", path: path)
        }
        guard hasTiles else { throw SQLiteError(code: 1, message: "no tiles table; not an MBTiles file", path: path) }
        var values = [String: String]()
        connection.timeLimit = Self.scanTimeLimit
        // A metadata view could also return rows forever: the spec's keys are a dozen.
        do {
            try connection.query("SELECT name, value FROM metadata LIMIT \(Self.metadataRows)") { row in
                if let name = row.text(0) { values[name] = row.text(1) ?? "" }
            }
        } catch let error as SQLiteError where error.code == 9 /* SQLITE_INTERRUPT: the time limit */ {
            throw error
        } catch {
            // No metadata table: every field is optional.
        }
        metadata = MBTiles.Metadata(values)
        blobRows = TileBlobRows.find(in: connection)
        pool = Mutex(ConnectionPool(idle: [ConnectionBox(connection)]))
    }

    /// The longest a query over the whole file (listing tiles, the stored zooms) may work
    /// before its next row: sorting tens of millions of rows of a table without an index.
    static let scanTimeLimit = Duration.seconds(30)
    /// The longest a tile lookup may take; indexes make it well under a millisecond.
    static let lookupTimeLimit = Duration.seconds(2)
    /// Rows of `metadata` read at most.
    static let metadataRows = 10_000

    /// The bytes of a tile, or nil when the file has none. `immediately`: fail at once when a
    /// writer holds the file, and after 50 ms of work (a server's connection thread asks so).
    public func tile(_ tile: TileID, immediately: Bool = false) throws -> [UInt8]? {
        try withConnection(timeLimit: immediately ? .milliseconds(50) : Self.lookupTimeLimit) { connection in
            if immediately { connection.waitsForWriters = false }
            defer { if immediately { connection.waitsForWriters = true } }
            if readHold > .zero { try connection.holdRead() }
            var bytes: [UInt8]?
            do {
                // Only inside a held read: the rowid and the bytes must come from one
                // snapshot of the file (a writer may reuse the rowid of a row it deleted).
                if let blobRows, connection.readHeldSince != nil, connection.inTransaction {
                    switch try blobRows.read(tile, on: connection) {
                    case .bytes(let read): return read
                    case .noRow: return nil
                    case .notABlob: break  // read through the query below, as any other file
                    }
                }
                try connection.query("SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                                     [.integer(tile.z), .integer(tile.x), .integer(tile.tmsY)]) { row in
                    bytes = row.blob(0)
                }
            } catch {
                connection.endHeldRead()
                throw error
            }
            return bytes
        }
    }

    /// Tile count and total bytes per zoom.
    public func statistics() throws -> [(zoom: Int, tiles: Int, bytes: Int)] {
        try withConnection(timeLimit: Self.scanTimeLimit) { connection in
            var result = [(Int, Int, Int)]()
            try connection.query("SELECT zoom_level, count(*), sum(length(tile_data)) FROM tiles GROUP BY zoom_level ORDER BY zoom_level") { row in
                result.append((row.integer(0), row.integer(1), row.integer(2)))
            }
            return result.map { (zoom: $0.0, tiles: $0.1, bytes: $0.2) }
        }
    }

    /// Every tile in the file, in z, x, row order (for copying a whole store). A row
    /// outside the pyramid (zoom_level outside 0-30, tile_column or tile_row outside the
    /// zoom's 0 to 2^z - 1) throws `MBTilesError.invalidTile` naming it: a copy that left
    /// it out silently would not be a copy.
    public func forEachTile(_ body: (TileID, [UInt8]) throws -> Void) throws {
        try withConnection(timeLimit: Self.scanTimeLimit) { connection in
            try connection.query("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY zoom_level, tile_column, tile_row") { row in
                let (z, x, tmsY) = (row.integer(0), row.integer(1), row.integer(2))
                guard TileID.isValid(z: z, x: x, y: tmsY) else {
                    throw MBTilesError.invalidTile(file: path, zoomLevel: z, tileColumn: x, tileRow: tmsY)
                }
                try body(TileID(z: z, x: x, tmsY: tmsY), row.blob(3))
            }
        }
    }

    /// The zoom range of the stored tiles (for files whose metadata lacks it).
    public func storedZoomRange() throws -> ClosedRange<Int>? {
        try withConnection(timeLimit: Self.scanTimeLimit) { connection in
            var range: ClosedRange<Int>?
            try connection.query("SELECT min(zoom_level), max(zoom_level) FROM tiles") { row in
                guard !row.isNull(0) else { return }
                // SQLite orders text and blobs after every number: a zoom_level that is no
                // number comes out as the maximum, and would read as 0, below the minimum.
                for column: Int32 in [0, 1] where !row.isNumber(column) {
                    throw MBTilesError.zoomLevelNotANumber(file: path, value: row.text(column) ?? "")
                }
                range = row.integer(0)...row.integer(1)
            }
            return range
        }
    }

    private func withConnection<T>(timeLimit: Duration, _ body: (SQLiteConnection) throws -> T) throws -> T {
        let box = try pool.withLock { $0.idle.popLast() } ?? ConnectionBox(SQLiteConnection(path: path, mode: .readOnly))
        defer { putBack(box) }
        box.connection.timeLimit = timeLimit
        return try body(box.connection)
    }

    /// Returns a connection to the pool, ending its held read if it is `readHold` old and
    /// otherwise making sure a timer will: the check and the return are one step under the
    /// pool's lock, so the timer either sees the connection in the pool or ran before it.
    private func putBack(_ box: ConnectionBox) {
        let armAfter: Duration? = pool.withLock { pool in
            guard pool.idle.count < 8 else {
                box.connection.endHeldRead()
                return nil
            }
            pool.idle.append(box)
            return pool.endOldHeldReads(of: CollectionOfOne(box), hold: readHold)
        }
        if let armAfter { endHeldReads(after: armAfter) }
    }

    /// Where held reads are ended: a serial queue of its own (so a thread of its own when
    /// needed), not the global queue, whose threads tasks blocked in I/O may all hold.
    private static let holdTimers = DispatchQueue(label: "tilekit.mbtiles.held-reads")

    /// Ends, `delay` from now, the held reads of connections in the pool that are
    /// `readHold` old by then, and arms itself again while younger ones are left; a
    /// connection in use ends its own or arms this when it comes back (`putBack`).
    private func endHeldReads(after delay: Duration) {
        Self.holdTimers.asyncAfter(deadline: .now() + delay.seconds) { [weak self] in
            guard let self else { return }
            let next: Duration? = pool.withLock { pool in
                pool.timerArmed = false
                return pool.endOldHeldReads(of: pool.idle, hold: readHold)
            }
            if let next { endHeldReads(after: next) }
        }
    }
}

/// The connections not in use, and whether a timer to end their held reads is pending.
private struct ConnectionPool {
    var idle: [ConnectionBox]
    var timerArmed = false

    /// Ends the held reads of `boxes` (idle ones) that are `hold` old; for those younger,
    /// when no timer is pending, marks one as armed and returns in how long it should run.
    /// A connection coming back looks only at itself; the timer looks at all.
    mutating func endOldHeldReads(of boxes: some Sequence<ConnectionBox>, hold: Duration) -> Duration? {
        var next: Duration?
        for box in boxes {
            guard let since = box.connection.readHeldSince else { continue }
            let age = since.duration(to: .now)
            if age >= hold { box.connection.endHeldRead() } else { next = min(next ?? hold, hold - age) }
        }
        guard let next, !timerArmed else { return nil }
        timerArmed = true
        return next
    }
}

/// A value in an MBTiles file outside what the spec allows.
public enum MBTilesError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A row of the `tiles` table that names no tile of the pyramid.
    case invalidTile(file: String, zoomLevel: Int, tileColumn: Int, tileRow: Int)
    /// A `zoom_level` of the `tiles` table that is text or bytes (found looking for the stored zooms).
    case zoomLevelNotANumber(file: String, value: String)

    /// The message without the file's name.
    public var reason: String {
        switch self {
        case .invalidTile(_, let z, let x, let row):
            let problem: String
            if !(0...TileID.maxZoom).contains(z) {
                problem = "zoom_level \(z) is outside 0-\(TileID.maxZoom)"
            } else {
                let last = (1 << z) - 1
                problem = (0...last).contains(x) ? "tile_row \(row) is outside 0-\(last) at zoom \(z)" : "tile_column \(x) is outside 0-\(last) at zoom \(z)"
            }
            return "tiles table row zoom_level \(z), tile_column \(x), tile_row \(row): \(problem)"
        case .zoomLevelNotANumber(_, let value):
            return "tiles table: zoom_level \(String(value.prefix(40)).debugDescription) is not a number"
        }
    }

    public var description: String {
        switch self {
        case .invalidTile(let file, _, _, _), .zoomLevelNotANumber(let file, _): return "\(file): \(reason)"
        }
    }
}

/// Carries a connection through the pool; safe because the pool hands each box to one
/// task at a time (see `MBTilesReader.pool`).
private final class ConnectionBox: @unchecked Sendable {
    let connection: SQLiteConnection
    init(_ connection: SQLiteConnection) { self.connection = connection }
}

/// Writes tiles into an MBTiles file (created if missing), deduplicating repeated tiles.
///
/// Writes are grouped into transactions of `batchSize` tiles; each commit is atomic, so a
/// process killed at any moment leaves a valid file holding every tile of the committed
/// batches, which a resumed build finds with `contains`.
public final class MBTilesWriter {
    public let path: String
    let connection: SQLiteConnection
    let batchSize: Int
    private var pending = 0

    public init(path: String, batchSize: Int = 500) throws(SQLiteError) {
        self.path = path
        self.batchSize = batchSize
        connection = try SQLiteConnection(path: path, mode: .create)
        try connection.execute(MBTiles.schema)
        try connection.execute("PRAGMA synchronous=NORMAL")
    }

    public func write(_ tile: TileID, bytes: [UInt8]) throws {
        if pending == 0 { try connection.execute("BEGIN IMMEDIATE") }
        let id = MBTiles.contentID(bytes)
        try connection.query("INSERT OR IGNORE INTO images (tile_data, tile_id) VALUES (?, ?)", [.blob(bytes), .text(id)])
        try connection.query("INSERT OR REPLACE INTO map (zoom_level, tile_column, tile_row, tile_id) VALUES (?, ?, ?, ?)",
                             [.integer(tile.z), .integer(tile.x), .integer(tile.tmsY), .text(id)])
        pending += 1
        if pending >= batchSize { try commit() }
    }

    public func contains(_ tile: TileID) throws -> Bool {
        var found = false
        try connection.query("SELECT 1 FROM map WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                             [.integer(tile.z), .integer(tile.x), .integer(tile.tmsY)]) { _ in found = true }
        return found
    }

    /// Sets metadata values (replacing those with the same name) and commits everything.
    public func finish(metadata: MBTiles.Metadata) throws {
        if pending == 0 { try connection.execute("BEGIN IMMEDIATE") }
        for (name, value) in metadata.values.sorted(by: { $0.key < $1.key }) {
            try connection.query("INSERT OR REPLACE INTO metadata (name, value) VALUES (?, ?)", [.text(name), .text(value)])
        }
        pending = 1
        try commit()
        // Fold the WAL back into the file and leave WAL mode, so the finished store is one
        // self-contained file (readers then need no -wal or -shm beside it). A reader holding
        // the file open can make the switch fail: the file is then still valid, in WAL mode.
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try? connection.execute("PRAGMA journal_mode=DELETE")
    }

    /// Commits the open batch.
    public func commit() throws {
        guard pending > 0 else { return }
        try connection.execute("COMMIT")
        pending = 0
    }

    /// Number of distinct tile images stored (less than the tile count when tiles repeat).
    public func uniqueImageCount() throws -> Int {
        var count = 0
        try connection.query("SELECT count(*) FROM images") { row in count = row.integer(0) }
        return count
    }
}
