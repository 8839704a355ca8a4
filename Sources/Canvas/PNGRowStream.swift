import Foundation
internal import CDeflate
internal import CISAL

/// Streams a large PNG's rows for `ImageRowReader`: the IDAT data inflated by ISA-L's igzip,
/// then unfiltered and expanded to RGBA by PNGReader's code.
///
/// Inflating was most of the decoding thread's time in a pyramid of a 16384 px scan (zlib,
/// through libpng), and that thread bounds the whole build; igzip inflates the same stream
/// about 3x faster. Like PNGReader this is only a fast path, for the PNGs PNGReader reads
/// (8-bit, not interlaced, colour chunks it understands, all before the first IDAT within
/// the file's first MiB): the initializer returns nil for anything else, and `readRow`
/// returns false on any damage (a CRC, the zlib stream, a filter type, a palette index, the
/// stream's end or checksum), after which the caller reads the file again with libpng from
/// the first row. So it never has to explain an error, only never be wrong when it succeeds:
/// its rows are exactly libpng's for the file (PNGRowStreamTests, the `pngrows` fuzz target),
/// with PNGReader's one exception: igzip, like libdeflate, inflates a few deflate streams that
/// zlib refuses (codes past the alphabet's end), where libpng refuses the file.
final class PNGRowStream {
    /// File bytes read ahead; the colour chunks must also lie within the first this many.
    static let bufferSize = 1 << 20
    /// Filtered rows inflated at once (at least one row, however wide).
    static let batchBytes = 1 << 20
    /// IDAT data handed to inflate at once.
    static let compressedSize = 1 << 18

    private let layout: PNGReader.Layout
    private let height: Int
    private let rowBytes: Int
    private let file: Int32
    private let state: UnsafeMutablePointer<inflate_state>
    /// Bytes read from the file and not yet used: `buffer[position ..< end]`.
    private let buffer: UnsafeMutablePointer<UInt8>
    /// IDAT data copied out of its chunks for inflate (`feed`).
    private let compressed: UnsafeMutablePointer<UInt8>
    private var position = 0
    private var end = 0
    /// Data bytes of the current IDAT chunk not yet handed to inflate, and the CRC-32 of its
    /// type and the data handed so far (nil between chunks).
    private var chunkLeft = 0
    private var chunkCRC: UInt32?
    /// True once the zlib stream's first byte was checked.
    private var headerChecked = false
    /// Filtered rows (each its filter type first), inflated `batchRows` at a time: igzip
    /// copies its 32 KiB history out and back on every call, which cost as much again as the
    /// inflating when each call made one 49 KB row of a 16384 px scan. `batched` rows are in
    /// the buffer, `used` of them returned.
    private let filtered: UnsafeMutablePointer<UInt8>
    private let batchRows: Int
    private var batched = 0
    private var used = 0
    /// The unfiltered row and the one above it.
    private var current: UnsafeMutablePointer<UInt8>
    private var above: UnsafeMutablePointer<UInt8>
    private var rowsRead = 0
    /// Set at the first failure: every later call fails too (a row half inflated is gone).
    private var failed = false

    /// Nil when the file is not a PNG of `width` x `height` pixels read here (see above).
    init?(path: String, width: Int, height: Int) {
        // libpng refuses a side past 1,000,000 pixels (PNG_USER_WIDTH_MAX), so the stream does.
        guard (1...1_000_000).contains(width), (1...1_000_000).contains(height) else { return nil }
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return nil }
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.bufferSize)
        var end = 0
        while end < Self.bufferSize {
            let count = read(file, buffer + end, Self.bufferSize - end)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            end += count
        }
        guard let layout = PNGReader.Layout(UnsafeBufferPointer(start: buffer, count: end), width: width, height: height, untilImageData: true),
              (width * layout.channels) < Int(UInt32.max) else {
            buffer.deallocate()
            close(file)
            return nil
        }
        self.layout = layout
        self.height = height
        self.file = file
        self.buffer = buffer
        self.end = end
        position = layout.imageDataStart
        rowBytes = width * layout.channels
        batchRows = max(1, Self.batchBytes / (rowBytes + 1))
        filtered = .allocate(capacity: batchRows * (rowBytes + 1))
        compressed = .allocate(capacity: Self.compressedSize)
        current = .allocate(capacity: rowBytes)
        above = .allocate(capacity: rowBytes)
        above.initialize(repeating: 0, count: rowBytes)  // zeros above the first row
        state = .allocate(capacity: 1)
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_ZLIB)  // parse the zlib header, check the Adler-32
    }

    deinit {
        state.deallocate()
        above.deallocate()
        current.deallocate()
        filtered.deallocate()
        compressed.deallocate()
        buffer.deallocate()
        close(file)
    }

    /// The next row as straight RGBA (`width * 4` bytes at `rgba`); false on damage or past
    /// the last row (the rows already returned were right: read the file with libpng).
    func readRow(into rgba: UnsafeMutablePointer<UInt8>) -> Bool {
        guard !failed, rowsRead < height else { return false }
        failed = true  // until this row is whole
        if used == batched {
            // The next rows, never past the image's last (`finish` checks what follows it).
            guard inflateRows(min(batchRows, height - rowsRead)) else { return false }
        }
        let row = filtered + used * (rowBytes + 1)
        guard PNGReader.Layout.unfilter(row[0], row + 1, into: current, above: above, rowBytes, layout.channels),
              layout.expand(current, into: rgba) else { return false }
        used += 1
        swap(&above, &current)
        guard rowsRead + 1 < height || finish() else { return false }
        rowsRead += 1
        failed = false
        return true
    }

    /// Inflates the next `rows` filtered rows into `filtered`; false on damage or when the
    /// stream ends first.
    private func inflateRows(_ rows: Int) -> Bool {
        let count = rows * (rowBytes + 1)
        var filled = 0
        while filled < count {
            if state.pointee.avail_in == 0 && state.pointee.block_state != ISAL_BLOCK_FINISH {
                guard feed() else { return false }
            }
            state.pointee.next_out = filtered + filled
            state.pointee.avail_out = UInt32(count - filled)
            let input = state.pointee.avail_in
            guard isal_inflate(state) == ISAL_DECOMP_OK else { return false }
            let made = count - Int(state.pointee.avail_out)
            // Neither input used nor output made: never loop on it.
            guard made > filled || state.pointee.avail_in < input || state.pointee.block_state == ISAL_BLOCK_FINISH else { return false }
            filled = made
            // The stream ended before the image did.
            if filled < count && state.pointee.block_state == ISAL_BLOCK_FINISH { return false }
        }
        batched = rows
        used = 0
        return true
    }

    /// After the last row: the zlib stream ends there, its Adler-32 right, with no bytes
    /// after it in the IDAT chunk (what libpng accepts without a word).
    private func finish() -> Bool {
        var spare: UInt8 = 0
        while state.pointee.block_state != ISAL_BLOCK_FINISH {
            if state.pointee.avail_in == 0 { guard feed() else { return false } }
            let input = state.pointee.avail_in
            let result = withUnsafeMutablePointer(to: &spare) { out in
                state.pointee.next_out = out
                state.pointee.avail_out = 1
                defer { state.pointee.next_out = nil }
                return isal_inflate(state)
            }
            // A byte out here is image data beyond the last row; neither input used nor the
            // stream ended: never loop on it.
            guard result == ISAL_DECOMP_OK, state.pointee.avail_out == 1,
                  state.pointee.avail_in < input || state.pointee.block_state == ISAL_BLOCK_FINISH else { return false }
        }
        guard state.pointee.avail_in == 0, chunkLeft == 0 else { return false }
        // The chunk's CRC.
        return chunkCRC == nil || closeChunk()
    }

    /// Hands inflate the next run of IDAT data: copied from as many chunks as fit in
    /// `compressed`, each CRC checked as its end is reached, so one igzip call can make many
    /// rows however small the chunks (libpng writes 8 KiB ones; see `filtered`). False when
    /// the file ends or the IDAT chunks end before any data, or a CRC is wrong.
    private func feed() -> Bool {
        var staged = 0
        while staged < Self.compressedSize {
            if chunkLeft == 0 {
                if chunkCRC != nil { guard closeChunk() else { return false } }
                // The image data ends at the first chunk that is not an IDAT.
                guard available(8), Self.uint32(buffer + position + 4) == PNGReader.Chunk.IDAT else { break }
                let length = Int(Self.uint32(buffer + position))
                guard length <= Int(Int32.max) else { return false }
                chunkCRC = libdeflate_crc32(0, buffer + position + 4, 4)
                position += 8
                chunkLeft = length
                // The zlib stream must declare a 32 KiB window (CMF 0x78), as PNGReader requires.
                if !headerChecked && length > 0 {
                    guard available(1), buffer[position] == 0x78 else { return false }
                    headerChecked = true
                }
                continue
            }
            guard available(1) else { return false }
            let count = min(chunkLeft, end - position, Self.compressedSize - staged)
            chunkCRC = libdeflate_crc32(chunkCRC ?? 0, buffer + position, count)
            (compressed + staged).initialize(from: buffer + position, count: count)
            staged += count
            position += count
            chunkLeft -= count
        }
        guard staged > 0 else { return false }
        state.pointee.next_in = compressed
        state.pointee.avail_in = UInt32(staged)
        return true
    }

    /// Checks the finished chunk's CRC (the 4 bytes after its data).
    private func closeChunk() -> Bool {
        guard available(4), let crc = chunkCRC, crc == Self.uint32(buffer + position) else { return false }
        position += 4
        chunkCRC = nil
        return true
    }

    /// True when at least `count` bytes are unread in the buffer, reading more of the file
    /// if needed (the unread bytes moved to its start first: inflate reads its own copy,
    /// `compressed`).
    private func available(_ count: Int) -> Bool {
        if end - position >= count { return true }
        let unread = end - position
        if unread > 0 { memmove(buffer, buffer + position, unread) }
        position = 0
        end = unread
        while end < count {
            let read = Glibc.read(file, buffer + end, Self.bufferSize - end)
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { return false }
            end += read
        }
        return true
    }

    /// The big-endian word at `p`, as PNGReader reads chunk fields.
    private static func uint32(_ p: UnsafePointer<UInt8>) -> UInt32 {
        PNGReader.Layout.uint32(UnsafeBufferPointer(start: p, count: 4), 0)
    }
}
