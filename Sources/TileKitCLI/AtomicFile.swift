import Foundation
import TileSources

extension AtomicFile {
    /// TileSources' atomic write, with its failure as the CLI's I/O error (exit 74).
    static func write(_ bytes: [UInt8], to path: String) throws(CLIError) {
        do {
            try write(bytes, to: URL(fileURLWithPath: path))
        } catch {
            throw .io(error.description)
        }
    }
}
