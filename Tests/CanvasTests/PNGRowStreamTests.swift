import Foundation
import Testing
@_spi(PNGDecoders) @testable import Canvas
import TestSupport

/// ImageRowReader streams the PNGs PNGReader reads through PNGRowStream (igzip), and its rows
/// are libpng's; on damage libpng takes over from the first row and says what is wrong.
@Suite struct PNGRowStreamTests {
    /// The rows of `png` through ImageRowReader, whether the stream started on them, and
    /// whether it read them all (libpng never took over).
    static func rows(_ png: [UInt8]) throws -> (pixels: [UInt8], streamed: Bool, wholly: Bool) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-rows-\(UUID()).png").path
        try Data(png).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reader = try ImageRowReader(path: path)
        var pixels = [UInt8](repeating: 0, count: reader.width * reader.height * 4)
        try pixels.withUnsafeMutableBufferPointer { out throws(CanvasError) in
            for y in 0..<reader.height {
                try reader.readRow(into: UnsafeMutableBufferPointer(rebasing: out[y * reader.width * 4..<(y + 1) * reader.width * 4]))
            }
        }
        return (pixels, reader.streamedFromStart, reader.streams)
    }

    static func expectLibpngRows(_ png: [UInt8], _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (pixels, _, wholly) = try rows(png)
        #expect(wholly, comment, sourceLocation: sourceLocation)
        let reference = try RGBAImage.decodedByLibpng(png)
        #expect(PNGReaderTests.difference(RGBAImage(width: reference.width, height: reference.height, pixels: pixels), reference) == nil,
                comment, sourceLocation: sourceLocation)
    }

    @Test(arguments: [0, 2, 3, 4, 6] as [UInt8])
    func everyColourTypeAndFilterInIDATsSplitAnywhere(colorType: UInt8) throws {
        var png = PNGReaderTests.image(colorType, width: 41, height: 29)
        if colorType == 2 { png.before += [("tRNS", [0, png.samples[0], 0, png.samples[1], 0, png.samples[2]])] }
        if colorType == 3 { png.before += [("tRNS", TestPNG.noise(100, seed: 3))] }
        let stream = try png.zlib()
        png.splits = [1, 2, 2, 5, stream.count / 2, stream.count - 3, stream.count]  // empty IDATs, one of 3 bytes
        try Self.expectLibpngRows(try png.bytes(zlib: stream), "colour type \(colorType)")
    }

    /// Rows wider than PNGReader's tiles, and IDAT data past the first MiB read ahead.
    @Test func wideRowsAcrossManyReads() throws {
        var png = PNGReaderTests.image(2, width: 5000, height: 100, filters: [0, 4, 1])
        let stream = try png.zlib()
        png.splits = Array(stride(from: 65536, to: stream.count, by: 65536))
        #expect(stream.count > PNGRowStream.bufferSize)
        try Self.expectLibpngRows(try png.bytes(zlib: stream), "5000 x 100")
    }

    /// Rows are inflated a batch at a time from IDAT data gathered across chunks: libpng's
    /// 8 KiB chunks, several batches and a short last one, rows equal to libpng's; a filter
    /// type of 9 in the third batch stops the stream at that row and libpng names it.
    @Test func batchesOfRowsFromSmallChunks() throws {
        let width = 3000, rowBytes = width * 4 + 1
        let batch = PNGRowStream.batchBytes / rowBytes
        let height = 2 * batch + batch / 2
        var png = PNGReaderTests.image(6, width: width, height: height, filters: [0, 4, 1, 2, 3])
        let stream = try png.zlib()
        png.splits = Array(stride(from: 8192, to: stream.count, by: 8192))
        #expect(png.splits.count > 2 * PNGRowStream.compressedSize / 8192)
        try Self.expectLibpngRows(try png.bytes(zlib: stream), "\(width) x \(height), batches of \(batch) rows")
        let damaged = 2 * batch + 3
        png.filters = (0..<height).map { $0 == damaged ? 9 : 1 }
        let damagedStream = try png.zlib()
        png.splits = Array(stride(from: 8192, to: damagedStream.count, by: 8192))
        #expect { try Self.rows(try png.bytes(zlib: damagedStream)) } throws: { error in
            guard case .file(_, let reason) = error as? CanvasError else { return false }
            return reason.contains("row \(damaged)") && reason.contains("filter")
        }
    }

    /// Damage the stream finds at some row: libpng reads the file again and its verdict
    /// stands (its error, naming the path), or its rows when it reads the file after all.
    @Test func damageIsLibpngsToJudge() throws {
        let png = PNGReaderTests.image(6, width: 33, height: 40)
        let good = try png.bytes()
        let path = "tilekit-rows"
        // A wrong CRC on the IDAT chunk: libpng refuses it.
        var badCRC = good
        badCRC[good.count - 13] ^= 1
        #expect { try Self.rows(badCRC) } throws: { error in
            guard case .file(let file, let reason) = error as? CanvasError else { return false }
            return file.contains(path) && reason.contains("CRC")
        }
        // Cut inside the image data.
        #expect(throws: CanvasError.self) { try Self.rows(Array(good.prefix(good.count / 2))) }
        // A filter type of 9 on row 20: the stream stops there, libpng names it.
        var badFilter = png
        badFilter.filters = (0..<40).map { $0 == 20 ? 9 : 1 }
        #expect { try Self.rows(try badFilter.bytes()) } throws: { error in
            guard case .file(_, let reason) = error as? CanvasError else { return false }
            return reason.contains("row 20") && reason.contains("filter")
        }
        // A wrong Adler-32, which libpng does not check here: the stream declines at the
        // last row and libpng's rows come instead, the same pixels.
        var stream = try png.zlib()
        stream[stream.count - 1] ^= 0xFF
        let (pixels, streamed, _) = try Self.rows(try png.bytes(zlib: stream))
        #expect(streamed && pixels == png.expected())
    }

    /// What the stream does not read goes to libpng from the start: here a gAMA outside the
    /// range PNGReader reads (libpng's row reader applies no gamma: the samples as they are).
    @Test func otherPNGsAreLibpngs() throws {
        var gamma = PNGReaderTests.image(2, width: 8, height: 6)
        gamma.before = [("gAMA", [0, 1, 0x86, 0xA0])]  // 1.0
        let (pixels, streamed, _) = try Self.rows(try gamma.bytes())
        #expect(!streamed)
        #expect(pixels == gamma.expected())
    }

    /// A 353-byte file whose tEXt chunk claims 2 GB (the first `pngrows` fuzz run): libpng
    /// allocated all of it before finding the file short. Both libpng paths refuse it first,
    /// naming the chunk.
    @Test func aChunkClaimingMoreThanTheFileIsRefusedByName() throws {
        let root = repositoryRoot()
        let bytes = Array(try Data(contentsOf: root.appendingPathComponent("Fuzz/crashes/pngrows/text-chunk-claims-2gb.png")))
        let claim = "chunk tEXt claims 2033778701 bytes, more than the"
        #expect { try RGBAImage(decoding: bytes) } throws: { "\($0)".contains(claim) }
        #expect { try Self.rows(bytes) } throws: { "\($0)".contains(claim) }
        // A chunk the file does hold but past the 8 MiB cap is refused too, when libpng
        // reads the file (here for its gAMA; PNGReader reads no chunk whole).
        var big = PNGReaderTests.image(2, width: 8, height: 6)
        big.before = [("gAMA", [0, 1, 0x86, 0xA0]), ("zTXt", [UInt8](repeating: 0x41, count: (8 << 20) + 1))]
        #expect { try RGBAImage(decoding: try big.bytes()) } throws: { "\($0)".contains("more than the 8388608 allowed a chunk") }
    }
}
