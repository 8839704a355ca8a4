import Foundation
public import Canvas
public import TileMath
import PMTiles

/// A store being built beside its final path, which only appears, whole, when `commit` (or
/// `finish`) renames it into place: the one way TileKit writes a new store (`AtomicFile` is
/// the same for single files). A process killed at
/// any moment leaves no final store, only scratch files named after the destination, which the
/// next staged write of that destination removes (or, when resuming, continues).
///
/// Scratch files beside `DIR/NAME.EXT` (`NAME` without its extension):
/// - the partial store: `.NAME.partial.mbtiles` for MBTiles, and for PMTiles that a later run
///   may resume (PMTiles is laid out whole at the end), with SQLite's `-wal`, `-shm` and
///   `-journal` beside it; `.NAME.partial/` for a folder `DIR/NAME`;
/// - `PMTilesWriter`'s `.NAME.EXT.tiles.tmp` and `.NAME.EXT.tmp` while a PMTiles file is laid out;
/// - the partial store's name + `.old`: the store being replaced while a folder is swapped
///   into place (`AtomicFile.moveIntoPlace`).
///
/// A write that fails (a full disk, an I/O error) discards the partial store at once: keeping
/// it would keep the disk full. Its error is `TileSourceError.unwritable` naming the final path.
public final class StagedStore: TileStoreWriter {
    public let finalPath: String
    public let kind: TileStoreKind
    public let scheme: TileScheme
    public let format: ImageFormat
    public let partialPath: String
    /// True when a partial store from an earlier run was found and is being continued.
    public let resumed: Bool
    /// Whether a later run may continue this one: the partial store survives a kill, and the
    /// store dropped unfinished (a failed write still discards it). A one-shot copy (false)
    /// dropped unfinished removes its scratch files.
    public let resumable: Bool
    /// PMTiles written straight by `PMTilesWriter` (a one-shot copy): no partial store to read.
    private let direct: Bool
    private var writer: (any TileStoreWriter)?
    private var reader: (any TileSource)?
    private var finished = false

    /// - Parameters:
    ///   - resume: continue the partial store a killed run left, if any, instead of starting over.
    ///   - resumable: build so that a later run can resume (PMTiles then goes through an MBTiles
    ///     partial store); a one-shot copy writes PMTiles directly.
    public init(path: String, kind: TileStoreKind? = nil, scheme: TileScheme = .xyz, format: ImageFormat,
                resume: Bool, resumable: Bool = true) throws(TileSourceError) {
        finalPath = path
        if let kind { self.kind = kind } else { self.kind = try TileStoreKind(name: path) }
        self.scheme = scheme
        self.format = format
        self.resumable = resumable
        direct = self.kind == .pmtiles && !resumable
        partialPath = direct ? PMTilesWriter.scratchPaths(for: path).tiles : Self.partialPath(for: path, kind: self.kind)
        let exists = !direct && FileManager.default.fileExists(atPath: partialPath)
        resumed = exists && resume
        Self.removeLeftovers(of: path, kind: self.kind, keepingPartial: resumed)
        if resumed && self.kind == .folder { Self.removeTileScratch(in: partialPath) }
        do {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            if direct {
                writer = try PMTilesStoreWriter(path: path)
            } else if self.kind == .folder {
                writer = try FolderTileWriter(directory: URL(fileURLWithPath: partialPath), scheme: scheme, fileExtension: format.fileExtension)
            } else {
                writer = try MBTilesStoreWriter(path: partialPath)
            }
        } catch {
            Self.removeLeftovers(of: path, kind: self.kind, keepingPartial: resumed)
            throw .writing(path, error)
        }
    }

    deinit {
        if !finished && !resumable { discard() }
    }

    /// `DIR/NAME.EXT` → `DIR/.NAME.partial.mbtiles`; a folder `DIR/NAME` → `DIR/.NAME.partial`.
    public static func partialPath(for path: String, kind: TileStoreKind) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let folder = url.deletingLastPathComponent()
        if kind == .folder { return folder.appendingPathComponent(".\(url.lastPathComponent).partial").path }
        return folder.appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent).partial.mbtiles").path
    }

    /// Every scratch file a staged write of `path` may leave, the partial store first.
    public static func scratchPaths(of path: String, kind: TileStoreKind) -> [String] {
        let partial = partialPath(for: path, kind: kind)
        let pmtiles = PMTilesWriter.scratchPaths(for: path)
        return [partial] + sqliteCompanions.map { partial + $0 }
            + [AtomicFile.oldPath(for: partial), pmtiles.tiles, pmtiles.layout, AtomicFile.temporaryPath(for: path)]
    }

    /// SQLite's files beside a database: the write-ahead log, its index, the rollback journal.
    static let sqliteCompanions = ["-wal", "-shm", "-journal"]

    /// Removes what a killed or failed staged write of `path` left (and, from earlier
    /// versions of TileKit, `.NAME.PID.partial` copies and PID-named PMTiles scratch files).
    /// With `keepingPartial` the partial store and its SQLite files stay, to be continued.
    public static func removeLeftovers(of path: String, kind: TileStoreKind, keepingPartial: Bool) {
        let partial = partialPath(for: path, kind: kind)
        AtomicFile.restoreOld(partial, path)
        let kept = keepingPartial ? Set([partial] + sqliteCompanions.map { partial + $0 }) : []
        for scratch in scratchPaths(of: path, kind: kind) where !kept.contains(scratch) {
            try? FileManager.default.removeItem(atPath: scratch)
        }
        for legacy in legacyLeftovers(of: path) { try? FileManager.default.removeItem(atPath: legacy) }
    }

    /// The `.ROW.EXT.tmp` files of tiles a killed run was writing into a partial folder
    /// (`AtomicFile`'s scratch files), before the folder is continued and put in place.
    static func removeTileScratch(in folder: String) {
        guard let walk = FileManager.default.enumerator(atPath: folder) else { return }
        for case let relative as String in walk {
            let name = URL(fileURLWithPath: relative).lastPathComponent
            if name.hasPrefix(".") && name.hasSuffix(".tmp") {
                try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: folder).appendingPathComponent(relative).path)
            }
        }
    }

    /// Scratch files of TileKit before 0.2, named with a process id and so never found again:
    /// `.NAME.PID.partial` (+ SQLite's files, + its PMTiles scratch) and `NAME.tiles-PID-N.tmp`,
    /// `NAME.PID.tmp`. Matched strictly (digits where the id was) so no user file is taken.
    static func legacyLeftovers(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let folder = url.deletingLastPathComponent()
        let name = url.lastPathComponent
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        func digits(_ text: Substring) -> Bool { !text.isEmpty && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber) }
        return entries.filter { entry in
            if entry.hasPrefix(".\(name).") {
                // .NAME.PID.partial[-wal|-shm|-journal|.tiles-PID-N.tmp|.PID.tmp]
                let rest = entry.dropFirst(name.count + 2)
                guard let dot = rest.firstIndex(of: "."), digits(rest[..<dot]) else { return false }
                let tail = rest[rest.index(after: dot)...]
                return tail == "partial" || sqliteCompanions.contains { tail == "partial" + $0 } || tail.hasPrefix("partial.") && tail.hasSuffix(".tmp")
            }
            if entry.hasPrefix("\(name).") && entry.hasSuffix(".tmp") {
                // NAME.tiles-PID-N.tmp or NAME.PID.tmp
                let middle = entry.dropFirst(name.count + 1).dropLast(4)
                if middle.hasPrefix("tiles-") {
                    let parts = middle.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
                    return parts.count == 2 && parts.allSatisfy(digits)
                }
                return digits(middle)
            }
            return false
        }.map { folder.appendingPathComponent($0).path }
    }

    public func contains(_ tile: TileID) throws -> Bool {
        guard let writer else { return false }
        do { return try writer.contains(tile) } catch { throw failed(error) }
    }

    public func write(_ tile: TileID, bytes: [UInt8]) throws {
        guard let writer else { throw TileSourceError.unwritable(path: finalPath, reason: "the store was already finished or discarded") }
        do { try writer.write(tile, bytes: bytes) } catch { throw failed(error) }
    }

    /// Makes what was written durable: a build killed after this keeps it.
    public func checkpoint() throws {
        do { try writer?.checkpoint() } catch { throw failed(error) }
    }

    /// A tile a previous run wrote, decoded (a resumed build's parents need their children).
    public func read(_ tile: TileID) async throws -> RGBAImage? {
        guard !direct, try contains(tile) else { return nil }
        if reader == nil { reader = try TileStore.open(partialPath, scheme: kind == .folder ? scheme : nil) }
        guard let data = try await reader?.tile(TileRequest(tile)).data else { return nil }
        return try RGBAImage(decoding: data.bytes, limits: .tile)
    }

    /// Removes the partial store and every scratch file (a build that cannot be resumed, or
    /// that failed to write); the final path is untouched.
    public func discard() {
        reader = nil
        writer = nil  // closes the partial store before its files go
        finished = true
        Self.removeLeftovers(of: finalPath, kind: kind, keepingPartial: false)
    }

    public func finish(metadata: TileSetMetadata) throws { try commit(metadata: metadata) }

    /// Finishes the store and puts it in place of anything at the final path.
    public func commit(metadata: TileSetMetadata) throws {
        guard let writer else { throw TileSourceError.unwritable(path: finalPath, reason: "the store was already finished or discarded") }
        var metadata = metadata
        // A reader of the partial store (a resumed pyramid reads its children) would keep
        // SQLite from leaving WAL mode: the finished file must stand alone, without -wal.
        reader = nil
        do {
            if metadata.format == nil && !direct {
                // A seed resumed with every tile already present never saw one: its format is
                // that of the tiles the killed run stored.
                try writer.checkpoint()
                metadata.format = storedFormat()
            }
            try writer.finish(metadata: metadata)
            self.writer = nil  // closed before it is renamed or read
            switch kind {
            case .mbtiles, .folder:
                try AtomicFile.moveIntoPlace(partialPath, finalPath)
            case .pmtiles:
                if resumable {
                    // Laid out from the MBTiles partial store into a scratch file renamed into place.
                    let source = try MBTilesSource(path: partialPath)
                    let pmtiles = try PMTilesStoreWriter(path: finalPath)
                    try source.reader.forEachTile { tile, bytes in try pmtiles.write(tile, bytes: bytes) }
                    try pmtiles.finish(metadata: metadata)
                }
            }
        } catch {
            throw failed(error)
        }
        finished = true
        Self.removeLeftovers(of: finalPath, kind: kind, keepingPartial: false)
    }

    /// The format of the first tile in the partial store, if it has one.
    private func storedFormat() -> ImageFormat? {
        struct Found: Error { let format: ImageFormat? }
        guard let source = try? TileStore.open(partialPath, scheme: kind == .folder ? scheme : nil) else { return nil }
        do {
            try TileStore.forEachTile(in: source) { _, bytes in throw Found(format: ImageFormat(sniffing: bytes)) }
        } catch let found as Found {
            return found.format
        } catch {}
        return nil
    }

    /// A failed write: everything staged goes (see the type's comment), and the error names
    /// the final path with the cause in words.
    private func failed(_ error: any Error) -> TileSourceError {
        discard()
        return .writing(finalPath, error)
    }
}
