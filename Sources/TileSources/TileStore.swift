import Foundation
public import TileMath
import MBTiles
import PMTiles

/// The three kinds of tile store on disk, told apart by what a path is.
public enum TileStoreKind: String, Sendable, CaseIterable {
    case folder, mbtiles, pmtiles

    /// A directory is a folder pyramid; otherwise the file's first bytes decide
    /// (SQLite's or PMTiles' magic), then its extension (for files still to be written).
    public init(path: String) throws(TileSourceError) {
        if TileStore.isURL(path) {
            guard HTTPPMTilesSource.accepts(path) else { throw TileStore.notAStoreURL(path) }
            self = .pmtiles
            return
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { self = .folder; return }
            let head = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: path)).read(upToCount: 16)) ?? Data()
            if head.starts(with: Array("SQLite format 3".utf8)) { self = .mbtiles; return }
            if head.starts(with: Array("PMTiles".utf8)) { self = .pmtiles; return }
            throw .corrupt(path: path, reason: "not a tile store: neither a folder, an MBTiles (SQLite) nor a PMTiles file")
        }
        try self.init(name: path)
    }

    /// The kind a path's name asks for (for a store still to be written): `.mbtiles`
    /// (or `.sqlite`, `.db`), `.pmtiles`, or no extension for a folder.
    public init(name path: String) throws(TileSourceError) {
        guard !TileStore.isURL(path) else { throw TileStore.notWritable(path) }
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "mbtiles", "sqlite", "db": self = .mbtiles
        case "pmtiles": self = .pmtiles
        case "": self = .folder
        default:
            throw .invalid("\(path): not a folder, .mbtiles or .pmtiles store")
        }
    }
}

/// Opening stores for reading, writing and copying.
public enum TileStore {
    /// Opens a folder, MBTiles or PMTiles store for reading; an `http://` or `https://` URL
    /// of a `.pmtiles` file is read with range requests (`HTTPPMTilesSource`, opened here
    /// with a request that blocks this thread).
    public static func open(_ path: String, scheme: TileScheme? = nil) throws(TileSourceError) -> any TileSource {
        if isURL(path) {
            guard HTTPPMTilesSource.accepts(path) else { throw notAStoreURL(path) }
            return try HTTPPMTilesSource(url: path)
        }
        guard FileManager.default.fileExists(atPath: path) else { throw .notFound(path: path) }
        switch try TileStoreKind(path: path) {
        case .folder: return try FolderTileSource(directory: URL(fileURLWithPath: path), scheme: scheme)
        case .mbtiles: return try MBTilesSource(path: path)
        case .pmtiles: return try PMTilesSource(path: path)
        }
    }

    /// Opens a writer for a store; its kind is the one the path names unless given.
    public static func writer(_ path: String, kind: TileStoreKind? = nil, scheme: TileScheme = .xyz,
                              fileExtension: String = "png") throws(TileSourceError) -> any TileStoreWriter {
        guard !isURL(path) else { throw notWritable(path) }
        let resolved: TileStoreKind
        if let kind { resolved = kind } else { resolved = try TileStoreKind(name: path) }
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw .unwritable(path: path, reason: (error as NSError).localizedDescription)
        }
        switch resolved {
        case .folder: return try FolderTileWriter(directory: URL(fileURLWithPath: path), scheme: scheme, fileExtension: fileExtension)
        case .mbtiles: return try MBTilesStoreWriter(path: path)
        case .pmtiles:
            let writer = try PMTilesStoreWriter(path: path)
            // A PMTiles file is laid out whole at the end, so adding to one starts by taking
            // in the tiles it has; the old file stays in place until the new one replaces it.
            if FileManager.default.fileExists(atPath: path) {
                let existing = try PMTilesSource(path: path)
                do {
                    try existing.reader.forEachTile { tile, bytes in try writer.write(tile, bytes: bytes) }
                } catch let error as PMTilesError {
                    throw .corrupt(path: path, reason: error.reason)
                } catch {
                    throw .corrupt(path: path, reason: "\(error)")
                }
            }
            return writer
        }
    }

    /// Calls `body` with every tile of a store and its bytes. A store that turns out to be
    /// broken on the way (a row outside the pyramid, a damaged leaf directory) throws
    /// `TileSourceError.corrupt` naming the file and the value; `body`'s errors pass through.
    public static func forEachTile(in source: any TileSource, _ body: (TileID, [UInt8]) throws -> Void) throws {
        switch source {
        case let mbtiles as MBTilesSource:
            do { try mbtiles.reader.forEachTile(body) } catch let error as MBTilesError {
                throw TileSourceError.corrupt(path: mbtiles.reader.path, reason: error.reason)
            } catch let error as SQLiteError {
                throw TileSourceError(error, path: mbtiles.reader.path)
            }
        case is PMTilesSource, is HTTPPMTilesSource:
            let reader = try pmtilesReader(source)
            do { try reader.forEachTile(body) } catch let error as PMTilesError {
                throw TileSourceError(error, path: reader.path)
            }
        case let folder as FolderTileSource: try folder.forEachTile(body)
        default: throw TileSourceError.invalid("\(source.metadata.name): this source cannot list its tiles")
        }
    }

    /// Tiles and bytes (as many as a copy would write) per zoom. PMTiles runs are counted,
    /// not expanded, so a run of 2^32 tiles costs one step; other stores are read whole.
    public static func statistics(of source: any TileSource) throws -> [Int: (tiles: Int, bytes: Int)] {
        var perZoom = [Int: (tiles: Int, bytes: Int)]()
        guard source is PMTilesSource || source is HTTPPMTilesSource else {
            try forEachTile(in: source) { tile, bytes in
                perZoom[tile.z, default: (0, 0)].tiles += 1
                perZoom[tile.z, default: (0, 0)].bytes += bytes.count
            }
            return perZoom
        }
        // Saturating: a hostile run of 2^32 tiles of 4 GB each must not trap a count.
        func add(_ a: Int, _ b: Int) -> Int { let (sum, overflow) = a.addingReportingOverflow(b); return overflow ? .max : sum }
        func multiply(_ a: Int, _ b: Int) -> Int { let (product, overflow) = a.multipliedReportingOverflow(by: b); return overflow ? .max : product }
        let lastID = PMTilesID.first(ofZoom: TileID.maxZoom + 1)
        let reader = try pmtilesReader(source)
        do {
            try reader.forEachEntry { entry in
                var id = entry.tileID
                let end = min(entry.tileID + UInt64(entry.runLength), lastID)
                while id < end, let z = PMTilesID.zoom(of: id) {
                    let stop = min(end, PMTilesID.first(ofZoom: z + 1))
                    // Below 2^62 (ids of zoom 30 and less): fits an Int.
                    let count = Int(stop - id)
                    perZoom[z, default: (0, 0)].tiles = add(perZoom[z, default: (0, 0)].tiles, count)
                    perZoom[z, default: (0, 0)].bytes = add(perZoom[z, default: (0, 0)].bytes, multiply(count, Int(entry.length)))
                    id = stop
                }
            }
        } catch let error as PMTilesError {
            throw TileSourceError(error, path: reader.path)
        }
        return perZoom
    }

    /// True for an `http://` or `https://` address (which only a `.pmtiles` file may be).
    public static func isURL(_ path: String) -> Bool {
        let lowered = path.prefix(8).lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    static func notWritable(_ path: String) -> TileSourceError {
        .invalid("\(path): a store is written to a file or folder, not a URL")
    }

    static func notAStoreURL(_ path: String) -> TileSourceError {
        .invalid("\(path): only PMTiles files (a URL path ending in .pmtiles) are read over HTTP; tiles by URL template ({z}/{x}/{y}) are a remote source")
    }

    /// The reader of a PMTiles source, local or over HTTP (read whole, blocking).
    private static func pmtilesReader(_ source: any TileSource) throws(TileSourceError) -> PMTilesReader {
        switch source {
        case let local as PMTilesSource: return local.reader
        case let remote as HTTPPMTilesSource: return try remote.wholeFileReader()
        default: throw .invalid("\(source.metadata.name): not a PMTiles source")
        }
    }
}

extension FolderTileSource {
    /// Every tile file, in z, x, y order.
    public func forEachTile(_ body: (TileID, [UInt8]) throws -> Void) throws {
        let fm = FileManager.default
        for zoom in Self.zoomFolders(directory) {
            let zoomURL = directory.appendingPathComponent("\(zoom)")
            let columns = ((try? fm.contentsOfDirectory(atPath: zoomURL.path)) ?? []).compactMap { Int($0) }.sorted()
            for x in columns {
                let columnURL = zoomURL.appendingPathComponent("\(x)")
                var tiles = [(TileID, URL)]()
                for file in (try? fm.contentsOfDirectory(atPath: columnURL.path)) ?? [] {
                    let url = columnURL.appendingPathComponent(file)
                    guard url.pathExtension == fileExtension, let row = Int(url.deletingPathExtension().lastPathComponent),
                          TileID.isValid(z: zoom, x: x, y: row) else { continue }
                    tiles.append((metadata.scheme.tile(z: zoom, x: x, row: row), url))
                }
                for (tile, url) in tiles.sorted(by: { $0.0 < $1.0 }) {
                    guard let data = fm.contents(atPath: url.path) else {
                        throw TileSourceError.unreadable(path: url.path, reason: "cannot read")
                    }
                    try body(tile, Array(data))
                }
            }
        }
    }
}

extension TileSourceError {
    /// A PMTiles failure while reading a store: one reading the bytes (the disk, the
    /// network) is `unreadable`, a damaged file `corrupt`.
    init(_ error: PMTilesError, path: String) {
        if case .io(let reason) = error { self = .unreadable(path: path, reason: reason) } else { self = .corrupt(path: path, reason: error.reason) }
    }

    /// An SQLite failure while reading a store: a read error of the disk is `unreadable`,
    /// anything else (a damaged file, a view that never ends) is `corrupt`.
    init(_ error: SQLiteError, path: String) {
        // SQLITE_IOERR (10) and SQLITE_CANTOPEN (14).
        let reason = "\(error.message) (SQLite \(error.code))"
        self = [10, 14].contains(error.code & 0xFF) ? .unreadable(path: path, reason: reason) : .corrupt(path: path, reason: reason)
    }
}
