import Foundation

/// Writes files so a reader never sees half of one: the bytes go to a temporary file in
/// the same directory, which is then renamed over the destination (rename is atomic
/// within a file system). A failure leaves the destination as it was.
enum AtomicFile {
    static func write(_ bytes: [UInt8], to path: String) throws(CLIError) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: temporary)
            guard rename(temporary.path, url.path) == 0 else {
                throw CLIError.io("\(path): \(String(cString: strerror(errno)))")
            }
        } catch let error as CLIError {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw .io("\(path): \((error as NSError).localizedDescription)")
        }
    }
}
