import Foundation
internal import CPNGCodec
internal import CJPEGReader
internal import CTIFFReader

/// Reads an image file top to bottom, one row of straight RGBA at a time, so a scan of
/// 16384 x 16384 pixels (1 GB as RGBA) never has to be in memory whole. PNG (not
/// interlaced), JPEG and TIFF stream; WebP and interlaced PNG are decoded whole first.
public final class ImageRowReader {
    public let path: String
    public let width: Int
    public let height: Int
    /// The row the next `readRow` returns.
    public private(set) var nextRow = 0
    private let backend: Backend

    private enum Backend {
        case png(OpaquePointer)
        case jpeg(OpaquePointer)
        case tiff(OpaquePointer)
        case whole(RGBAImage)
    }

    public init(path: String) throws(CanvasError) {
        self.path = path
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .file(path: path, underlying: "no such file or not readable") }
        let head = [UInt8]((try? handle.read(upToCount: 8)) ?? Data())
        try? handle.close()
        var message = [CChar](repeating: 0, count: 256)
        var w: UInt32 = 0, h: UInt32 = 0
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            var interlaced: Int32 = 0
            if let reader = tk_png_reader_open(path, &w, &h, &interlaced, &message, 256) {
                backend = .png(reader)
            } else if interlaced != 0 {
                let image = try RGBAImage(contentsOf: URL(fileURLWithPath: path))
                (w, h) = (UInt32(image.width), UInt32(image.height))
                backend = .whole(image)
            } else {
                throw .file(path: path, underlying: "cannot decode PNG: " + Self.text(message))
            }
        } else if head.starts(with: [0xFF, 0xD8]) {
            guard let reader = tk_jpeg_reader_open(path, &w, &h, &message, 256) else {
                throw .file(path: path, underlying: "cannot decode JPEG: " + Self.text(message))
            }
            backend = .jpeg(reader)
        } else if head.starts(with: [0x49, 0x49, 0x2A, 0x00]) || head.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            guard let reader = tk_tiff_reader_open(path, &w, &h, &message, 256) else {
                throw .file(path: path, underlying: "cannot decode TIFF: " + Self.text(message))
            }
            backend = .tiff(reader)
        } else {
            let image = try RGBAImage(contentsOf: URL(fileURLWithPath: path))
            (w, h) = (UInt32(image.width), UInt32(image.height))
            backend = .whole(image)
        }
        width = Int(w)
        height = Int(h)
        guard width > 0, height > 0 else { throw .file(path: path, underlying: "the image is empty") }
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
        case .whole: break
        }
    }

    /// Reads the next row into `row` (`width * 4` bytes of straight RGBA).
    public func readRow(into row: UnsafeMutablePointer<UInt8>) throws(CanvasError) {
        guard nextRow < height else { throw .file(path: path, underlying: "read past the last row") }
        var message = [CChar](repeating: 0, count: 256)
        switch backend {
        case .png(let reader):
            if tk_png_reader_row(reader, row, &message, 256) != 0 {
                throw .file(path: path, underlying: "cannot decode PNG row \(nextRow): " + Self.text(message))
            }
        case .jpeg(let reader):
            if tk_jpeg_reader_row(reader, row, &message, 256) != 0 {
                throw .file(path: path, underlying: "cannot decode JPEG row \(nextRow): " + Self.text(message))
            }
        case .tiff(let reader):
            if tk_tiff_reader_row(reader, row, &message, 256) != 0 {
                throw .file(path: path, underlying: "cannot decode TIFF row \(nextRow): " + Self.text(message))
            }
        case .whole(let image):
            image.pixels.withUnsafeBufferPointer { pixels in
                row.update(from: pixels.baseAddress! + nextRow * width * 4, count: width * 4)
            }
        }
        nextRow += 1
    }
}
