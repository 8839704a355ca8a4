import Foundation
import Testing
import CSQLite
import CMicroHTTPD
import CMicroHTTPDShim

/// The C libraries that later layers use are linked and answer: SQLite in WAL mode on a
/// real file, and libmicrohttpd bound to 127.0.0.1 on a port the OS picks.
@Suite struct CLibrariesTests {
    @Test func sqliteOpensAFileInWALMode() throws {
        #expect(sqlite3_libversion_number() >= 3_031_000)
        // As TileKit's MBTiles module does before its first connection (see
        // MBTilesTests.sqliteKeepsNoMemoryStatistics): whichever opens SQLite first sets it.
        _ = tk_sqlite_stop_memory_statistics()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-\(UUID()).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: path + "-wal"); try? FileManager.default.removeItem(atPath: path + "-shm") }
        var db: OpaquePointer?
        #expect(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        #expect(sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &statement, nil) == SQLITE_OK)
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        #expect(String(cString: sqlite3_column_text(statement, 0)) == "wal")
        sqlite3_finalize(statement)
    }

    @Test func microhttpdBindsLoopbackOnAnOSPort() throws {
        #expect(String(cString: MHD_get_version()).hasPrefix("0.9"))
        // MHD needs a handler; this one refuses every request.
        let handler: MHD_AccessHandlerCallback = { _, _, _, _, _, _, _, _ in MHD_Result(rawValue: 0)! }
        // Called outside #require: inside the macro a C string temporary may already be freed
        // when C reads it.
        func start(_ address: String) -> OpaquePointer? {
            address.withCString { text in
                var settings = tk_mhd_settings(ipv4_address: text, port: 0, threads: 1, connection_limit: 64, per_client_limit: 64,
                                               idle_timeout_seconds: 5, listen_backlog: 16)
                return tk_mhd_start(&settings, handler, nil, nil, nil, nil)
            }
        }
        let started = start("127.0.0.1")
        let daemon = try #require(started)
        defer { tk_mhd_stop(daemon) }
        #expect(tk_mhd_port(daemon) > 0)
        let refused = start("not an address")
        #expect(refused == nil)
    }
}
