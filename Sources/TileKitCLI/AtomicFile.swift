import Foundation
import TileSources

extension AtomicFile {
    /// TileSources' atomic write (beside, then renamed), its failure mapped by `CLIError`.
    static func write(_ bytes: [UInt8], to path: String) throws(CLIError) {
        do {
            try write(bytes, to: URL(fileURLWithPath: path))
        } catch {
            throw CLIError(error)
        }
    }

    /// Several files as one (an image and its sidecars): all of them, or none.
    static func write(files: [(path: String, bytes: [UInt8])]) throws(CLIError) {
        do {
            try write(files)
        } catch {
            throw CLIError(error)
        }
    }
}
