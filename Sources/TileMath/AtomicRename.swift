#if canImport(Glibc)
import Glibc
#endif

/// The last step of every atomic replacement of a file or store in TileKit (TileSources'
/// `AtomicFile`, the PMTiles writer): rename(2), which replaces a file, or an empty folder by
/// a folder, in one step, and fails on anything else (`tilekit init` relies on it never
/// replacing a folder that holds something). A reader sees the old file or the new one,
/// never half of either. Each module turns the errno into its own error naming the file.
public enum AtomicRename {
    /// Renames `scratch` over `destination`: nil when done, else the errno of the failure.
    public static func rename(_ scratch: String, over destination: String) -> Int32? {
        Glibc.rename(scratch, destination) == 0 ? nil : errno
    }
}
