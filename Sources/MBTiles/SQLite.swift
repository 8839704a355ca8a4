import Foundation
internal import CSQLite

/// An SQLite failure: the result code and SQLite's message, with the file it concerns.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public let path: String
    /// The operating system's `errno` behind an I/O failure (`sqlite3_system_errno`), 0 when none:
    /// SQLite says "database or disk is full" for both a full disk and a size limit; this tells which.
    public var systemErrno: Int32 = 0

    public var description: String { "\(path): \(message) (SQLite \(code))" }

    /// True when the machine failed rather than the file's contents: the disk or quota is full,
    /// the device reports an I/O error, the file cannot be opened, is read-only or not permitted.
    public var isSystemFailure: Bool {
        [SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_NOLFS].contains(code & 0xff)
    }

    /// SQLITE_FULL: the disk (or a `max_page_count`) is full. SQLite gives no errno with it.
    public var isDiskFull: Bool { code & 0xff == SQLITE_FULL }
}

/// `SQLITE_TRANSIENT` is a macro Swift cannot import: it tells SQLite to copy bound bytes.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection, used by one task at a time (opened with `NOMUTEX`).
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    private var statements = [String: OpaquePointer]()
    /// How long a statement may work before its next row; see `timeLimit`.
    private let budget = WorkBudget()

    /// The longest SQLite may work between two rows of a query (or before it ends), or nil
    /// for no limit. A file can hold a view that never ends (`WITH RECURSIVE`, or a table
    /// joined with itself into 10^12 rows): reading it then fails with an error naming the
    /// file instead of running forever. (Time, not instructions: SQLite runs from 20 to some
    /// 200 million instructions a second depending on the query.)
    var timeLimit: Duration? {
        get { budget.limit }
        set { budget.limit = newValue }
    }

    /// False: a statement that meets a writer's lock fails at once (SQLITE_BUSY) instead of
    /// waiting up to 5 s for the commit.
    var waitsForWriters = true {
        didSet { sqlite3_busy_timeout(handle, waitsForWriters ? Self.busyTimeoutMilliseconds : 0) }
    }
    static let busyTimeoutMilliseconds: Int32 = 5000

    /// When the read transaction `holdRead` opened began, or nil when none is open.
    private(set) var readHeldSince: ContinuousClock.Instant?

    /// Opens a read transaction that the next queries share, unless one is open. A query on
    /// its own takes SQLite's shared lock, looks for a hot journal and rereads the file's
    /// change counter, then drops the lock: eight system calls (four `fcntl`, three `stat`,
    /// a `pread`), some 14 µs of a 114 µs read of a 117 KB tile (see README, "Serving,
    /// large tiles past the cache"). Inside the transaction a writer cannot commit, so its
    /// holder ends it soon (`endHeldRead`).
    func holdRead() throws(SQLiteError) {
        guard readHeldSince == nil else { return }
        try execute("BEGIN")
        readHeldSince = .now
    }

    /// Ends the read transaction `holdRead` opened, if any (a query's failure may have ended
    /// it already: SQLite rolls back on some errors), and closes the blob handle it kept open.
    func endHeldRead() {
        closeBlob()
        guard readHeldSince != nil else { return }
        readHeldSince = nil
        if sqlite3_get_autocommit(handle) == 0, sqlite3_exec(handle, "COMMIT", nil, nil, nil) != SQLITE_OK {
            sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
        }
    }

    enum Mode { case readOnly, readWrite, create }

    /// SQLite's process-wide settings, made once before the first connection opens.
    private static let configured: Void = {
        _ = tk_sqlite_stop_memory_statistics()
    }()

    init(path: String, mode: Mode) throws(SQLiteError) {
        Self.configured
        var flags = SQLITE_OPEN_NOMUTEX
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            let systemErrno = db.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close(db)
            throw SQLiteError(code: rc, message: message, path: path, systemErrno: systemErrno)
        }
        handle = db
        self.path = path
        // Readers wait for a writer's commit instead of failing at once.
        sqlite3_busy_timeout(db, Self.busyTimeoutMilliseconds)
        // The budget lives as long as the connection (it is a stored property), so the
        // unretained pointer stays valid for every call.
        sqlite3_progress_handler(db, WorkBudget.granularity, { context in
            guard let context else { return 0 }
            return Unmanaged<WorkBudget>.fromOpaque(context).takeUnretainedValue().isOver ? 1 : 0
        }, Unmanaged.passUnretained(budget).toOpaque())
    }

    deinit {
        closeBlob()
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// The one place SQLite result codes become errors.
    func check(_ rc: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE else { throw failure(rc) }
    }

    /// The error of a call that returned `rc`, with the connection's message and errno.
    private func failure(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), path: path, systemErrno: sqlite3_system_errno(handle))
    }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "error"
            sqlite3_free(error)
            throw SQLiteError(code: rc, message: message, path: path, systemErrno: sqlite3_system_errno(handle))
        }
    }

    /// Runs a prepared (and cached) statement with bound values, calling `row` for each row.
    func query(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteRow) throws -> Void = { _ in }) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            switch value {
            case .integer(let v): try check(sqlite3_bind_int64(statement, position, Int64(v)))
            case .text(let v): try check(sqlite3_bind_text(statement, position, v, -1, transient))
            case .blob(let v):
                try check(v.withUnsafeBytes { sqlite3_bind_blob(statement, position, $0.baseAddress, Int32($0.count), transient) })
            case .null: try check(sqlite3_bind_null(statement, position))
            }
        }
        while true {
            budget.start()
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return }
            if rc == SQLITE_INTERRUPT, let limit = timeLimit, budget.isOver {
                throw SQLiteError(code: rc, message: "gave up after \(limit) without a row from SQLite (a view that never ends?)", path: path)
            }
            try check(rc)
            try row(SQLiteRow(statement: statement))
        }
    }

    /// The incremental-blob handle `readBlob` left open, and the table and column it reads.
    private var openBlob: (handle: OpaquePointer, table: String, column: String)?

    /// The bytes of `table.column` in the row `rowid`, read with SQLite's incremental blob I/O
    /// straight into an array of their size. A query's `sqlite3_column_blob` copies a value
    /// out of SQLite's page cache into the statement's memory, and `SQLiteRow.blob` copies it
    /// again into an array: for a 117 KB tile, 26.3 µs against 22.5 µs read this way. While
    /// a held read lasts the handle stays open and moves from row to row
    /// (`sqlite3_blob_reopen`, no new statement); `endHeldRead` closes it, since an open
    /// handle keeps its read transaction. Fails (and closes the handle) when the row is gone
    /// or its value is neither a blob nor text.
    func readBlob(table: String, column: String, rowid: Int64) throws(SQLiteError) -> [UInt8] {
        if let open = openBlob, open.table != table || open.column != column { closeBlob() }
        let blob: OpaquePointer
        if let open = openBlob {
            let rc = sqlite3_blob_reopen(open.handle, rowid)
            guard rc == SQLITE_OK else { throw blobFailure(rc) }
            blob = open.handle
        } else {
            var opened: OpaquePointer?
            let rc = sqlite3_blob_open(handle, "main", table, column, rowid, 0, &opened)
            guard rc == SQLITE_OK, let opened else {
                let error = failure(rc)
                sqlite3_blob_close(opened)
                throw error
            }
            openBlob = (opened, table, column)
            blob = opened
        }
        let count = Int(sqlite3_blob_bytes(blob))
        var rc = SQLITE_OK
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { rc = sqlite3_blob_read(blob, buffer.baseAddress, Int32(count), 0) }
            initialized = rc == SQLITE_OK ? count : 0
        }
        guard rc == SQLITE_OK else { throw blobFailure(rc) }
        if readHeldSince == nil { closeBlob() }  // its read transaction would last
        return bytes
    }

    /// The error of a failed call on the open blob handle, which is closed: SQLite leaves a
    /// handle that failed to move or read unusable.
    private func blobFailure(_ rc: Int32) -> SQLiteError {
        let error = failure(rc)
        closeBlob()
        return error
    }

    private func closeBlob() {
        guard let open = openBlob else { return }
        openBlob = nil
        sqlite3_blob_close(open.handle)
    }

    /// Whether `sql` compiles on this connection's file (the statement is kept for `query`).
    func compiles(_ sql: String) -> Bool {
        (try? prepared(sql)) != nil
    }

    /// True inside a transaction: a held read that an error inside SQLite rolled back is
    /// no longer one.
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil))
        statements[sql] = statement!
        return statement!
    }
}

/// The deadline of the current step, checked by SQLite's progress handler every
/// `granularity` instructions (well under a millisecond). Used only by its connection's
/// thread, inside `sqlite3_step`.
private final class WorkBudget {
    static let granularity: Int32 = 10_000
    var limit: Duration?
    private var deadline: UInt64 = .max

    /// Starts the clock for the next row.
    func start() {
        guard let limit else { deadline = .max; return }
        let (seconds, attoseconds) = limit.components
        // At most 2^32 s (136 years): no overflow below.
        let nanoseconds = min(UInt64(clamping: seconds), 1 << 32) * 1_000_000_000 + UInt64(clamping: attoseconds / 1_000_000_000)
        deadline = Self.now() + nanoseconds
    }

    var isOver: Bool { deadline != .max && Self.now() > deadline }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

enum SQLiteValue {
    case integer(Int)
    case text(String)
    case blob([UInt8])
    case null
}

/// The current row of a stepping statement; valid only inside the row callback.
struct SQLiteRow {
    let statement: OpaquePointer

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    /// An integer or a real (not NULL, text or a blob).
    func isNumber(_ column: Int32) -> Bool { [SQLITE_INTEGER, SQLITE_FLOAT].contains(sqlite3_column_type(statement, column)) }
    func integer(_ column: Int32) -> Int { Int(sqlite3_column_int64(statement, column)) }
    func text(_ column: Int32) -> String? {
        sqlite3_column_text(statement, column).map { String(cString: $0) }
    }
    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
