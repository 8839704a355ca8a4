import TileMath

/// Anything that gives tiles: a folder, an MBTiles or PMTiles file, a remote server, code.
///
/// One narrow method, asynchronous because some sources wait on the network. Sources
/// answer only for the tiles they have (`noTile` otherwise); zoom ranges, bounds,
/// overzoom and fallbacks are applied around them by `TileLayer`.
public protocol TileSource: Sendable {
    var metadata: TileSetMetadata { get }
    func tile(_ request: TileRequest) async throws -> TileResult
}

/// A source that can read a tile from local storage on the calling thread without waiting
/// (a file, a database): a server's connection thread asks it before starting a task for the
/// tile, as nginx reads files.
public protocol LocalTileSource: TileSource {
    /// The tile, read at once; nil when it cannot be without waiting (a writer's lock on the
    /// file, something other than a regular file, a read error): `tile(_:)` then answers.
    func tileNow(_ request: TileRequest) -> TileResult?
}

/// Errors of tile sources and stores; each names the file, tile or value.
public enum TileSourceError: Error, Equatable, Sendable, CustomStringConvertible {
    case notFound(path: String)
    case unreadable(path: String, reason: String)
    case corrupt(path: String, reason: String)
    case unwritable(path: String, reason: String)
    case invalid(String)

    public var description: String {
        switch self {
        case .notFound(let path): return "\(path): no such file or directory"
        case .unreadable(let path, let reason): return "\(path): cannot read: \(reason)"
        case .corrupt(let path, let reason): return "\(path): \(reason)"
        case .unwritable(let path, let reason): return "\(path): cannot write: \(reason)"
        case .invalid(let message): return message
        }
    }

    /// True when the store could not be read or reached (missing, a disk or network
    /// failure), rather than read and found wrong.
    public var isIO: Bool {
        switch self {
        case .notFound, .unreadable: return true
        case .corrupt, .unwritable, .invalid: return false
        }
    }

    /// What is wrong, without the file's path (for answers that leave the machine).
    public var reasonWithoutPath: String {
        switch self {
        case .notFound: return "the store is missing"
        case .unreadable(_, let reason): return "the store cannot be read: \(reason)"
        case .corrupt(_, let reason): return "the store is damaged: \(reason)"
        case .unwritable(_, let reason): return "cannot write: \(reason)"
        case .invalid(let message): return message
        }
    }
}
