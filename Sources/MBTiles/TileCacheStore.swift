import Foundation
import Synchronization
public import TileMath

/// A disk cache of fetched tiles: an MBTiles file (so `tilekit info`, GDAL and mbutil can
/// open it) with a `tile_cache` table beside the tiles holding each tile's freshness,
/// validators and last use. Shared by every task through one connection behind a lock;
/// no SQLite handle crosses an `await`.
public final class TileCacheStore: Sendable {
    public let path: String
    /// The connection, used under this lock only.
    private let connection: Mutex<ConnectionHolder>

    /// One cached tile.
    public struct Entry: Hashable, Sendable {
        public var bytes: [UInt8]
        /// When the tile should be revalidated.
        public var expiresAt: EpochSeconds
        public var etag: String?
        public var lastModified: String?
        public var fetchedAt: EpochSeconds
    }

    public struct Summary: Hashable, Sendable {
        public var tiles: Int
        public var bytes: Int
        public var expired: Int
        public var oldestFetch: EpochSeconds?
        public var newestFetch: EpochSeconds?
    }

    public init(path: String) throws(SQLiteError) {
        self.path = path
        let db = try SQLiteConnection(path: path, mode: .create)
        try db.execute(MBTiles.schema)
        try db.execute("""
            CREATE TABLE IF NOT EXISTS tile_cache (
                zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL,
                fetched_at REAL NOT NULL, expires_at REAL NOT NULL, etag TEXT, last_modified TEXT,
                last_access REAL NOT NULL, size INTEGER NOT NULL,
                PRIMARY KEY (zoom_level, tile_column, tile_row));
            CREATE INDEX IF NOT EXISTS tile_cache_access ON tile_cache (last_access);
            INSERT OR IGNORE INTO metadata (name, value) VALUES ('name', 'tilekit cache'), ('type', 'baselayer'), ('version', '1.3');
            PRAGMA synchronous=NORMAL;
            """)
        connection = Mutex(ConnectionHolder(db))
    }

    /// The cached tile, or nil. Marks it used (at most once a minute, to spare writes).
    public func entry(_ tile: TileID, now: EpochSeconds = Date().timeIntervalSince1970) throws -> Entry? {
        try connection.withLock { holder in
            let db = holder.db
            var entry: Entry?
            var lastAccess = 0.0
            try db.query("""
                SELECT images.tile_data, c.expires_at, c.etag, c.last_modified, c.fetched_at, c.last_access
                FROM tile_cache c JOIN map ON map.zoom_level = c.zoom_level AND map.tile_column = c.tile_column AND map.tile_row = c.tile_row
                JOIN images ON images.tile_id = map.tile_id
                WHERE c.zoom_level = ? AND c.tile_column = ? AND c.tile_row = ?
                """, key(tile)) { row in
                entry = Entry(bytes: row.blob(0), expiresAt: Double(row.integer(1)), etag: row.text(2), lastModified: row.text(3),
                              fetchedAt: Double(row.integer(4)))
                lastAccess = Double(row.integer(5))
            }
            if entry != nil, now - lastAccess > 60 {
                try db.query("UPDATE tile_cache SET last_access = ? WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                             [Self.seconds(now)] + key(tile))
            }
            return entry
        }
    }

    /// Stores a fetched tile with its freshness; one transaction, so a crash keeps the old copy or the new.
    public func store(_ tile: TileID, bytes: [UInt8], expiresAt: EpochSeconds, etag: String?, lastModified: String?,
                      now: EpochSeconds = Date().timeIntervalSince1970) throws {
        try connection.withLock { holder in
            let db = holder.db
            let id = MBTiles.contentID(bytes)
            try db.execute("BEGIN IMMEDIATE")
            do {
                try db.query("INSERT OR IGNORE INTO images (tile_data, tile_id) VALUES (?, ?)", [.blob(bytes), .text(id)])
                try db.query("INSERT OR REPLACE INTO map (zoom_level, tile_column, tile_row, tile_id) VALUES (?, ?, ?, ?)", key(tile) + [.text(id)])
                try db.query("""
                    INSERT OR REPLACE INTO tile_cache (zoom_level, tile_column, tile_row, fetched_at, expires_at, etag, last_modified, last_access, size)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, key(tile) + [Self.seconds(now), Self.seconds(expiresAt), etag.map(SQLiteValue.text) ?? .null,
                                      lastModified.map(SQLiteValue.text) ?? .null, Self.seconds(now), .integer(bytes.count)])
                try db.execute("COMMIT")
            } catch {
                try? db.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// After a 304: the copy is good until `expiresAt`.
    public func refresh(_ tile: TileID, expiresAt: EpochSeconds, now: EpochSeconds = Date().timeIntervalSince1970) throws {
        try connection.withLock { holder in
            try holder.db.query("UPDATE tile_cache SET expires_at = ?, fetched_at = ?, last_access = ? WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                                [Self.seconds(expiresAt), Self.seconds(now), Self.seconds(now)] + key(tile))
        }
    }

    /// Removes one tile (the upstream now says `no-store`); its image goes when no other
    /// tile shares it. One transaction.
    public func remove(_ tile: TileID) throws {
        try connection.withLock { holder in
            let db = holder.db
            try db.execute("BEGIN IMMEDIATE")
            do {
                var ids = [String]()
                try db.query("SELECT tile_id FROM map WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?", key(tile)) { row in
                    if let id = row.text(0) { ids.append(id) }
                }
                try db.query("DELETE FROM tile_cache WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?", key(tile))
                try db.query("DELETE FROM map WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?", key(tile))
                for id in ids {
                    try db.query("DELETE FROM images WHERE tile_id = ? AND NOT EXISTS (SELECT 1 FROM map WHERE tile_id = ?)", [.text(id), .text(id)])
                }
                try db.execute("COMMIT")
            } catch {
                try? db.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// Removes every tile (Google's `clearTileCache`, MapKit's `reloadData`).
    public func clear() throws {
        try connection.withLock { holder in
            try holder.db.execute("BEGIN IMMEDIATE; DELETE FROM tile_cache; DELETE FROM map; DELETE FROM images; COMMIT;")
            try holder.db.execute("VACUUM")
        }
    }

    /// Removes tiles fetched more than `maxAge` ago, then the least recently used until the
    /// stored tiles take at most `maxBytes`. Returns how many tiles went.
    @discardableResult
    public func prune(maxAge: Duration? = nil, maxBytes: Int? = nil, now: EpochSeconds = Date().timeIntervalSince1970) throws -> Int {
        try connection.withLock { holder in
            let db = holder.db
            var removed = 0
            try db.execute("BEGIN IMMEDIATE")
            do {
                var victims = [(Int, Int, Int)]()
                if let maxAge {
                    try db.query("SELECT zoom_level, tile_column, tile_row FROM tile_cache WHERE fetched_at < ?", [Self.seconds(now - maxAge.seconds)]) { row in
                        victims.append((row.integer(0), row.integer(1), row.integer(2)))
                    }
                }
                if let maxBytes {
                    var total = 0
                    try db.query("SELECT sum(size) FROM tile_cache") { row in total = row.integer(0) }
                    let aged = Set(victims.map { "\($0.0)/\($0.1)/\($0.2)" })
                    try db.query("SELECT zoom_level, tile_column, tile_row, size FROM tile_cache ORDER BY last_access, fetched_at") { row in
                        let key = (row.integer(0), row.integer(1), row.integer(2))
                        if aged.contains("\(key.0)/\(key.1)/\(key.2)") { total -= row.integer(3); return }
                        if total > maxBytes {
                            victims.append(key)
                            total -= row.integer(3)
                        }
                    }
                }
                for (z, x, row) in victims {
                    let k: [SQLiteValue] = [.integer(z), .integer(x), .integer(row)]
                    try db.query("DELETE FROM tile_cache WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?", k)
                    try db.query("DELETE FROM map WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?", k)
                    removed += 1
                }
                try db.execute("DELETE FROM images WHERE tile_id NOT IN (SELECT tile_id FROM map)")
                try db.execute("COMMIT")
            } catch {
                try? db.execute("ROLLBACK")
                throw error
            }
            return removed
        }
    }

    public func summary(now: EpochSeconds = Date().timeIntervalSince1970) throws -> Summary {
        try connection.withLock { holder in
            var summary = Summary(tiles: 0, bytes: 0, expired: 0)
            try holder.db.query("SELECT count(*), coalesce(sum(size), 0), coalesce(sum(expires_at < ?), 0), min(fetched_at), max(fetched_at) FROM tile_cache",
                                [Self.seconds(now)]) { row in
                summary = Summary(tiles: row.integer(0), bytes: row.integer(1), expired: row.integer(2),
                                  oldestFetch: row.isNull(3) ? nil : Double(row.integer(3)),
                                  newestFetch: row.isNull(4) ? nil : Double(row.integer(4)))
            }
            return summary
        }
    }

    /// Seconds since 1970 as stored (whole seconds). Times come from upstream headers, so
    /// they are clamped (to year ~33000) rather than trusted to fit an Int; NaN is 0.
    static func seconds(_ value: Double) -> SQLiteValue {
        guard value.isFinite else { return .integer(value == .infinity ? 1 << 40 : 0) }
        return .integer(Int(min(max(value, 0), Double(1 << 40)).rounded(.down)))
    }

    private func key(_ tile: TileID) -> [SQLiteValue] { [.integer(tile.z), .integer(tile.x), .integer(tile.tmsY)] }
}

/// Holds the cache's connection inside its Mutex (the connection is not Sendable; the
/// lock makes each use exclusive).
private struct ConnectionHolder: @unchecked Sendable {
    let db: SQLiteConnection
    init(_ db: SQLiteConnection) { self.db = db }
}
