import Foundation
import Glibc
import Canvas
import TileMath
import TileSources

/// The folder a target writes its input to when the code under test reads files (stores,
/// map.json, row readers), with small real files beside it for map.json to point at.
///
/// One folder per process: `$TILEKIT_FUZZ_SCRATCH/<pid>` when set (make fuzz sets it, and
/// removes it after each target), else on /dev/shm where SQLite's syncs cost nothing.
/// libFuzzer calls targets one at a time, so a target can reuse its file names.
final class Scratch: Sendable {
    static let shared = Scratch()

    let folder: URL
    let folderPath: String
    /// A 4x4 PNG: the image behind world files, a map's fallback, overlays.
    let tinyPNG: [UInt8]
    /// A 256x256 PNG tile, for stores the targets build.
    let tilePNG: [UInt8]

    private init() {
        let environment = ProcessInfo.processInfo.environment
        let parent = environment["TILEKIT_FUZZ_SCRATCH"].map { URL(fileURLWithPath: $0) }
            ?? (FileManager.default.isWritableFile(atPath: "/dev/shm") ? URL(fileURLWithPath: "/dev/shm") : FileManager.default.temporaryDirectory)
        folder = parent.appendingPathComponent("tilekit-fuzz-\(getpid())")
        folderPath = folder.path
        Self.removeFoldersOfEndedProcesses(in: parent)
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Scratch.shared.folder) }

        var tiny = RGBAImage(width: 4, height: 4, color: Color(red: 0.2, green: 0.5, blue: 0.8))
        tiny[1, 2] = Pixel(Color(red: 1, green: 0, blue: 0))
        tinyPNG = (try? tiny.encoded(.png())) ?? []
        tilePNG = (try? RGBAImage(width: 256, height: 256, color: Color(red: 0.9, green: 0.85, blue: 0.7)).encoded(.png())) ?? []
    }

    /// A process that crashes (what fuzzing is for) cannot remove its folder: the next one
    /// removes the folders of processes that are gone.
    static func removeFoldersOfEndedProcesses(in parent: URL) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? [] where name.hasPrefix("tilekit-fuzz-") {
            guard let pid = Int32(name.dropFirst("tilekit-fuzz-".count)), pid != getpid(), kill(pid, 0) == -1, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
        }
    }

    /// A path in the scratch folder. Joined as text: `URL.appendingPathComponent` was 8% of
    /// the image targets' time (a few paths per input).
    func path(_ name: String) -> String { folderPath + "/" + name }

    /// Writes `bytes` to a file of the scratch folder (replacing it) and returns its path;
    /// nil when it cannot be written (then the target has nothing to test).
    /// With plain `open`/`write`: `FileManager.createFile` writes a temporary file and renames
    /// it, work that every input of a store target paid for nothing.
    func write(_ bytes: [UInt8], to name: String) -> String? {
        let path = self.path(name)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress.map { $0 + done }, bytes.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return path
    }

    /// Removes a file or folder of the scratch folder (an SQLite file with its -wal and -shm).
    /// Files go with `unlink`, which costs nothing when there is none; `FileManager` built an
    /// error for each of the three that are usually missing.
    func remove(_ name: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let file = path(name) + suffix
            if unlink(file) != 0, errno == EISDIR || errno == EPERM {  // a folder (Linux says EISDIR; POSIX allows EPERM)
                Self.removeFolder(file)
            }
        }
    }

    /// Removes a folder and everything in it, depth first; a link is removed, not followed
    /// (`unlink` takes it, so only real folders are opened).
    static func removeFolder(_ path: String) {
        guard let folder = opendir(path) else { return }
        var names = [String]()
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(folder)
        for name in names where unlink(path + "/" + name) != 0 { removeFolder(path + "/" + name) }
        rmdir(path)
    }
}
