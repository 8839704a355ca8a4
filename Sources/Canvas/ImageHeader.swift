/// An encoded image's format and declared size, read from its first bytes without decoding
/// (no allocation in proportion to the image): enough to refuse a decompression bomb or a
/// tile of the wrong size before paying for it.
///
/// Reads the PNG `IHDR` chunk (PNG spec §11.2.2), the first JPEG frame header (`SOFn`,
/// ITU T.81 §B.2.2) and the first WebP chunk (`VP8 `, `VP8L` or `VP8X`, RFC 9649). The
/// decoders read the same fields through their libraries and check them again.
public struct ImageHeader: Hashable, Sendable {
    public let format: ImageFormat
    /// Pixels, as declared (1 or more).
    public let width: Int
    public let height: Int

    public init(format: ImageFormat, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// Reads the header of PNG, JPEG or WebP bytes. Throws `unknownFormat` when the
    /// signature is none of these, `decodeFailed` when the header is cut short or invalid.
    public init(sniffing data: some Collection<UInt8>) throws(CanvasError) {
        // Segments are skipped by their lengths: the JPEG frame header may follow large
        // metadata (EXIF, ICC profiles) and is found in a few steps.
        let bytes = Array(data)
        guard let format = ImageFormat(sniffing: bytes) else { throw .unknownFormat(firstBytes: Self.hex(bytes.prefix(8))) }
        let size: (Int, Int)
        switch format {
        case .png: size = try Self.png(bytes)
        case .jpeg: size = try Self.jpeg(bytes)
        case .webp: size = try Self.webp(bytes)
        }
        guard size.0 > 0, size.1 > 0 else { throw .decodeFailed(format: format, reason: "the header declares an empty image (\(size.0)x\(size.1))") }
        self.init(format: format, width: size.0, height: size.1)
    }

    /// Throws `imageTooLarge` when the declared size is beyond `limits`.
    public func check(_ limits: ImageLimits) throws(CanvasError) {
        try limits.check(width: width, height: height)
    }

    static func hex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        return bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined(separator: " ").ifEmpty("nothing")
    }

    private static func bigEndian(_ b: [UInt8], _ at: Int, count: Int) -> Int {
        (at..<at + count).reduce(0) { $0 << 8 | Int(b[$1]) }
    }

    private static func littleEndian(_ b: [UInt8], _ at: Int, count: Int) -> Int {
        (at..<at + count).reversed().reduce(0) { $0 << 8 | Int(b[$1]) }
    }

    // MARK: PNG: signature, then IHDR first: length 13, "IHDR", width and height (big-endian).

    private static func png(_ b: [UInt8]) throws(CanvasError) -> (Int, Int) {
        guard b.count >= 24 else { throw .decodeFailed(format: .png, reason: "the file ends at byte \(b.count), inside the IHDR header") }
        guard bigEndian(b, 8, count: 4) == 13, b[12..<16].elementsEqual("IHDR".utf8) else {
            throw .decodeFailed(format: .png, reason: "the first chunk (byte 8) is not a 13-byte IHDR")
        }
        let width = bigEndian(b, 16, count: 4), height = bigEndian(b, 20, count: 4)
        // PNG §11.2.2: each at most 2^31 - 1.
        guard width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw .decodeFailed(format: .png, reason: "IHDR size \(width)x\(height) is beyond the PNG maximum of 2^31 - 1")
        }
        return (width, height)
    }

    // MARK: JPEG: markers from SOI up to the first frame header (SOF0-SOF15 but DHT, JPG, DAC).

    private static func jpeg(_ b: [UInt8]) throws(CanvasError) -> (Int, Int) {
        var i = 2
        while true {
            guard i + 1 < b.count else { throw .decodeFailed(format: .jpeg, reason: "no frame header (SOF) before the end (byte \(b.count))") }
            // libjpeg skips stray bytes before a marker (with a warning): so does this.
            guard b[i] == 0xFF else { i += 1; continue }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte before a marker
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { i += 2; continue }  // TEM, RSTn, SOI: no length
            if marker == 0xD9 || marker == 0xDA {
                throw .decodeFailed(format: .jpeg, reason: "marker 0x\(hex([marker])) at byte \(i) comes before any frame header (SOF)")
            }
            guard i + 3 < b.count else { throw .decodeFailed(format: .jpeg, reason: "the file ends at byte \(b.count), inside a marker at byte \(i)") }
            let length = bigEndian(b, i + 2, count: 2)
            guard length >= 2 else { throw .decodeFailed(format: .jpeg, reason: "marker 0x\(hex([marker])) at byte \(i) has length \(length)") }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                // Lf, P, Y (height), X (width), Nf ...
                guard length >= 8, i + 8 < b.count else { throw .decodeFailed(format: .jpeg, reason: "the frame header at byte \(i) is cut short") }
                let height = bigEndian(b, i + 5, count: 2), width = bigEndian(b, i + 7, count: 2)
                if height == 0 { throw .decodeFailed(format: .jpeg, reason: "the frame header at byte \(i) declares height 0 (a DNL marker, which is not supported)") }
                return (width, height)
            }
            i += 2 + length
        }
    }

    // MARK: WebP: "RIFF" size "WEBP", then the first chunk.

    private static func webp(_ b: [UInt8]) throws(CanvasError) -> (Int, Int) {
        guard b.count >= 30 else { throw .decodeFailed(format: .webp, reason: "the file ends at byte \(b.count), inside the header") }
        let chunk = String(decoding: b[12..<16], as: UTF8.self)
        let d = 20  // the chunk's data
        switch chunk {
        case "VP8 ":
            // A key frame: 3-byte frame tag (bit 0 clear), start code 9d 01 2a, then 14-bit sizes.
            guard b[d] & 1 == 0, b[d + 3] == 0x9D, b[d + 4] == 0x01, b[d + 5] == 0x2A else {
                throw .decodeFailed(format: .webp, reason: "the VP8 chunk at byte 12 does not start with a key frame")
            }
            return (littleEndian(b, d + 6, count: 2) & 0x3FFF, littleEndian(b, d + 8, count: 2) & 0x3FFF)
        case "VP8L":
            guard b[d] == 0x2F else { throw .decodeFailed(format: .webp, reason: "the VP8L chunk at byte 12 lacks its signature 0x2f") }
            let bits = littleEndian(b, d + 1, count: 4)
            return ((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1)
        case "VP8X":
            return (littleEndian(b, d + 4, count: 3) + 1, littleEndian(b, d + 7, count: 3) + 1)
        default:
            throw .decodeFailed(format: .webp, reason: "the first chunk (byte 12) is \"\(chunk.unicodeScalars.map { $0.isASCII && $0.value >= 32 ? String($0) : "?" }.joined())\", not VP8, VP8L or VP8X")
        }
    }
}
