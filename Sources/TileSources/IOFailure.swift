import Foundation
import MBTiles
import PMTiles

/// Failures of the machine rather than of the data (a full disk or quota, an I/O error, a
/// read-only file system, a permission), told in words ("no space left on device") whatever
/// layer reported them: an `errno`, a Foundation file error (`CocoaError` 640 is a full disk),
/// an SQLite result code, or a TileKit error that already carries the words.
public enum IOFailure {
    /// The cause in words when `error` is a failure of the machine; nil for anything else
    /// (a corrupt file, a bad value), which is the data's fault.
    public static func cause(of error: any Error) -> String? {
        switch error {
        case let error as TileSourceError:
            switch error {
            case .unwritable(_, let reason), .unreadable(_, let reason): return reason
            case .notFound: return words(errno: ENOENT)
            case .corrupt, .invalid: return nil
            }
        case let error as SQLiteError:
            guard error.isSystemFailure else { return nil }
            if error.systemErrno != 0 { return words(errno: error.systemErrno) }
            // SQLite reports a full disk as SQLITE_FULL without an errno ("database or disk is
            // full"; its other meaning, a max_page_count reached, TileKit never sets).
            return error.isDiskFull ? words(errno: ENOSPC) : error.message
        case let error as PMTilesError:
            if case .io(let reason) = error { return reason }
            return nil
        default:
            return foundationCause(error as NSError)
        }
    }

    /// `strerror` in lower case, as the cause inside a sentence: "no space left on device".
    public static func words(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let first = text.first else { return "error \(code)" }
        return first.lowercased() + text.dropFirst()
    }

    /// A Foundation file error: the POSIX error underneath when there is one (Foundation on
    /// Linux keeps it), else the `CocoaError` code's meaning. Never the raw domain and code.
    private static func foundationCause(_ error: NSError) -> String? {
        if error.domain == NSPOSIXErrorDomain, let code = Int32(exactly: error.code) { return words(errno: code) }
        guard error.domain == NSCocoaErrorDomain, fileErrorCodes.contains(error.code) else { return nil }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
           let code = Int32(exactly: underlying.code) {
            return words(errno: code)
        }
        switch CocoaError.Code(rawValue: error.code) {
        case .fileWriteOutOfSpace: return words(errno: ENOSPC)
        case .fileWriteVolumeReadOnly: return words(errno: EROFS)
        case .fileWriteNoPermission, .fileReadNoPermission: return words(errno: EACCES)
        case .fileNoSuchFile, .fileReadNoSuchFile: return words(errno: ENOENT)
        default: return "input/output error (\(error.localizedDescription))"
        }
    }

    /// Foundation's file-system error codes: 4 (no such file), 255-264 (reading), 512-642 (writing).
    private static let fileErrorCodes = Set([4, 255] + Array(256...264) + Array(512...642))
}

extension TileSourceError {
    /// The one I/O error of writing: `destination` (the path the user named, not a scratch
    /// file beside it) could not be written, and why in words. An error that is not the
    /// machine's (a corrupt partial store, a bad value) keeps its description as the reason.
    public static func writing(_ destination: String, _ error: any Error) -> TileSourceError {
        .unwritable(path: destination, reason: IOFailure.cause(of: error) ?? "\(error)")
    }
}
