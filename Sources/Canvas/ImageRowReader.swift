import Foundation
internal import CPNGCodec
internal import CJPEGReader
internal import CTIFFReader

/// Reads an image file top to bottom, one row of straight RGBA at a time, so a scan of
/// 16384 x 16384 pixels (1 GB as RGBA) never has to be in memory whole. PNG (not
/// interlaced), baseline JPEG and TIFF (stripped or tiled) stream; WebP, interlaced PNG
/// and progressive JPEG are held whole by their decoders, so they must also fit
/// `ImageLimits.default`, as must one TIFF strip or row of tiles.
///
/// The declared size is checked against `limits` before anything in proportion to it is
/// allocated; errors are `CanvasError.file` naming the path.
public final class ImageRowReader {
    public let path: String
    public let width: Int
    public let height: Int
    public let limits: ImageLimits
    /// The row the next `readRow` returns.
    public private(set) var nextRow = 0
    /// True while PNGRowStream reads the rows (for the tests and the `pngrows` fuzz target).
    @_spi(PNGDecoders) public var streams: Bool {
        if case .pngStream = backend { return true }
        return false
    }
    /// True when PNGRowStream read the first row, whether or not libpng took over later.
    @_spi(PNGDecoders) public private(set) var streamedFromStart = false
    private var backend: Backend

    private enum Backend {
        /// PNGs PNGReader reads, inflated by igzip; libpng takes over on anything it does not.
        case pngStream(PNGRowStream)
        case png(OpaquePointer)
        case jpeg(OpaquePointer)
        case tiff(OpaquePointer)
        case whole(RGBAImage)
    }

    public init(path: String, limits: ImageLimits = .scan) throws(CanvasError) {
        self.path = path
        self.limits = limits
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .file(path: path, underlying: "no such file or not readable") }
        // Enough for the header of any format (JPEG metadata segments come before the frame
        // header): a size beyond the limits is refused on the file's own word, before a
        // library sees it.
        let head = [UInt8]((try? handle.read(upToCount: 1 << 18)) ?? Data())
        try? handle.close()
        func fail(_ error: CanvasError) -> CanvasError {
            if case .file = error { return error }
            return .file(path: path, underlying: error.description)
        }
        if let header = try? ImageHeader(sniffing: head), !limits.allows(width: header.width, height: header.height) {
            throw fail(.imageTooLarge(width: header.width, height: header.height, limit: limits))
        }
        var message = [CChar](repeating: 0, count: 256)
        var w: UInt32 = 0, h: UInt32 = 0
        // What cannot be streamed must fit both the caller's limits and the default ones.
        let whole = limits.intersection(.default)
        func check(_ limits: ImageLimits) throws(CanvasError) {
            do { try limits.check(width: Int(w), height: Int(h)) } catch { throw fail(error) }
        }
        func decodeWhole() throws(CanvasError) -> Backend {
            do {
                let image = try RGBAImage(contentsOf: URL(fileURLWithPath: path), limits: whole)
                (w, h) = (UInt32(image.width), UInt32(image.height))
                return .whole(image)
            } catch {
                throw fail(error)
            }
        }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]), let header = try? ImageHeader(sniffing: head),
           let stream = PNGRowStream(path: path, width: header.width, height: header.height) {
            backend = .pngStream(stream)
            streamedFromStart = true
            width = header.width
            height = header.height
            // Within the limits: checked on the header's word above.
            return
        } else if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            var interlaced: Int32 = 0
            if let reader = tk_png_reader_open(path, &w, &h, &interlaced, &message, 256) {
                backend = .png(reader)
                // From here on `deinit` closes the reader, whatever is thrown.
                width = Int(w)
                height = Int(h)
                try check(limits)
                guard tk_png_reader_start(reader, &message, 256) == 0 else {
                    throw .file(path: path, underlying: "cannot decode PNG: " + Self.text(message))
                }
                return
            } else if interlaced != 0 {
                try check(whole)
                backend = try decodeWhole()
            } else {
                throw .file(path: path, underlying: "cannot decode PNG: " + Self.text(message))
            }
        } else if head.starts(with: [0xFF, 0xD8]) {
            var multiscan: Int32 = 0
            guard let reader = tk_jpeg_reader_open(path, &w, &h, &multiscan, &message, 256) else {
                throw .file(path: path, underlying: "cannot decode JPEG: " + Self.text(message))
            }
            backend = .jpeg(reader)
            width = Int(w)
            height = Int(h)
            // A progressive JPEG is buffered whole by libjpeg (about 6 bytes a pixel).
            try check(multiscan != 0 ? whole : limits)
            guard tk_jpeg_reader_start(reader, UInt64(max(0, whole.maxPixels)) * 8, &message, 256) == 0 else {
                throw .file(path: path, underlying: "cannot decode JPEG: " + Self.text(message))
            }
            return
        } else if head.starts(with: [0x49, 0x49, 0x2A, 0x00]) || head.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            var bandRows: UInt32 = 0, tileWidth: UInt32 = 0
            guard let reader = tk_tiff_reader_open(path, UInt64(max(0, whole.maxPixels)) * 4, &w, &h, &bandRows, &tileWidth, &message, 256) else {
                throw .file(path: path, underlying: "cannot decode TIFF: " + Self.text(message))
            }
            backend = .tiff(reader)
            width = Int(w)
            height = Int(h)
            try check(limits)
            // One strip (the whole image when it has one) or one row of tiles is decoded at once,
            // and a tile may be wider than the image.
            let bandWidth = max(Int(w), Int(tileWidth))
            guard whole.allows(width: bandWidth, height: Int(bandRows)) else {
                throw .file(path: path, underlying: "its strips or tiles are \(bandRows) rows high: "
                    + "\(bandWidth) x \(bandRows) pixels decoded at once is more than allowed (\(whole))")
            }
            guard tk_tiff_reader_start(reader, &message, 256) == 0 else {
                throw .file(path: path, underlying: "cannot decode TIFF: " + Self.text(message))
            }
            return
        } else {
            backend = try decodeWhole()
        }
        width = Int(w)
        height = Int(h)
    }

    /// A C message buffer as text (up to its NUL).
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        switch backend {
        case .png(let reader): tk_png_reader_close(reader)
        case .jpeg(let reader): tk_jpeg_reader_close(reader)
        case .tiff(let reader): tk_tiff_reader_close(reader)
        case .pngStream, .whole: break
        }
    }

    /// libpng's reader from the file's start, past the `rows` rows the stream returned:
    /// it decodes the rest, or says what is wrong with the file.
    private func libpngReader(skipping rows: Int, rowBuffer: UnsafeMutablePointer<UInt8>) throws(CanvasError) -> OpaquePointer {
        var message = [CChar](repeating: 0, count: 256)
        var w: UInt32 = 0, h: UInt32 = 0, interlaced: Int32 = 0
        guard let reader = tk_png_reader_open(path, &w, &h, &interlaced, &message, 256) else {
            throw .file(path: path, underlying: "cannot decode PNG: " + Self.text(message))
        }
        guard Int(w) == width, Int(h) == height, tk_png_reader_start(reader, &message, 256) == 0 else {
            tk_png_reader_close(reader)
            throw .file(path: path, underlying: "cannot decode PNG: " + (message[0] == 0 ? "the file changed while read" : Self.text(message)))
        }
        for row in 0..<rows where tk_png_reader_row(reader, rowBuffer, &message, 256) != 0 {
            tk_png_reader_close(reader)
            throw .file(path: path, underlying: "cannot decode PNG row \(row): " + Self.text(message))
        }
        return reader
    }

    /// Reads the next row into `row`, which must hold `width * 4` bytes (straight RGBA).
    public func readRow(into row: UnsafeMutableBufferPointer<UInt8>) throws(CanvasError) {
        guard nextRow < height else { throw .file(path: path, underlying: "read past the last row") }
        guard let base = row.baseAddress, row.count >= width * 4 else {
            throw .invalidOption("a row buffer of \(row.count) bytes for a row of \(width * 4)")
        }
        var message = [CChar](repeating: 0, count: 256)
        switch backend {
        case .pngStream(let stream):
            if !stream.readRow(into: base) {
                let reader = try libpngReader(skipping: nextRow, rowBuffer: base)
                backend = .png(reader)
                if tk_png_reader_row(reader, base, &message, 256) != 0 {
                    throw .file(path: path, underlying: "cannot decode PNG row \(nextRow): " + Self.text(message))
                }
            }
        case .png(let reader):
            if tk_png_reader_row(reader, base, &message, 256) != 0 {
                throw .file(path: path, underlying: "cannot decode PNG row \(nextRow): " + Self.text(message))
            }
        case .jpeg(let reader):
            if tk_jpeg_reader_row(reader, base, &message, 256) != 0 {
                throw .file(path: path, underlying: "cannot decode JPEG row \(nextRow): " + Self.text(message))
            }
        case .tiff(let reader):
            if tk_tiff_reader_row(reader, base, &message, 256) != 0 {
                throw .file(path: path, underlying: "cannot decode TIFF row \(nextRow): " + Self.text(message))
            }
        case .whole(let image):
            let start = nextRow * width * 4
            image.pixels.withUnsafeBufferPointer { pixels in
                _ = row.update(fromContentsOf: pixels[start..<start + width * 4])
            }
        }
        nextRow += 1
    }
}
