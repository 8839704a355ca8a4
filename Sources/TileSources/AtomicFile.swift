import Foundation

/// Writes files so a reader never sees half of one: the bytes go to a temporary file in
/// the same directory (created if missing), which is then renamed over the destination
/// (rename is atomic within a file system). A failure leaves the destination as it was.
public enum AtomicFile {
    public static func write(_ bytes: [UInt8], to url: URL) throws(TileSourceError) {
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(bytes).write(to: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw .unwritable(path: url.path, reason: (error as NSError).localizedDescription)
        }
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw .unwritable(path: url.path, reason: reason)
        }
    }
}
