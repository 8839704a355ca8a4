import Foundation
import Synchronization
import Testing
import TileMath
import CSQLite
@testable import MBTiles

/// Tile lookups share a read transaction for `readHold` (MBTilesReader): a writer adding
/// tiles to a file with a rollback journal (where readers block a commit) waits for it to
/// end, and no lock outlives the hold on a reader left idle.
@Suite struct HeldReadTests {
    /// An MBTiles file with a rollback journal and the tile 0/0/0.
    func rollbackJournalFile(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("journal.mbtiles").path
        let connection = try SQLiteConnection(path: path, mode: .create)
        try connection.execute("""
            PRAGMA journal_mode = DELETE;
            CREATE TABLE metadata (name TEXT, value TEXT);
            CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);
            INSERT INTO tiles VALUES (0, 0, 0, x'00');
            """)
        return path
    }

    @Test func aWriterCommitsOnceAnIdleReadersHoldEnds() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try rollbackJournalFile(in: directory)
        let reader = try MBTilesReader(path: path, readHold: .milliseconds(1500))
        #expect(try reader.tile(TileID(z: 0, x: 0, y: 0)) == [0])

        // Within the hold the reader's shared lock keeps a writer that will not wait from committing...
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        writer.waitsForWriters = false
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO tiles VALUES (1, 0, 0, x'01')")
        #expect(throws: SQLiteError.self) { try writer.execute("COMMIT") }
        try writer.execute("ROLLBACK")

        // ...and one that waits commits when the hold ends, though the reader is not used again.
        writer.waitsForWriters = true
        let started = ContinuousClock.now
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO tiles VALUES (1, 0, 0, x'01'); COMMIT")
        #expect(ContinuousClock.now - started < .seconds(4))
        // The reader's next lookup is in a new transaction, which sees the commit.
        #expect(try reader.tile(TileID(z: 1, x: 0, y: 1)) == [1])
    }

    @Test func aWriterCommitsWhileReadsGoOn() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try rollbackJournalFile(in: directory)
        let reader = try MBTilesReader(path: path, readHold: .milliseconds(50))
        // Lookups without a pause on a thread of their own (not the test pool's) meanwhile.
        let stop = Mutex(false), lookups = Mutex(0), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while !stop.withLock({ $0 }), (try? reader.tile(TileID(z: 0, x: 0, y: 0))) == [0] { lookups.withLock { $0 += 1 } }
            done.signal()
        }
        // (Each wait gives up after 10 s: a lookup that failed ends the loop.)
        let deadline = ContinuousClock.now + .seconds(10)
        while lookups.withLock({ $0 }) < 100, ContinuousClock.now < deadline { usleep(1000) }
        #expect(lookups.withLock { $0 } >= 100)
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        for row in 0..<5 {
            try writer.execute("BEGIN IMMEDIATE; INSERT INTO tiles VALUES (3, 0, \(row), x'03'); COMMIT")
        }
        let before = lookups.withLock { $0 }
        while lookups.withLock({ $0 }) < before + 100, ContinuousClock.now < deadline + .seconds(10) { usleep(1000) }
        #expect(lookups.withLock { $0 } >= before + 100)
        stop.withLock { $0 = true }
        done.wait()
        #expect(try reader.tile(TileID(z: 3, x: 0, y: 7 - 4)) == [3])
    }

    @Test func aFailedLookupEndsItsTransaction() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("view.mbtiles").path
        let connection = try SQLiteConnection(path: path, mode: .create)
        // A view whose zoom 9 fails to read (malformed JSON), as a damaged file's may.
        try connection.execute("""
            PRAGMA journal_mode = DELETE;
            CREATE TABLE stored (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);
            CREATE VIEW tiles AS SELECT zoom_level, tile_column, tile_row,
                CASE WHEN zoom_level = 9 THEN json('not json') ELSE tile_data END AS tile_data FROM stored;
            INSERT INTO stored VALUES (0, 0, 0, x'00'), (9, 0, 0, x'09');
            """)
        let reader = try MBTilesReader(path: path, readHold: .seconds(60))
        #expect(try reader.tile(TileID(z: 0, x: 0, y: 0)) == [0])
        #expect(throws: SQLiteError.self) { try reader.tile(TileID(z: 9, x: 0, y: 511)) }
        // The failure ended the transaction, so a writer that will not wait commits now
        // rather than after the minute's hold.
        let writer = try SQLiteConnection(path: path, mode: .readWrite)
        writer.waitsForWriters = false
        try writer.execute("BEGIN IMMEDIATE; INSERT INTO stored VALUES (1, 0, 0, x'01'); COMMIT")
    }
}
