import Canvas

/// The declared size of an encoded tile, read from its first bytes without decoding, so a
/// tile that declares 50000 x 50000 px is refused before a pixel is allocated.
///
/// A stand-in until Canvas's `ImageHeader(sniffing:)` and `ImageLimits.tile` (branch
/// `images`) land: then `RemoteTileSource.validated` calls those instead and this file goes.
/// Reads the PNG `IHDR` (PNG §11.2.2), the first JPEG frame header `SOFn` (ITU T.81
/// §B.2.2) and the first WebP chunk (`VP8 `, `VP8L`, `VP8X`; RFC 9649).
struct UpstreamImageHeader: Hashable, Sendable {
    let format: ImageFormat
    let width: Int
    let height: Int

    /// The header of `b`, whose signature said `format`, or why it cannot be read (cut
    /// short, or not a header of that format). Never traps: every index is checked first.
    static func read(_ b: [UInt8], format: ImageFormat) -> Result<UpstreamImageHeader, HeaderProblem> {
        let size: (Int, Int)?
        switch format {
        case .png: size = png(b)
        case .jpeg: size = jpeg(b)
        case .webp: size = webp(b)
        }
        guard let size else { return .failure(HeaderProblem(reason: "no valid \(format.name) header in the first \(min(b.count, 64)) bytes")) }
        return .success(UpstreamImageHeader(format: format, width: size.0, height: size.1))
    }

    struct HeaderProblem: Error, Hashable, Sendable { let reason: String }

    private static func bigEndian(_ b: [UInt8], _ at: Int, _ count: Int) -> Int {
        (at..<at + count).reduce(0) { $0 << 8 | Int(b[$1]) }
    }

    private static func littleEndian(_ b: [UInt8], _ at: Int, _ count: Int) -> Int {
        (at..<at + count).reversed().reduce(0) { $0 << 8 | Int(b[$1]) }
    }

    /// Signature, then IHDR first: length 13, "IHDR", width and height (4 bytes each).
    private static func png(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count >= 24, bigEndian(b, 8, 4) == 13, b[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        return (bigEndian(b, 16, 4), bigEndian(b, 20, 4))
    }

    /// Markers from SOI to the first frame header (SOF0-15 except DHT C4, JPG C8, DAC CC),
    /// skipping segments by their lengths. Each step moves forward, so the walk ends.
    private static func jpeg(_ b: [UInt8]) -> (Int, Int)? {
        var i = 2
        while i + 3 < b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }  // a fill byte
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { i += 2; continue }  // no length
            if marker == 0xD9 || marker == 0xDA { return nil }  // image data before any frame header
            let length = bigEndian(b, i + 2, 2)
            guard length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                guard length >= 8, i + 8 < b.count else { return nil }
                return (bigEndian(b, i + 7, 2), bigEndian(b, i + 5, 2))  // X (width), Y (height)
            }
            i += 2 + length
        }
        return nil
    }

    /// "RIFF" size "WEBP", then the first chunk's header and data from byte 20.
    private static func webp(_ b: [UInt8]) -> (Int, Int)? {
        guard b.count >= 30 else { return nil }
        let d = 20
        switch String(decoding: b[12..<16], as: UTF8.self) {
        case "VP8 ":  // a key frame: tag bit 0 clear, start code 9d 01 2a, 14-bit sizes
            guard b[d] & 1 == 0, b[d + 3] == 0x9D, b[d + 4] == 0x01, b[d + 5] == 0x2A else { return nil }
            return (littleEndian(b, d + 6, 2) & 0x3FFF, littleEndian(b, d + 8, 2) & 0x3FFF)
        case "VP8L":  // signature 0x2f, then 14 bits each of width - 1 and height - 1
            guard b[d] == 0x2F else { return nil }
            let bits = littleEndian(b, d + 1, 4)
            return ((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1)
        case "VP8X":  // flags, reserved, then 24 bits each of width - 1 and height - 1
            return (littleEndian(b, d + 4, 3) + 1, littleEndian(b, d + 7, 3) + 1)
        default:
            return nil
        }
    }
}
