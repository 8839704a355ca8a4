import Foundation
import Testing
@testable import Canvas
import CTIFFReader
import TestSupport

/// The hostile images of issue 11, committed under Fixtures/ (made by make-hostile-images.py).
func fixture(_ name: String, filePath: String = #filePath) -> URL {
    URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
}

func fixtureBytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: fixture(name))) }

@Suite struct ImageLimitsTests {
    @Test func aScanPassesTheDefaultAndABombDoesNot() {
        #expect(ImageLimits.default.allows(width: 16384, height: 16384))
        #expect(ImageLimits.default.allows(width: 32768, height: 8192))
        #expect(!ImageLimits.default.allows(width: 16385, height: 16384))
        #expect(!ImageLimits.default.allows(width: 50000, height: 50000))
        #expect(!ImageLimits.default.allows(width: 40000, height: 10))  // a side beyond 32768
        #expect(ImageLimits.tile.allows(width: 4096, height: 4096))
        #expect(!ImageLimits.tile.allows(width: 4097, height: 1))
        #expect(ImageLimits.scan.allows(width: 65536, height: 65536))
        #expect(!ImageLimits.scan.allows(width: 65536, height: 65537))
        #expect(!ImageLimits.default.allows(width: 0, height: 10))
    }

    @Test func theProductCannotOverflow() throws {
        let unbounded = ImageLimits(maxSide: .max, maxPixels: .max)
        #expect(!unbounded.allows(width: 1 << 62, height: 4))
        #expect(unbounded.allows(width: 1 << 30, height: 1 << 30))
        #expect(!unbounded.allows(width: 2_147_483_647, height: 2_147_483_647))  // 4.6e18 pixels: 4 bytes each overflow
        #expect(throws: CanvasError.imageTooLarge(width: 2_147_483_647, height: 2_147_483_647, limit: unbounded)) {
            var bytes = try fixtureBytes("png-wide-2147483647x1.png")
            bytes[20...23] = [0x7F, 0xFF, 0xFF, 0xFF]
            return try RGBAImage(decoding: bytes, limits: unbounded)
        }
        #expect(throws: CanvasError.imageTooLarge(width: 1 << 62, height: 4, limit: unbounded)) { try unbounded.check(width: 1 << 62, height: 4) }
        #expect(throws: CanvasError.invalidSize(width: -1, height: 4)) { try unbounded.check(width: -1, height: 4) }
        #expect(ImageLimits.scan.intersection(.default) == ImageLimits(maxSide: 32768, maxPixels: 16384 * 16384))
    }
}

@Suite struct ImageHeaderTests {
    @Test func readsEveryFormatsSizeWithoutDecoding() throws {
        let image = RGBAImage(width: 37, height: 21, color: Color(red: 0.2, green: 0.5, blue: 0.7, alpha: 0.5))
        let encodings: [(EncodingOptions, ImageFormat)] = [(.png(), .png), (.jpeg(), .jpeg), (.webp(), .webp),
                                                           (.webp(lossless: true), .webp)]
        for (options, format) in encodings {
            let bytes = try image.encoded(options)
            #expect(try ImageHeader(sniffing: bytes) == ImageHeader(format: format, width: 37, height: 21), "\(options)")
        }
        // An opaque lossy WebP is a bare VP8 chunk; the one with alpha above was VP8X.
        let opaque = try RGBAImage(width: 300, height: 5, color: .white).encoded(.webp())
        #expect(String(decoding: opaque[12..<16], as: UTF8.self) == "VP8 ")
        #expect(try ImageHeader(sniffing: opaque) == ImageHeader(format: .webp, width: 300, height: 5))
    }

    @Test(arguments: [
        ("png-bomb-50000x50000.png", ImageHeader(format: .png, width: 50000, height: 50000)),
        ("png-wide-2147483647x1.png", ImageHeader(format: .png, width: 2_147_483_647, height: 1)),
        ("jpeg-bomb-65000x65000.jpg", ImageHeader(format: .jpeg, width: 65000, height: 65000)),
        ("webp-bomb-16383x16383.webp", ImageHeader(format: .webp, width: 16383, height: 16383)),
        ("webp-vp8x-16777216x16777216.webp", ImageHeader(format: .webp, width: 16_777_216, height: 16_777_216)),
    ])
    func bombsDeclareTheirSize(name: String, header: ImageHeader) throws {
        #expect(try ImageHeader(sniffing: fixtureBytes(name)) == header)
    }

    @Test func brokenHeadersAreNamed() throws {
        #expect(throws: CanvasError.unknownFormat(firstBytes: "nothing")) { try ImageHeader(sniffing: [UInt8]()) }
        #expect(throws: CanvasError.decodeFailed(format: .png, reason: "the file ends at byte 12, inside the IHDR header")) {
            try ImageHeader(sniffing: fixtureBytes("png-bomb-50000x50000.png").prefix(12))
        }
        #expect(throws: CanvasError.decodeFailed(format: .jpeg, reason: "marker 0xda at byte 590 comes before any frame header (SOF)")) {
            try ImageHeader(sniffing: fixtureBytes("jpeg-no-frame-header.jpg"))
        }
        #expect(throws: CanvasError.decodeFailed(format: .jpeg, reason: "no frame header (SOF) before the end (byte 100)")) {
            try ImageHeader(sniffing: fixtureBytes("jpeg-bomb-65000x65000.jpg").prefix(100))
        }
        var zeroWidth = try fixtureBytes("jpeg-bomb-65000x65000.jpg")
        zeroWidth[165] = 0; zeroWidth[166] = 0
        #expect(throws: CanvasError.decodeFailed(format: .jpeg, reason: "the header declares an empty image (0x65000)")) { try ImageHeader(sniffing: zeroWidth) }
        var riff = try fixtureBytes("webp-bomb-16383x16383.webp")
        riff.replaceSubrange(12..<16, with: Array("ANIM".utf8))
        #expect(throws: CanvasError.decodeFailed(format: .webp, reason: "the first chunk (byte 12) is \"ANIM\", not VP8, VP8L or VP8X")) {
            try ImageHeader(sniffing: riff)
        }
    }
}

@Suite struct HostileImageTests {
    /// Refused on the declared size, before a pixel is allocated.
    @Test(arguments: [
        ("png-bomb-50000x50000.png", ImageLimits.default, 50000, 50000),
        ("png-wide-2147483647x1.png", .default, 2_147_483_647, 1),
        ("jpeg-bomb-65000x65000.jpg", .default, 65000, 65000),
        ("webp-bomb-16383x16383.webp", .tile, 16383, 16383),
        ("webp-vp8x-16777216x16777216.webp", .default, 16_777_216, 16_777_216),
    ])
    func bombsAreRefusedBeforeDecoding(name: String, limits: ImageLimits, width: Int, height: Int) throws {
        let bytes = try fixtureBytes(name)
        // The size is refused from the header: the error says so, no buffer is allocated.
        #expect(throws: CanvasError.imageTooLarge(width: width, height: height, limit: limits)) { try RGBAImage(decoding: bytes, limits: limits) }
        #expect(throws: CanvasError.file(path: fixture(name).path, underlying: CanvasError.imageTooLarge(width: width, height: height, limit: limits).description)) {
            try RGBAImage(contentsOf: fixture(name), limits: limits)
        }
    }

    /// A bomb within the limits whose data ends early fails quickly, without filling its buffer.
    @Test func aBombWithinTheLimitsFailsAsDamaged() throws {
        let bytes = try fixtureBytes("webp-bomb-16383x16383.webp")
        #expect(ImageLimits.default.allows(width: 16383, height: 16383))
        #expect(throws: CanvasError.decodeFailed(format: .webp, reason: "libwebp could not decode 48 bytes (damaged or cut short)")) {
            try RGBAImage(decoding: bytes)
        }
    }

    @Test(arguments: [("png-truncated.png", ImageFormat.png), ("png-truncated-near-end.png", .png), ("jpeg-truncated.jpg", .jpeg),
                      ("webp-truncated.webp", .webp)])
    func truncatedImagesAreErrors(name: String, format: ImageFormat) throws {
        let bytes = try fixtureBytes(name)
        #expect {
            try RGBAImage(decoding: bytes)
        } throws: { error in
            guard case .decodeFailed(let failed, let reason) = error as? CanvasError else { return false }
            return failed == format && !reason.isEmpty
        }
    }

    /// Each scan of a progressive JPEG is a pass over the whole image: 883 scans of a few
    /// bytes each would cost a large image minutes. 500 is where libjpeg-turbo's tools stop.
    @Test func aJPEGOfTooManyScansIsRefused() throws {
        let fine = try RGBAImage(decoding: fixtureBytes("jpeg-141-scans.jpg"))
        #expect(fine.width == 8 && fine[3, 5] == Pixel(red: 128, green: 128, blue: 128))
        #expect(throws: CanvasError.decodeFailed(format: .jpeg, reason: "Progressive JPEG image has more than 500 scans")) {
            try RGBAImage(decoding: fixtureBytes("jpeg-883-scans.jpg"))
        }
        let path = fixture("jpeg-883-scans.jpg").path
        #expect(throws: CanvasError.file(path: path, underlying: "cannot decode JPEG: more than 500 scans (a progressive JPEG that would take too long)")) {
            try ImageRowReader(path: path)
        }
        _ = try ImageRowReader(path: fixture("jpeg-141-scans.jpg").path)
    }

    /// The zlib Adler-32 of a PNG's pixels is not checked (it cost a tenth of a snapshot);
    /// the chunk CRC-32 over the same compressed bytes is, so a changed byte is still refused.
    @Test func aWrongAdler32DecodesButAChangedIDATByteIsRefused() throws {
        let good = try RGBAImage(decoding: fixtureBytes("png-16x16-noise.png"))
        #expect(try RGBAImage(decoding: fixtureBytes("png-wrong-adler32.png")) == good)
        #expect(throws: CanvasError.decodeFailed(format: .png, reason: "IDAT: CRC error")) {
            try RGBAImage(decoding: fixtureBytes("png-idat-crc-mismatch.png"))
        }
    }

    @Test func theSizeTheLibraryReadsMustBeTheCheckedOne() throws {
        // A second IHDR-sized lie cannot happen in PNG (libpng reads the same IHDR), but the
        // decoders still compare: here a PNG whose IHDR length field is wrong is refused by both.
        var bytes = try RGBAImage(width: 4, height: 4, color: .white).encoded()
        bytes[11] = 14
        #expect(throws: CanvasError.decodeFailed(format: .png, reason: "the first chunk (byte 8) is not a 13-byte IHDR")) { try RGBAImage(decoding: bytes) }
    }
}

@Suite struct HostileRowReaderTests {
    func expectTooLarge(_ name: String, _ limits: ImageLimits, _ width: Int, _ height: Int) {
        let path = fixture(name).path
        #expect(throws: CanvasError.file(path: path, underlying: CanvasError.imageTooLarge(width: width, height: height, limit: limits).description)) {
            try ImageRowReader(path: path, limits: limits)
        }
    }

    @Test func bombsAreRefusedBeforeStreaming() {
        expectTooLarge("png-bomb-50000x50000.png", .default, 50000, 50000)
        expectTooLarge("jpeg-bomb-65000x65000.jpg", .default, 65000, 65000)
        expectTooLarge("tiff-bomb-200000x200000.tif", .scan, 200_000, 200_000)
        expectTooLarge("png-wide-2147483647x1.png", .scan, 2_147_483_647, 1)
        expectTooLarge("webp-vp8x-16777216x16777216.webp", .scan, 16_777_216, 16_777_216)
        // --max-pixels of a pyramid: the same file, a custom limit.
        expectTooLarge("png-bomb-50000x50000.png", ImageLimits(maxSide: 131_072, maxPixels: 100_000_000), 50000, 50000)
    }

    /// A scan of 50000 x 50000 may stream (rows, not the image, are in memory); this one ends
    /// after 64 rows, which is an error at row 64.
    @Test func aLargeScanStreamsAndItsEndIsAnError() throws {
        let path = fixture("png-bomb-50000x50000.png").path
        let reader = try ImageRowReader(path: path, limits: .scan)
        #expect(reader.width == 50000 && reader.height == 50000)
        var row = [UInt8](repeating: 0, count: 50000 * 4)
        for _ in 0..<64 { try row.withUnsafeMutableBufferPointer { try reader.readRow(into: $0) } }
        #expect(row[0] == 0 && row[3] == 255)
        #expect {
            try row.withUnsafeMutableBufferPointer { try reader.readRow(into: $0) }
        } throws: { error in
            guard case .file(path, let underlying) = error as? CanvasError else { return false }
            return underlying.hasPrefix("cannot decode PNG row 64: ")
        }
        // A buffer too small for a row is refused, not overrun.
        var short = [UInt8](repeating: 0, count: 16)
        #expect(throws: CanvasError.invalidOption("a row buffer of 16 bytes for a row of 200000")) {
            try short.withUnsafeMutableBufferPointer { try reader.readRow(into: $0) }
        }
    }

    /// libjpeg holds a progressive JPEG whole however it is read: 20000 x 20000 passes what a
    /// scan may stream, not what may be held whole; an 8 x 8 one reads as any other.
    @Test func aProgressiveJPEGMustFitTheWholeImageLimit() throws {
        expectTooLarge("jpeg-progressive-20000x20000.jpg", ImageLimits.scan.intersection(.default), 20000, 20000)
        let reader = try ImageRowReader(path: fixture("jpeg-progressive-8x8.jpg").path)
        var row = [UInt8](repeating: 0, count: 8 * 4)
        for _ in 0..<8 { try row.withUnsafeMutableBufferPointer { try reader.readRow(into: $0) } }
        #expect(try RGBAImage(decoding: fixtureBytes("jpeg-progressive-8x8.jpg")).width == 8)
    }

    /// A reader refused after its file was opened (the size is the library's to read) closes it.
    @Test func refusedReadersCloseTheirFiles() throws {
        let names = ["jpeg-progressive-20000x20000.jpg", "tiff-one-strip-30000x30000.tif", "tiff-tile-1048576-wide.tif", "jpeg-883-scans.jpg"]
        let paths = Set(names.map { fixture($0).resolvingSymlinksInPath().path })
        // Only descriptors of these files count: other suites open files and sockets meanwhile.
        func openFixtures() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)).map(paths.contains) ?? false
            }.count
        }
        for name in names {
            for _ in 0..<100 { _ = try? ImageRowReader(path: fixture(name).path) }
        }
        #expect(try openFixtures() == 0)
    }

    /// A TIFF of one 30000-row strip would decode 900 M pixels at once: refused.
    @Test func aTIFFStripLargerThanTheDefaultIsRefused() {
        let path = fixture("tiff-one-strip-30000x30000.tif").path
        #expect(throws: CanvasError.file(path: path, underlying: "its strips or tiles are 30000 rows high: 30000 x 30000 pixels decoded at once is more than allowed (at most 32768 px a side and 268435456 pixels)")) {
            try ImageRowReader(path: path, limits: .scan)
        }
    }

    /// A tile may be wider than its image: 1048576 x 16 for a 64 px image is 16 M pixels at once.
    @Test func aTIFFTileWiderThanAllowedIsRefused() {
        let path = fixture("tiff-tile-1048576-wide.tif").path
        #expect(throws: CanvasError.file(path: path, underlying: "its strips or tiles are 16 rows high: 1048576 x 16 pixels decoded at once is more than allowed (at most 32768 px a side and 268435456 pixels)")) {
            try ImageRowReader(path: path, limits: .scan)
        }
    }

    /// The C reader itself refuses a band whose bytes would wrap `size_t` (4294901776 x
    /// 1140850704 pixels in one strip, 4 bytes each, is past 2^64), whatever its caller checked.
    @Test func theTIFFReaderRefusesABandPastSizeT() throws {
        let path = repositoryRoot().appendingPathComponent("Fuzz/crashes/tiff/declares-4294901776-wide.tif").path
        var width: UInt32 = 0, height: UInt32 = 0, bandRows: UInt32 = 0, tileWidth: UInt32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let reader = try #require(tk_tiff_reader_open(path, UInt64.max, &width, &height, &bandRows, &tileWidth, &message, 256),
                                  "\(ImageRowReader.text(message))")
        defer { tk_tiff_reader_close(reader) }
        #expect((width, height, bandRows) == (4_294_901_776, 1_140_850_704, 1_140_850_704))
        #expect(tk_tiff_reader_start(reader, &message, 256) == -1)
        #expect(ImageRowReader.text(message) == "1140850704 rows of 4294901776 pixels do not fit in memory")
    }

    @Test func aTruncatedTIFFIsAnErrorNotAGreyBand() throws {
        let path = fixture("tiff-truncated.tif").path
        let reader = try ImageRowReader(path: path)
        var row = [UInt8](repeating: 0, count: reader.width * 4)
        var failure: CanvasError?
        for _ in 0..<reader.height {
            do { try row.withUnsafeMutableBufferPointer { buffer throws(CanvasError) in try reader.readRow(into: buffer) } } catch { failure = error; break }
        }
        guard case .file(path, let underlying) = failure else { Issue.record("read to the end: \(String(describing: failure))"); return }
        #expect(underlying.hasPrefix("cannot decode TIFF row 40: cannot decode strip 5"), "\(underlying)")
    }

    /// The row reader (pyramids) skips the zlib Adler-32 too, and checks the CRCs.
    @Test func theRowReaderSkipsAdler32ButChecksCRCs() throws {
        func rows(_ name: String) throws -> [UInt8] {
            let reader = try ImageRowReader(path: fixture(name).path)
            var all = [UInt8](), row = [UInt8](repeating: 0, count: reader.width * 4)
            for _ in 0..<reader.height {
                try row.withUnsafeMutableBufferPointer { try reader.readRow(into: $0) }
                all += row
            }
            return all
        }
        #expect(try rows("png-wrong-adler32.png") == RGBAImage(decoding: fixtureBytes("png-16x16-noise.png")).pixels)
        #expect(throws: CanvasError.self) { try rows("png-idat-crc-mismatch.png") }
    }

    /// Tiled TIFFs stream a row of tiles at a time; edge tiles (40 x 24 in 16 px tiles) are cut.
    @Test(arguments: ["tiff-tiled-40x24.tif", "tiff-strips-40x24.tif"])
    func tiledAndStrippedTIFFsStreamTheirPixels(name: String) throws {
        let reader = try ImageRowReader(path: fixture(name).path)
        #expect(reader.width == 40 && reader.height == 24)
        var row = [UInt8](repeating: 0, count: 40 * 4)
        for y in 0..<24 {
            try row.withUnsafeMutableBufferPointer { try reader.readRow(into: $0) }
            for x in 0..<40 {
                let expected: [UInt8] = [UInt8(x * 7 % 256), UInt8(y * 11 % 256), UInt8((x + y) % 256), 255]
                #expect(Array(row[x * 4..<x * 4 + 4]) == expected, "\(name) pixel \(x),\(y)")
            }
        }
    }
}
