import Foundation
import Synchronization
import Testing
import Canvas
@testable import MBTiles
import TileMath
import TileSources
@testable import TileKitCLI

/// Failures of writing, whichever layer reports them, are one I/O error: exit 74 naming the
/// destination and the cause in words; and a killed or failed write leaves nothing behind.
@Suite struct WriteFailureTests {
    static let destination = "/maps/park.mbtiles"

    /// What each layer throws when the disk is full, the device fails or a permission is
    /// missing, and the exit and words the user gets.
    static var failures: [(name: String, error: any Error, exit: Int32, words: String)] { [
        ("SQLite full (no errno)", SQLiteError(code: 13, message: "database or disk is full", path: "/maps/.park.partial.mbtiles"), 74, "no space left on device"),
        ("SQLite I/O error", SQLiteError(code: 10, message: "disk I/O error", path: "/maps/.park.partial.mbtiles", systemErrno: EIO), 74, "input/output error"),
        ("SQLite quota", SQLiteError(code: 10, message: "disk I/O error", path: "/maps/.park.partial.mbtiles", systemErrno: EDQUOT), 74, "disk quota exceeded"),
        ("SQLite read-only", SQLiteError(code: 8, message: "attempt to write a readonly database", path: "/maps/x", systemErrno: EROFS), 74, "read-only file system"),
        ("Foundation 640 with its POSIX error", NSError(domain: NSCocoaErrorDomain, code: 640,
                                                        userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC))]), 74, "no space left on device"),
        ("Foundation 640 alone", CocoaError(.fileWriteOutOfSpace), 74, "no space left on device"),
        ("Foundation 642", CocoaError(.fileWriteVolumeReadOnly), 74, "read-only file system"),
        ("Foundation 513", CocoaError(.fileWriteNoPermission), 74, "permission denied"),
        ("POSIX quota", POSIXError(.EDQUOT), 74, "disk quota exceeded"),
        ("POSIX I/O error", NSError(domain: NSPOSIXErrorDomain, code: Int(EIO)), 74, "input/output error"),
        ("a writer's words", TileSourceError.unwritable(path: destination, reason: "no space left on device"), 74, "no space left on device"),
        ("a missing file", TileSourceError.notFound(path: destination), 74, "no such file or directory"),
        ("a corrupt store", TileSourceError.corrupt(path: destination, reason: "not an MBTiles file"), 65, "not an MBTiles file"),
        ("a corrupt SQLite file", SQLiteError(code: 11, message: "database disk image is malformed", path: destination), 65, "malformed"),
        ("not a store name", TileSourceError.invalid("\(destination).gif: not a folder, .mbtiles or .pmtiles store"), 64, "not a folder"),
        ("something else", CancellationError(), 1, destination),
    ] }

    @Test func everyLayersFailureMapsToOneExit() {
        for (name, error, exit, words) in Self.failures {
            let mapped = CLIError(error, .writing, Self.destination)
            #expect(mapped.exitCode == exit, "\(name): \(mapped)")
            #expect(mapped.description.contains(Self.destination), "\(name): \(mapped)")
            #expect(mapped.description.contains(words), "\(name): \(mapped)")
            #expect(!mapped.description.contains("Domain"), "\(name): \(mapped)")
            if exit == 74 { #expect(mapped.description.hasPrefix("\(Self.destination): "), "\(name): \(mapped)") }
        }
    }

    /// Writers wrap what fails below them into `unwritable` naming the destination (not the
    /// scratch file), with the cause in words.
    @Test func writersNameTheDestination() {
        let full = SQLiteError(code: 13, message: "database or disk is full", path: "/maps/.park.partial.mbtiles")
        #expect(TileSourceError.writing(Self.destination, full) == .unwritable(path: Self.destination, reason: "no space left on device"))
        let nested = TileSourceError.unwritable(path: "/maps/.park.partial/3/4/5.png", reason: "no space left on device")
        #expect(TileSourceError.writing(Self.destination, nested) == .unwritable(path: Self.destination, reason: "no space left on device"))
        #expect(IOFailure.cause(of: SQLiteError(code: 19, message: "UNIQUE constraint failed", path: "x")) == nil)
        #expect(IOFailure.cause(of: CocoaError(.coderReadCorrupt)) == nil)
    }

    func folder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-write-\(UUID())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func smallStore(_ path: String) throws {
        let writer = try MBTilesStoreWriter(path: path)
        for tile in TileRange.covering(BoundingBox(west: -10, south: 40, east: 10, north: 55), zoom: 4)[0] {
            try writer.write(tile, bytes: RGBAImage(width: 256, height: 256, color: Color(red: Double(tile.x % 4) / 4, green: 0.5, blue: 0.5)).encoded())
        }
        try writer.finish(metadata: TileSetMetadata(name: "small", format: .png))
    }

    /// A real failure from the file system: the destination's folder is a file. Exit 74 naming
    /// the destination, the cause in words, and no scratch file beside it.
    @Test func aDestinationThatCannotBeWrittenIsAnIOError() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("small.mbtiles").path
        try smallStore(source)
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("blocker").path, contents: Data("a file".utf8))
        for name in ["out.mbtiles", "out.pmtiles", "out"] {
            let destination = directory.appendingPathComponent("blocker/\(name)").path
            let run = await CLIRun(["convert", source, destination])
            #expect(run.exitCode == 74, "\(name): \(run.error)")
            #expect(run.error.contains("\(destination): cannot write: "), "\(name): \(run.error)")
            #expect(!run.error.contains("Domain"), "\(name): \(run.error)")
        }
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == ["small.mbtiles", "blocker"])
    }

    /// What killed runs left (this version's scratch files and the PID-named ones of earlier
    /// versions) is removed by the next write of the same destination; files that only look
    /// alike stay.
    @Test func theNextRunRemovesWhatAKilledRunLeft() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        try smallStore(path("small.mbtiles"))
        let leftovers = [".out.partial.mbtiles", ".out.partial.mbtiles-wal", ".out.partial.mbtiles-shm", ".out.pmtiles.tiles.tmp", ".out.pmtiles.tmp",
                         ".out.pmtiles.4242.partial", ".out.pmtiles.4242.partial-wal", ".out.pmtiles.4242.partial.tiles-4242-99.tmp",
                         "out.pmtiles.tiles-4242-17.tmp", "out.pmtiles.4242.tmp"]
        let lookalikes = [".out.pmtiles.notes", "out.pmtiles.backup.tmp", ".out.pmtiles.12a.partial", "out.pmtiles.tiles-1-2-3.tmp"]
        for name in leftovers + lookalikes { _ = FileManager.default.createFile(atPath: path(name), contents: Data(repeating: 7, count: 1000)) }
        try FileManager.default.createDirectory(atPath: path(".out.pmtiles.77.partial/3/4"), withIntermediateDirectories: true)
        let run = await CLIRun(["convert", path("small.mbtiles"), path("out.pmtiles")])
        #expect(run.exitCode == 0, "\(run.error)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == Set(["small.mbtiles", "out.pmtiles"] + lookalikes))

        // A folder: its partial folder, and the old store a swap was interrupted in.
        try FileManager.default.createDirectory(atPath: path(".tiles.partial/4/3"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: path(".tiles.partial/4/3/.5.png.tmp"), contents: Data([1]))
        let folderRun = await CLIRun(["convert", path("small.mbtiles"), path("tiles")])
        #expect(folderRun.exitCode == 0, "\(folderRun.error)")
        #expect(!FileManager.default.fileExists(atPath: path(".tiles.partial")))
        let replaced = await CLIRun(["convert", path("out.pmtiles"), path("tiles"), "--force"])
        #expect(replaced.exitCode == 0, "\(replaced.error)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == Set(["small.mbtiles", "out.pmtiles", "tiles"] + lookalikes))
    }

    /// A staged store dropped unfinished: a one-shot copy leaves nothing, a resumable build
    /// keeps its partial store for the next run, and a failed write discards it at once.
    @Test func stagedStoresKeepOnlyWhatCanBeResumed() throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tile = TileID(z: 3, x: 2, y: 1)
        let bytes = try RGBAImage(width: 256, height: 256, color: Color(red: 1, green: 0, blue: 0)).encoded()
        for kind in ["mbtiles", "pmtiles"] {
            let out = directory.appendingPathComponent("copy.\(kind)").path
            do {
                let store = try StagedStore(path: out, format: .png, resume: false, resumable: false)
                try store.write(tile, bytes: bytes)
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "\(kind)")
            do {
                let store = try StagedStore(path: out, format: .png, resume: false, resumable: true)
                try store.write(tile, bytes: bytes)
                try store.checkpoint()
            }
            let resumed = try StagedStore(path: out, format: .png, resume: true)
            let kept = try resumed.contains(tile)
            #expect(resumed.resumed && kept, "\(kind)")
            try resumed.commit(metadata: TileSetMetadata(name: "copy", format: .png, minZoom: 3, maxZoom: 3))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["copy.\(kind)"], "\(kind)")
            try FileManager.default.removeItem(atPath: out)
        }
        // A folder continued after a kill: the tile file it was writing does not come along.
        let tiles = directory.appendingPathComponent("tiles").path
        do {
            let store = try StagedStore(path: tiles, format: .png, resume: false)
            try store.write(tile, bytes: bytes)
        }
        let partial = StagedStore.partialPath(for: tiles, kind: .folder)
        _ = FileManager.default.createFile(atPath: partial + "/3/2/.1.png.tmp", contents: Data(bytes.prefix(10)))
        let resumed = try StagedStore(path: tiles, format: .png, resume: true)
        #expect(resumed.resumed)
        try resumed.commit(metadata: TileSetMetadata(name: "tiles", format: .png, minZoom: 3, maxZoom: 3))
        let files = FileManager.default.enumerator(atPath: tiles)?.compactMap { $0 as? String } ?? []
        #expect(Set(files) == ["3", "3/2", "3/2/1.png", "metadata.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["tiles"])
    }
}

/// `seed` on a write failure: no new fetch is started, the ones in flight finish (never
/// cancelled: cancelling URLSession tasks could deadlock Foundation on Linux), then the
/// write's error is thrown.
@Suite struct SeederWriteFailureTests {
    /// A source whose fetches take a while and record whether they were cancelled.
    final class SlowSource: TileSource {
        let metadata = TileSetMetadata(name: "slow", format: .png)
        let bytes: [UInt8]
        let counts = Mutex((started: 0, finished: 0, cancelled: 0))
        init() throws { bytes = try RGBAImage(width: 8, height: 8, color: Color(red: 0, green: 0, blue: 1)).encoded() }

        func tile(_ request: TileRequest) async throws -> TileResult {
            counts.withLock { $0.started += 1 }
            try? await Task.sleep(for: .milliseconds(30))
            counts.withLock {
                $0.finished += 1
                if Task.isCancelled { $0.cancelled += 1 }
            }
            return .tile(TileData(bytes: bytes, format: .png))
        }
    }

    /// Fails its third write as a full disk does.
    final class FullDisk: TileStoreWriter {
        var writes = 0
        func write(_ tile: TileID, bytes: [UInt8]) throws {
            writes += 1
            if writes >= 3 { throw TileSourceError.unwritable(path: "/maps/seed.mbtiles", reason: "no space left on device") }
        }
        func contains(_ tile: TileID) throws -> Bool { false }
        func finish(metadata: TileSetMetadata) throws { Issue.record("finish after a failed write") }
    }

    @Test func aWriteFailureDrainsTheFetchesWithoutCancellingThem() async throws {
        let source = try SlowSource()
        var seeder = Seeder(source: source, box: BoundingBox(west: -10, south: 40, east: 10, north: 55), zooms: 3...6)
        seeder.concurrency = 8
        #expect(seeder.tileCount > 30)
        let writer = FullDisk()
        do {
            _ = try await seeder.run(into: writer, metadata: TileSetMetadata(name: "seed"))
            Issue.record("the seed did not fail")
        } catch {
            #expect(error as? TileSourceError == .unwritable(path: "/maps/seed.mbtiles", reason: "no space left on device"))
        }
        let counts = source.counts.withLock { $0 }
        #expect(counts.started == counts.finished && counts.cancelled == 0, "\(counts)")
        #expect(counts.started < seeder.tileCount, "fetches kept being started after the failure: \(counts)")
        #expect(writer.writes == 3)
    }
}
