import Foundation
import Synchronization
import TileMath
import PMTiles

/// A PMTiles v3 file on an HTTP server (a CDN, an object store, nginx), read with range
/// requests as the spec describes (https://github.com/protomaps/PMTiles/blob/main/spec/v3/spec.md):
///
/// - Opening reads the first 16 KiB in one request: the header and the root directory,
///   which the spec keeps there, and usually the metadata (TileKit's and go-pmtiles'
///   writers put it right after the root); metadata that lies further costs one more.
/// - A tile costs one request once the directories on its way are in memory: leaf
///   directories are read when a lookup first needs them and kept, parsed, in a cache
///   bounded by bytes (least recently used dropped first).
/// - Concurrent lookups that need the same leaf, or the same tile bytes, share one request
///   (`InFlight`, keyed by the file's version and the byte range: repeated tiles that a
///   writer stored once are fetched once, too).
/// - The file's ETag and size are remembered from the first answer. When a later answer
///   says the file was replaced (412 to `If-Match`, another ETag or size), the header and
///   every directory are dropped and read again, and the lookup is retried once: old
///   directories are never used with new data. A file that changes again at once is
///   `unavailable` for that request.
///
/// The absence model of remote sources applies: a tile the file lacks is `noTile`; a server
/// that is down, answers 5xx, stalls past the timeout, or lost the file (404 after it was
/// opened) is `unavailable(retryAfter:)`; a damaged directory is thrown as `corrupt`, and an
/// answer that breaks the protocol (a short range, `Range` ignored, a refusal) as `unreadable`.
/// Every number of the file goes through the same checks as a local file's (`PMTilesLayout`),
/// with the file size from `Content-Range`.
///
/// `init(url:)` opens synchronously, for callers that open stores from synchronous code
/// (`TileStore.open`: map projects, the CLI), blocking its thread for at most the timeout
/// times the attempts; `open(url:)` awaits instead. Tiles are read asynchronously. The
/// metadata (name, zooms, tile size) stays the one read when opened, also after a reload.
public final class HTTPPMTilesSource: TileSource {
    public let metadata: TileSetMetadata
    let reader: HTTPRangeReader
    private let state: Mutex<State>
    private let directories: DirectoryCache<RangeKey>
    private let reloads = InFlight<Int, Fetched<Archive>>()
    private let leafLoads = InFlight<RangeKey, Fetched<[PMTilesEntry]>>()
    private let tileLoads = InFlight<RangeKey, Fetched<[UInt8]>>()
    /// The number of the last archive made: each version read gets its own (cache keys).
    private let archives = Atomic<Int>(0)

    /// The bytes read when opening: the header and root directory lie within them.
    static let headLength = Int(PMTilesHeader.rootRegion)

    /// One version of the file, opened: its checked header, root directory and first bytes.
    struct Archive: Sendable {
        let number: Int
        let layout: PMTilesLayout
        let root: [PMTilesEntry]
        let version: RemoteFileVersion
        let head: [UInt8]
    }

    private enum State: Sendable {
        case open(Archive)
        /// Archive `after` was found replaced or gone; the next lookup reads the file again.
        case dropped(after: Int)
    }

    /// A byte range of one version of the file: a directory's key in the cache, and what
    /// concurrent reads share.
    struct RangeKey: Hashable, Sendable {
        var archive: Int
        var offset: UInt64
        var length: Int
    }

    /// A read's outcome once the bytes are judged; `RangeAnswer` with the bytes made useful.
    enum Fetched<Value: Sendable>: Sendable {
        case value(Value)
        case replaced(String)
        case missing(status: Int)
        case unavailable(retryAfter: Duration?, reason: String)

        init(_ answer: RangeAnswer) where Value == [UInt8] {
            switch answer {
            case .bytes(let bytes, _): self = .value(bytes)
            case .replaced(let why): self = .replaced(why)
            case .missing(let status): self = .missing(status: status)
            case .unavailable(let retryAfter, let reason): self = .unavailable(retryAfter: retryAfter, reason: reason)
            }
        }

        func map<T>(_ transform: (Value) throws -> T) rethrows -> Fetched<T> {
            switch self {
            case .value(let value): return .value(try transform(value))
            case .replaced(let why): return .replaced(why)
            case .missing(let status): return .missing(status: status)
            case .unavailable(let retryAfter, let reason): return .unavailable(retryAfter: retryAfter, reason: reason)
            }
        }
    }

    /// True for an `http://` or `https://` URL whose path ends in `.pmtiles` (a query may follow).
    public static func accepts(_ text: String) -> Bool { pmtilesURL(text) != nil }

    static func pmtilesURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty, url.path.lowercased().hasSuffix(".pmtiles") else { return nil }
        return url
    }

    /// An opened file: its first archive and the metadata read with it (see `init(url:)` and
    /// `open(url:)`).
    init(reader: HTTPRangeReader, archive: Archive, storedMetadata: [UInt8], directoryCacheBytes: Int) throws(TileSourceError) {
        self.reader = reader
        directories = DirectoryCache(budget: directoryCacheBytes)
        let name = reader.name
        let json = try Self.checked(name) { () throws(PMTilesError) in try archive.layout.metadata(storedMetadata) }
        let fileName = reader.url.deletingPathExtension().lastPathComponent
        metadata = try PMTilesSource.metadata(header: archive.layout.header, metadataJSON: json, path: name, name: fileName)
        state = Mutex(.open(archive))
    }

    /// The URL without its query, as errors name it.
    public var name: String { reader.name }

    /// Range requests sent so far (every attempt).
    public var rangeRequests: Int { reader.requestCount }

    /// Leaf directories held in memory, and their bytes.
    public var cachedDirectories: (directories: Int, bytes: Int) { directories.statistics }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        let id = request.tile.pmtilesID
        var replacedBefore = false
        while true {
            let archive: Archive
            switch try await currentArchive() {
            case .value(let current): archive = current
            case .unavailable(let retryAfter, _): return .unavailable(retryAfter: retryAfter)
            case .missing, .replaced: return .unavailable(retryAfter: nil)
            }
            switch try await lookup(id, in: archive) {
            case .value(let bytes): return try TileResult.stored(bytes, in: name, tile: request.tile)
            case .unavailable(let retryAfter, _): return .unavailable(retryAfter: retryAfter)
            case .replaced, .missing:
                // Replaced (or removed, perhaps to be replaced): read it again, once.
                drop(archive)
                guard !replacedBefore else { return .unavailable(retryAfter: nil) }
                replacedBefore = true
            }
        }
    }

    /// The tile's bytes in `archive`, nil when it has none.
    private func lookup(_ id: UInt64, in archive: Archive) async throws -> Fetched<[UInt8]?> {
        let layout = archive.layout
        var directory = archive.root
        var bound = layout.ids.upperBound
        for depth in 0...PMTilesLimits.leafDepth {
            let step = try Self.checked(name) { () throws(PMTilesError) in try layout.step(directory, id: id, bound: bound, depth: depth) }
            switch step {
            case .absent: return .value(nil)
            case .tile(let entry):
                let range = layout.tileRange(entry)
                guard range.length <= reader.options.maxBodyBytes else {
                    throw TileSourceError.unreadable(path: name, reason: "tile id \(id) is \(range.length) bytes, more than the limit of \(reader.options.maxBodyBytes)")
                }
                let key = RangeKey(archive: archive.number, offset: range.offset, length: range.length)
                let fetched = try await tileLoads.run(key) { [reader] in
                    Fetched(try await reader.read(offset: range.offset, length: range.length, expecting: archive.version))
                }
                return fetched.map { Optional($0) }
            case .leaf(let pointer, let ids):
                switch try await leaf(pointer, in: archive) {
                case .value(let entries):
                    try Self.checked(name) { () throws(PMTilesError) in try layout.checkLeaf(entries, of: pointer, ids: ids) }
                    directory = entries
                    bound = ids.upperBound
                case let other: return other.map { _ in nil }
                }
            }
        }
        return .value(nil)
    }

    /// A leaf directory, parsed, from the cache or read once for every lookup that needs it.
    private func leaf(_ pointer: PMTilesEntry, in archive: Archive) async throws -> Fetched<[PMTilesEntry]> {
        let name = self.name
        let range = try Self.checked(name) { () throws(PMTilesError) in try archive.layout.leafRange(pointer) }
        let key = RangeKey(archive: archive.number, offset: range.offset, length: range.length)
        if let cached = directories.get(key) { return .value(cached) }
        return try await leafLoads.run(key) { [reader, directories] in
            // Read by a lookup that finished while this one waited for the InFlight actor.
            if let cached = directories.get(key) { return .value(cached) }
            let fetched = Fetched(try await reader.read(offset: range.offset, length: range.length, expecting: archive.version))
            return try fetched.map { bytes in
                let entries = try Self.checked(name) { () throws(PMTilesError) in try archive.layout.leaf(bytes, of: pointer) }
                directories.set(key, entries)
                return entries
            }
        }
    }

    /// The open archive, or the file read again (once for all who ask) after it was dropped.
    private func currentArchive() async throws -> Fetched<Archive> {
        let dropped: Int
        switch state.withLock({ $0 }) {
        case .open(let archive): return .value(archive)
        case .dropped(let after): dropped = after
        }
        return try await reloads.run(dropped) { [self] in
            if case .open(let archive) = state.withLock({ $0 }) { return .value(archive) }
            switch try await reader.read(offset: 0, length: Self.headLength, expecting: nil) {
            case .bytes(let head, let version):
                let archive = try Self.archive(head: head, version: version, number: archives.add(1, ordering: .relaxed).newValue, name: name)
                state.withLock { $0 = .open(archive) }
                return .value(archive)
            case .replaced(let why): return .replaced(why)
            case .missing(let status): return .missing(status: status)
            case .unavailable(let retryAfter, let reason): return .unavailable(retryAfter: retryAfter, reason: reason)
            }
        }
    }

    /// The open archive for a caller that cannot await (a walk of the whole file); a
    /// dropped one is read again, blocking, for this walk only.
    func archiveBlocking() throws(TileSourceError) -> Archive {
        if case .open(let archive) = state.withLock({ $0 }) { return archive }
        return try Self.openBlocking(reader, number: archives.add(1, ordering: .relaxed).newValue)
    }

    /// Forgets `archive` (and every directory) unless it was already forgotten.
    private func drop(_ archive: Archive) {
        let dropped = state.withLock { state -> Bool in
            guard case .open(let current) = state, current.number == archive.number else { return false }
            state = .dropped(after: archive.number)
            return true
        }
        if dropped { directories.removeAll() }
    }

    /// An archive from the first bytes of a file of `version`.
    static func archive(head: [UInt8], version: RemoteFileVersion, number: Int, name: String) throws(TileSourceError) -> Archive {
        try checked(name) { () throws(PMTilesError) in
            let layout = try PMTilesLayout(head: head, fileSize: version.size, file: name)
            let range = layout.rootRange
            // validate() put the root within the first 16 KiB and within the file: within `head`.
            guard range.offset <= UInt64(head.count), range.length <= head.count - Int(range.offset) else {
                throw .invalid(file: name, field: "root directory offset", value: range.offset, reason: "lies beyond the \(head.count) bytes read")
            }
            let root = try layout.root(Array(head[Int(range.offset)..<Int(range.offset) + range.length]))
            return Archive(number: number, layout: layout, root: root, version: version, head: head)
        }
    }

    /// Runs `body`, turning a PMTiles error into the store's error naming the URL.
    static func checked<T>(_ name: String, _ body: () throws(PMTilesError) -> T) throws(TileSourceError) -> T {
        do { return try body() } catch {
            if case .io(let reason) = error { throw .unreadable(path: name, reason: reason) }
            throw .corrupt(path: name, reason: error.reason)
        }
    }
}
