import Foundation
internal import CSQLite

/// An SQLite failure: the result code and SQLite's message, with the file it concerns.
public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public let path: String

    public var description: String { "\(path): \(message) (SQLite \(code))" }
}

/// `SQLITE_TRANSIENT` is a macro Swift cannot import: it tells SQLite to copy bound bytes.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection, used by one task at a time (opened with `NOMUTEX`).
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    private var statements = [String: OpaquePointer]()

    enum Mode { case readOnly, readWrite, create }

    init(path: String, mode: Mode) throws(SQLiteError) {
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
            sqlite3_close(db)
            throw SQLiteError(code: rc, message: message, path: path)
        }
        handle = db
        self.path = path
        // Readers wait for a writer's commit instead of failing at once.
        sqlite3_busy_timeout(db, 5000)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// The one place SQLite result codes become errors.
    func check(_ rc: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE else {
            throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)), path: path)
        }
    }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        var error: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &error)
        if rc != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "error"
            sqlite3_free(error)
            throw SQLiteError(code: rc, message: message, path: path)
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
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return }
            try check(rc)
            try row(SQLiteRow(statement: statement))
        }
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil))
        statements[sql] = statement!
        return statement!
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
