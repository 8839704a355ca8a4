import Foundation
public import Canvas

/// Decodes rows ahead on a thread of its own, up to `capacity` bytes, so decoding the image
/// (one core, sequential) overlaps drawing and encoding the tiles (the other core).
final class RowPrefetcher: @unchecked Sendable {  // all state behind `condition`
    private let condition = NSCondition()
    private var rows: [[UInt8]] = []
    private var failure: CanvasError?
    private var stopped = false
    private let limit: Int
    let width: Int
    let height: Int

    init(path: String, limits: ImageLimits, capacity: Int = 16 << 20) throws(CanvasError) {
        // Handed to the decoding thread, which alone uses it from then on.
        nonisolated(unsafe) let reader = try ImageRowReader(path: path, limits: limits)
        width = reader.width
        height = reader.height
        limit = max(8, capacity / (reader.width * 4))
        let thread = Thread { [self] in
            let rowBytes = reader.width * 4
            for _ in 0..<reader.height {
                let row: [UInt8]
                do {
                    // Not zeroed first: the reader writes every byte of a row it returns (a
                    // gigabyte of memset for a 16384 px scan otherwise).
                    row = try [UInt8](unsafeUninitializedCapacity: rowBytes) { buffer, count in
                        try reader.readRow(into: buffer)
                        count = rowBytes
                    }
                } catch let error as CanvasError {
                    condition.lock(); failure = error; condition.broadcast(); condition.unlock()
                    return
                } catch {
                    condition.lock(); failure = .file(path: path, underlying: "\(error)"); condition.broadcast(); condition.unlock()
                    return
                }
                condition.lock()
                while rows.count >= limit && !stopped { condition.wait() }
                if stopped { condition.unlock(); return }
                rows.append(row)
                condition.broadcast()
                condition.unlock()
            }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// The next row, waiting for it if needed.
    func next() throws(CanvasError) -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        while rows.isEmpty && failure == nil { condition.wait() }
        if rows.isEmpty, let failure { throw failure }
        let row = rows.removeFirst()
        condition.broadcast()
        return row
    }

    func stop() {
        condition.lock(); stopped = true; condition.broadcast(); condition.unlock()
    }

    deinit { stop() }
}

/// A window of consecutive rows of the source image, read forward as the pyramid walks
/// down the map: only the rows the current band of tiles needs are in memory.
public final class SourceRows: @unchecked Sendable {  // read-only while tiles are sampled; moved only between bands
    public let path: String
    public let width: Int
    public let height: Int
    public let limits: ImageLimits
    private var reader: RowPrefetcher
    private var nextRow = 0
    /// Rows `start ..< start + count` as straight RGBA.
    private(set) var start = 0
    private(set) var count = 0
    private(set) var pixels: [UInt8] = []

    /// How many bytes of rows the decoding thread may read ahead.
    let readAhead: Int

    /// `readAhead`: a whole window's worth lets the thread decode the next band of rows while
    /// the tiles of this one are drawn (with less, the drawing waits for the rest of it).
    public init(path: String, limits: ImageLimits = .scan, readAhead: Int = 16 << 20) throws(CanvasError) {
        self.path = path
        self.limits = limits
        self.readAhead = readAhead
        reader = try RowPrefetcher(path: path, limits: limits, capacity: readAhead)
        width = reader.width
        height = reader.height
    }

    deinit { reader.stop() }

    /// Makes rows `range` (clamped to the image) available, reading forward; going back
    /// reopens the file.
    func load(_ range: Range<Int>) throws(CanvasError) {
        guard let wanted = clamped(range) else { return }
        if wanted.lowerBound < start {
            reader.stop()
            reader = try RowPrefetcher(path: path, limits: limits, capacity: readAhead)
            nextRow = 0
            start = 0
            count = 0
            pixels = []
        }
        // Drop rows above the window.
        let drop = min(count, wanted.lowerBound - start)
        if drop > 0 {
            pixels.removeFirst(drop * width * 4)
            start += drop
            count -= drop
        }
        if count == 0 { start = nextRow }
        // Skip rows between what the reader is at and the window (nothing kept).
        while nextRow < wanted.lowerBound {
            _ = try reader.next()
            nextRow += 1
            start = nextRow
        }
        while nextRow < wanted.upperBound {
            pixels.append(contentsOf: try reader.next())
            nextRow += 1
            count += 1
        }
    }

    /// True when every row of `range` (clamped) is in the window.
    func holds(_ range: Range<Int>) -> Bool {
        guard let wanted = clamped(range) else { return true }
        return wanted.lowerBound >= start && wanted.upperBound <= start + count
    }

    /// The rows of `range` that are in the image; nil when none is (a range wholly above or
    /// below it would otherwise make a range whose bounds are upside down, a trap).
    func clamped(_ range: Range<Int>) -> Range<Int>? {
        let lower = max(0, range.lowerBound), upper = min(height, range.upperBound)
        return lower < upper ? lower..<upper : nil
    }
}
