import Foundation
import Testing
import Canvas
@testable import TileSources

/// What an upstream answer must be to become a tile: an image of its type, within the tile
/// size limit (read from the header, before decoding), that decodes whole.
@Suite struct UpstreamTileValidationTests {
    static let encodings: [EncodingOptions] = [.png(), .jpeg(), .webp(), .webp(lossless: true)]

    /// Real encodings pass; every prefix that cuts their image data is refused without a
    /// trap (a PNG without its 12-byte IEND trailer still holds every pixel, and passes).
    @Test(arguments: encodings)
    func realTilesPassAndTheirPrefixesAreRefused(encoding: EncodingOptions) throws {
        let bytes = try RGBAImage(width: 300, height: 200, color: Color(hex: "#336699")!).encoded(encoding)
        let (format, image) = try RemoteTileSource.validated(bytes, contentType: nil, url: "u", maxSide: 4096)
        // The pixels that were checked are handed on, so the tile is not decoded again to be drawn.
        let again = try RGBAImage(decoding: bytes)
        #expect(format == encoding.format && image == again)
        for length in stride(from: 0, to: bytes.count - 12, by: max(1, bytes.count / 200)) {
            #expect(throws: RemoteTileError.self) { try RemoteTileSource.validated(Array(bytes.prefix(length)), contentType: nil, url: "u", maxSide: 4096) }
        }
    }

    /// The decompression bombs of issue 11, as headers: each declared size is read exactly,
    /// and validation refuses it by size before any decoder runs.
    @Test(arguments: [
        (ImageFormat.png, Bombs.png, 50000, 50000),
        (.jpeg, Bombs.jpeg, 65000, 65000),
        (.webp, Bombs.webp, 16383, 16383),
        (.jpeg, Bombs.jpegAfterMetadata, 4097, 300),
    ])
    func refusesDeclaredGiants(format: ImageFormat, bytes: [UInt8], width: Int, height: Int) throws {
        let header = try ImageHeader(sniffing: bytes)
        #expect(header.width == width && header.height == height)
        #expect(throws: RemoteTileError.tileTooLarge(url: "u", width: width, height: height, maxSide: 4096)) {
            try RemoteTileSource.validated(bytes, contentType: format.mimeType, url: "u", maxSide: 4096)
        }
    }

    /// Segment lengths that run past the end, a scan before any frame header, a chunk
    /// that is not VP8: refused without a trap.
    @Test func malformedHeadersAreRefused() {
        let cases: [(ImageFormat, [UInt8])] = [
            (.jpeg, [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0x00]),
            (.jpeg, [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08, 0, 0, 0, 0, 0, 0]),
            (.jpeg, [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00, 0xFF, 0xC0]),
            (.webp, Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPJUNK".utf8) + Array(repeating: 0, count: 20)),
            (.png, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("<html><body>502</body></html>".utf8)),
        ]
        for (format, bytes) in cases {
            #expect(throws: RemoteTileError.self, "\(format) \(bytes.prefix(12))") {
                try RemoteTileSource.validated(bytes, contentType: format.mimeType, url: "u", maxSide: 4096)
            }
        }
    }

    /// Bytes whose header is fine but whose body is cut are refused by the decode.
    @Test func aCutTileFailsItsDecode() throws {
        let bytes = try RGBAImage(width: 256, height: 256, color: Color(hex: "#336699")!).encoded(.jpeg())
        #expect(throws: Never.self) { try RemoteTileSource.validated(bytes, contentType: "image/jpeg", url: "u", maxSide: 4096) }
        do {
            _ = try RemoteTileSource.validated(Array(bytes.prefix(bytes.count / 2)), contentType: "image/jpeg", url: "u", maxSide: 4096)
            Issue.record("a cut JPEG passed")
        } catch {
            guard case .undecodable("u", .jpeg, _) = error else { Issue.record("\(error)"); return }
        }
    }
}

/// Headers of the issue's bombs, built byte by byte (no pixel data behind them).
enum Bombs {
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        + [0x00, 0x00, 0xC3, 0x50, 0x00, 0x00, 0xC3, 0x50, 8, 6, 0, 0, 0, 0, 0, 0, 0]
    /// SOI, then SOF0: length 17, precision 8, height 65000, width 65000, 3 components.
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0xFD, 0xE8, 0xFD, 0xE8, 0x03,
                                0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
    /// RIFF/WEBP with a VP8X chunk: canvas 16383 x 16383 (stored minus one, 24 bits each).
    static let webp: [UInt8] = Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8X".utf8) + [10, 0, 0, 0]
        + [0, 0, 0, 0] + [0xFE, 0x3F, 0x00] + [0xFE, 0x3F, 0x00] + Array(repeating: 0, count: 8)
    /// An APP1 segment of 100 bytes before SOF2 (progressive): 4097 wide, 300 high.
    static let jpegAfterMetadata: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 100] + Array(repeating: 0x45, count: 98)
        + [0xFF, 0xC2, 0x00, 0x11, 0x08, 0x01, 0x2C, 0x10, 0x01, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
}
