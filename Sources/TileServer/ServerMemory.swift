/// How `tilekit serve` hands memory back to the system: static images allocate and free tens
/// of megabytes at once, and glibc's defaults would keep them.
public enum ServerMemory {
    /// Every allocation of 1 MiB or more gets pages of its own from the kernel and gives
    /// them back when freed. glibc starts at 128 KiB but raises the threshold to the size
    /// of each mmapped block freed (up to 32 MiB), so after the first static image its
    /// canvases (16 MiB at 2048x2048) come from the heap, and a long-running server's RSS
    /// then keeps whatever the heap's fragments hold. A fixed threshold stops that.
    /// Process-wide: `tilekit serve` calls it once at start.
    public static func returnLargeBuffersToTheSystem() {
        let M_MMAP_THRESHOLD: Int32 = -3  // malloc.h
        _ = glibcMallopt(M_MMAP_THRESHOLD, 1 << 20)
    }

    /// Gives the free pages of every malloc arena back to the kernel (after a render).
    static func releaseFreedMemory() {
        _ = glibcMallocTrim(0)
    }
}

/// glibc's `malloc_trim` (malloc.h), which the Glibc module does not export.
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32

/// glibc's `mallopt` (malloc.h), not exported by the Glibc module either.
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
