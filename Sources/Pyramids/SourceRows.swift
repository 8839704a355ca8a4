import Foundation
public import Canvas

/// A window of consecutive rows of the source image, read forward as the pyramid walks
/// down the map: only the rows the current band of tiles needs are in memory.
public final class SourceRows: @unchecked Sendable {  // read-only while tiles are sampled; moved only between bands
    public let path: String
    public let width: Int
    public let height: Int
    private var reader: ImageRowReader
    /// Rows `start ..< start + count` as straight RGBA.
    private(set) var start = 0
    private(set) var count = 0
    private(set) var pixels: [UInt8] = []

    public init(path: String) throws(CanvasError) {
        self.path = path
        reader = try ImageRowReader(path: path)
        width = reader.width
        height = reader.height
    }

    /// Makes rows `range` (clamped to the image) available, reading forward; going back
    /// reopens the file.
    func load(_ range: Range<Int>) throws(CanvasError) {
        let wanted = max(0, range.lowerBound)..<min(height, range.upperBound)
        guard !wanted.isEmpty else { return }
        let rowBytes = width * 4
        if wanted.lowerBound < start {
            reader = try ImageRowReader(path: path)
            start = 0
            count = 0
            pixels = []
        }
        // Drop rows above the window.
        let drop = min(count, wanted.lowerBound - start)
        if drop > 0 {
            pixels.removeFirst(drop * rowBytes)
            start += drop
            count -= drop
        }
        if count == 0 { start = reader.nextRow }
        // Skip rows between what the reader is at and the window (nothing kept).
        var scratch = [UInt8](repeating: 0, count: rowBytes)
        while reader.nextRow < wanted.lowerBound {
            try scratch.withUnsafeMutableBufferPointer { buffer throws(CanvasError) in try reader.readRow(into: buffer.baseAddress!) }
            start = reader.nextRow
        }
        while reader.nextRow < wanted.upperBound {
            let offset = pixels.count
            pixels.append(contentsOf: repeatElement(0, count: rowBytes))
            try pixels.withUnsafeMutableBufferPointer { buffer throws(CanvasError) in try reader.readRow(into: buffer.baseAddress! + offset) }
            count += 1
        }
    }

    /// True when every row of `range` (clamped) is in the window.
    func holds(_ range: Range<Int>) -> Bool {
        let wanted = max(0, range.lowerBound)..<min(height, range.upperBound)
        return wanted.isEmpty || (wanted.lowerBound >= start && wanted.upperBound <= start + count)
    }
}
