import Foundation

/// Where a PMTiles file's bytes come from: positional reads within a known size. A file
/// for serving; bytes in memory for tests and fuzzing; range requests (TileSources, for
/// walks of a whole file over HTTP).
package protocol PMTilesStorage: Sendable {
    var size: UInt64 { get }
    /// Exactly `length` bytes from `offset`; the caller has checked both against `size`.
    func read(offset: UInt64, length: Int) throws(PMTilesError) -> [UInt8]
}

/// A file read with `pread`, which many threads may call at once on one descriptor.
final class FileStorage: PMTilesStorage {
    let path: String
    let size: UInt64
    private let descriptor: Int32

    init(path: String) throws(PMTilesError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("\(path): \(String(cString: strerror(errno)))") }
        var status = stat()
        guard fstat(fd, &status) == 0, let size = UInt64(exactly: status.st_size) else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .io("\(path): \(reason)")
        }
        self.path = path
        self.size = size
        descriptor = fd
    }

    deinit { close(descriptor) }

    func read(offset: UInt64, length: Int) throws(PMTilesError) -> [UInt8] {
        guard length > 0 else { return [] }
        guard let start = off_t(exactly: offset) else {
            throw .invalid(file: path, field: "offset", value: offset, reason: "is beyond what the system can read")
        }
        var buffer = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return pread(descriptor, base + done, length - done, start + off_t(done))
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                // The file shrank since it was opened (or cannot be read).
                let reason = n < 0 ? String(cString: strerror(errno)) : "the file ends before byte \(offset + UInt64(length))"
                throw .io("\(path): \(reason)")
            }
            done += n
        }
        return buffer
    }
}

/// A whole file in memory.
struct MemoryStorage: PMTilesStorage {
    let bytes: [UInt8]
    var size: UInt64 { UInt64(bytes.count) }

    func read(offset: UInt64, length: Int) throws(PMTilesError) -> [UInt8] {
        // Callers checked the range against `size`; a wrong one is an error, not a trap.
        guard let start = Int(exactly: offset), start <= bytes.count, length <= bytes.count - start else {
            throw .invalid(file: "<memory>", field: "offset", value: offset, reason: "plus length \(length) is beyond the \(bytes.count) bytes")
        }
        return Array(bytes[start..<start + length])
    }
}
