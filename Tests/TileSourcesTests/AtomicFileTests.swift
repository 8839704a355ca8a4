import Foundation
import Testing
import TileSources

/// `AtomicFile`: write beside, then rename; a reader never sees half of a file or a store.
@Suite struct AtomicFileTests {
    let manager = FileManager.default

    func contents(_ path: String) -> String? { manager.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } }

    /// A new folder at `path` holding one file, `name`, of `text`.
    func makeFolder(_ path: String, holding name: String, _ text: String) throws {
        try manager.createDirectory(atPath: path, withIntermediateDirectories: false)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name))
    }

    @Test func aWriteReplacesTheFileAndLeavesNoScratch() throws {
        let folder = temporaryDirectory()
        defer { try? manager.removeItem(at: folder) }
        let path = folder.appendingPathComponent("image.png").path
        try AtomicFile.write(Array("old".utf8), to: URL(fileURLWithPath: path))
        try AtomicFile.write(Array("new".utf8), to: URL(fileURLWithPath: path))
        #expect(contents(path) == "new")
        #expect(try manager.contentsOfDirectory(atPath: folder.path) == ["image.png"])
    }

    /// A store's tile (not flushed one by one) lands in a folder made for it, whole.
    @Test func aTileWrittenWithoutFlushMakesItsFolders() throws {
        let folder = temporaryDirectory()
        defer { try? manager.removeItem(at: folder) }
        let path = folder.appendingPathComponent("18/77194/98515.png").path
        let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try AtomicFile.write(bytes, to: URL(fileURLWithPath: path), durable: false)
        #expect(manager.contents(atPath: path) == Data(bytes))
        #expect(try manager.contentsOfDirectory(atPath: folder.path + "/18/77194") == ["98515.png"])
        try FolderHandle(folder.path).flushFileSystem()
    }

    @Test func flushingAMissingFolderNamesIt() {
        let folder = temporaryDirectory()
        defer { try? manager.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("gone").path
        #expect(throws: TileSourceError.unwritable(path: missing, reason: "no such file or directory")) {
            try FolderHandle(missing).flushFileSystem()
        }
    }

    /// The second file's folder is a file: neither is written, the first keeps its old bytes,
    /// and no scratch file is left.
    @Test func severalFilesAreAllWrittenOrNone() throws {
        let folder = temporaryDirectory()
        defer { try? manager.removeItem(at: folder) }
        let image = folder.appendingPathComponent("map.png").path, blocker = folder.appendingPathComponent("blocker").path
        try AtomicFile.write(Array("old".utf8), to: URL(fileURLWithPath: image))
        try AtomicFile.write(Array("a file".utf8), to: URL(fileURLWithPath: blocker))
        #expect(throws: TileSourceError.self) {
            try AtomicFile.write([(image, Array("new".utf8)), (blocker + "/map.json", Array("{}".utf8))])
        }
        #expect(contents(image) == "old")
        #expect(try manager.contentsOfDirectory(atPath: folder.path).sorted() == ["blocker", "map.png"])
    }

    /// rename(2) puts a folder in the place of an empty one, and refuses one that holds a file
    /// (what `tilekit init` relies on), naming the destination.
    @Test func aRenameReplacesAnEmptyFolderOnly() throws {
        let folder = temporaryDirectory()
        defer { try? manager.removeItem(at: folder) }
        let staging = folder.appendingPathComponent(".map.init-1").path, destination = folder.appendingPathComponent("map").path
        try makeFolder(staging, holding: "map.json", "{}")
        try makeFolder(destination, holding: "notes.txt", "mine")
        #expect(throws: TileSourceError.unwritable(path: destination, reason: IOFailure.words(errno: ENOTEMPTY))) {
            try AtomicFile.rename(staging, over: destination)
        }
        #expect(contents(destination + "/notes.txt") == "mine")
        try manager.removeItem(atPath: destination + "/notes.txt")
        try AtomicFile.rename(staging, over: destination)
        #expect(contents(destination + "/map.json") == "{}")
        #expect(!manager.fileExists(atPath: staging))
    }

    /// A store folder over a full one: swapped through `SCRATCH.old`, which is gone after.
    @Test func aFolderReplacesAFullFolder() throws {
        let folder = temporaryDirectory()
        defer { try? manager.removeItem(at: folder) }
        let scratch = folder.appendingPathComponent(".tiles.partial").path, destination = folder.appendingPathComponent("tiles").path
        try makeFolder(scratch, holding: "metadata.json", "new")
        try makeFolder(destination, holding: "metadata.json", "old")
        try AtomicFile.moveIntoPlace(scratch, destination)
        #expect(contents(destination + "/metadata.json") == "new")
        #expect(try manager.contentsOfDirectory(atPath: folder.path) == ["tiles"])
    }

    /// A process killed between the swap's two renames left the old store as `SCRATCH.old`
    /// and no destination: `restoreOld` puts it back.
    @Test func theOldStoreComesBackAfterAKilledSwap() throws {
        let folder = temporaryDirectory()
        defer { try? manager.removeItem(at: folder) }
        let scratch = folder.appendingPathComponent(".tiles.partial").path, destination = folder.appendingPathComponent("tiles").path
        try makeFolder(AtomicFile.oldPath(for: scratch), holding: "metadata.json", "old")
        AtomicFile.restoreOld(scratch, destination)
        #expect(contents(destination + "/metadata.json") == "old")
        #expect(try manager.contentsOfDirectory(atPath: folder.path) == ["tiles"])
    }
}
