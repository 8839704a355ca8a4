import Foundation
import TileMath

/// Writes files so a reader never sees half of one: the bytes go to a scratch file beside the
/// destination (`.NAME.tmp`, in the same directory, created if missing), which is then renamed
/// over it (rename is atomic within a file system). A failure leaves the destination as it
/// was and removes the scratch file; a process killed mid-way leaves `.NAME.tmp`, which the
/// next write of the same destination truncates and reuses.
///
/// One writer per destination at a time: the scratch name is derived from the destination
/// alone, so that a later run finds what a killed one left.
public enum AtomicFile {
    /// `DIR/NAME` → `DIR/.NAME.tmp`.
    public static func temporaryPath(for destination: String) -> String {
        let url = URL(fileURLWithPath: destination)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp").path
    }

    /// `durable`: the bytes reach the disk (fsync) before the rename, so a power cut leaves
    /// the old file or the new one, never an empty one. A store's tiles are written without
    /// it (one fsync a tile cost a pyramid a third of its time on ext4) and made durable
    /// together by the store (`FolderTileWriter.checkpoint` and `finish`), as SQLite does
    /// for MBTiles.
    public static func write(_ bytes: [UInt8], to url: URL, durable: Bool = true) throws(TileSourceError) {
        try write([(url.path, bytes)], durable: durable)
    }

    /// Writes several files as one: every scratch file is written before any is renamed into
    /// place, so a full disk leaves none of them (an image without its sidecar is no use).
    public static func write(_ files: [(path: String, bytes: [UInt8])], durable: Bool = true) throws(TileSourceError) {
        var written = [String]()
        do {
            for (path, bytes) in files {
                let scratch = temporaryPath(for: path)
                written.append(scratch)
                try writeNew(bytes, to: scratch, naming: path, durable: durable)
            }
            for (path, _) in files { try moveIntoPlace(temporaryPath(for: path), path) }
        } catch {
            for scratch in written { unlink(scratch) }
            throw error
        }
    }

    /// Puts a finished scratch file or folder in the place of `destination`. A file replaces
    /// the old one atomically. A folder (or a change between file and folder) cannot be renamed
    /// over an existing one, so the old one is first renamed to `SCRATCH.old`, then removed;
    /// a process killed in between leaves the old store there and `restoreOld` puts it back.
    public static func moveIntoPlace(_ scratch: String, _ destination: String) throws(TileSourceError) {
        let manager = FileManager.default
        var scratchIsFolder: ObjCBool = false, destinationIsFolder: ObjCBool = false
        let replacing = manager.fileExists(atPath: destination, isDirectory: &destinationIsFolder)
        _ = manager.fileExists(atPath: scratch, isDirectory: &scratchIsFolder)
        if replacing && (scratchIsFolder.boolValue || destinationIsFolder.boolValue) {
            let old = oldPath(for: scratch)
            try? manager.removeItem(atPath: old)
            guard Glibc.rename(destination, old) == 0 else { throw .unwritable(path: destination, reason: IOFailure.words(errno: errno)) }
            do {
                try rename(scratch, over: destination)
            } catch {
                _ = Glibc.rename(old, destination)
                throw error
            }
            try? manager.removeItem(atPath: old)
            return
        }
        try rename(scratch, over: destination)
    }

    /// The last step of every atomic write (`AtomicRename`: rename(2), which never replaces
    /// a folder that holds something). Errors name `destination`.
    public static func rename(_ scratch: String, over destination: String) throws(TileSourceError) {
        if let code = AtomicRename.rename(scratch, over: destination) { throw .unwritable(path: destination, reason: IOFailure.words(errno: code)) }
    }

    /// Where `moveIntoPlace` keeps the store it replaces until the new one is in place.
    public static func oldPath(for scratch: String) -> String { scratch + ".old" }

    /// After a process was killed inside `moveIntoPlace`: the old store comes back when the
    /// destination is missing, and is removed when the new one made it into place.
    public static func restoreOld(_ scratch: String, _ destination: String) {
        let old = oldPath(for: scratch)
        guard FileManager.default.fileExists(atPath: old) else { return }
        if FileManager.default.fileExists(atPath: destination) || Glibc.rename(old, destination) != 0 {
            try? FileManager.default.removeItem(atPath: old)
        }
    }

    /// Creates or truncates `path` (and its folder, when missing) and writes `bytes` to it,
    /// flushed to the disk when `durable`; errors name `destination` and say why in words.
    static func writeNew(_ bytes: [UInt8], to path: String, naming destination: String, durable: Bool) throws(TileSourceError) {
        func failure(_ code: Int32) -> TileSourceError {
            unlink(path)
            return .unwritable(path: destination, reason: IOFailure.words(errno: code))
        }
        // 0666 less the umask, as Foundation (and every shell tool) creates files.
        var fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        if fd < 0 && errno == ENOENT {
            // The folder is missing (the first tile of a column): made once, not stat'ed per file.
            do {
                try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
            } catch {
                throw .writing(destination, error)
            }
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        }
        guard fd >= 0 else { throw failure(errno) }
        var code = bytes.withUnsafeBytes { buffer -> Int32 in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                // A file system that takes nothing and reports no error: as full.
                if n == 0 { return ENOSPC }
                offset += n
            }
            return 0
        }
        if code == 0 && durable && fsync(fd) != 0 { code = errno }
        // close(2) reports what a network file system held back (a quota, a full disk): such a
        // file is not renamed into place.
        if close(fd) != 0 && code == 0 { code = errno }
        if code != 0 { throw failure(code) }
    }
}

/// An open folder, kept open so `flushFileSystem` reports every write-back error since it was
/// opened (syncfs reports only those after the descriptor it is given was opened, Linux 5.8+):
/// what makes a store's tiles, written without `durable`, reach the disk at once.
public final class FolderHandle {
    public let path: String
    private let fd: Int32

    public init(_ path: String) throws(TileSourceError) {
        self.path = path
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .unwritable(path: path, reason: IOFailure.words(errno: errno)) }
    }

    deinit { close(fd) }

    /// Flushes every file written on the folder's file system to the disk.
    public func flushFileSystem() throws(TileSourceError) {
        guard syncfs(fd) == 0 else { throw .unwritable(path: path, reason: IOFailure.words(errno: errno)) }
    }
}

/// glibc's syncfs(2), which its header declares only under _GNU_SOURCE (so Swift's Glibc
/// module does not have it); the symbol is in every glibc since 2.14.
@_silgen_name("syncfs")
private func syncfs(_ fd: Int32) -> Int32
