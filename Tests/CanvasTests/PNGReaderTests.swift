import Foundation
import Testing
@_spi(PNGDecoders) @testable import Canvas
import TestSupport

/// A PNG put together chunk by chunk, for what PNGWriter never writes: every colour type,
/// a filter type per row, colour chunks, IDAT chunks split anywhere, and damage.
struct TestPNG {
    var width: Int
    var height: Int
    var colorType: UInt8
    /// Raw samples, `width * channels` bytes a row.
    var samples: [UInt8]
    /// The filter type of each row, cycled (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth).
    var filters: [UInt8] = [0]
    /// Chunks between IHDR and IDAT, in order (PLTE, tRNS, gAMA...), and after the IDATs.
    var before: [(String, [UInt8])] = []
    var after: [(String, [UInt8])] = []
    /// Where in the zlib stream each IDAT chunk after the first starts.
    var splits: [Int] = []
    var bitDepth: UInt8 = 8
    var interlace: UInt8 = 0

    static func channels(_ colorType: UInt8) -> Int { PNGRows.channels(colorType: colorType) ?? 0 }
    var rowBytes: Int { width * Self.channels(colorType) }

    /// The rows filtered as `filters` says (PNG spec §9), each after its filter-type byte.
    var filtered: [UInt8] {
        PNGRows.filtered(samples, rowBytes: rowBytes, bytesPerPixel: Self.channels(colorType),
                         types: (0..<height).map { filters[$0 % filters.count] })
    }

    func zlib() throws -> [UInt8] { try PNGWriter.zlibCompressed(filtered, level: 6) }

    func bytes(zlib stream: [UInt8]? = nil) throws -> [UInt8] {
        let stream = try stream ?? zlib()
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        PNGWriter.appendBigEndian(UInt32(width), to: &header)
        PNGWriter.appendBigEndian(UInt32(height), to: &header)
        header += [bitDepth, colorType, 0, 0, interlace]
        PNGWriter.appendChunk("IHDR", header, to: &png)
        for (type, data) in before { PNGWriter.appendChunk(type, data, to: &png) }
        let bounds = [0] + splits + [stream.count]
        for i in 0..<bounds.count - 1 { PNGWriter.appendChunk("IDAT", Array(stream[bounds[i]..<bounds[i + 1]]), to: &png) }
        for (type, data) in after { PNGWriter.appendChunk(type, data, to: &png) }
        PNGWriter.appendChunk("IEND", [], to: &png)
        return png
    }

    /// The RGBA the samples mean, worked out here without either decoder: `palette` RGB
    /// triples, `alphas` of the palette (tRNS), `key` the tRNS colour key of types 0 and 2.
    func expected(palette: [UInt8] = [], alphas: [UInt8] = [], key: [UInt8]? = nil) -> [UInt8] {
        var out: [UInt8] = []
        let c = Self.channels(colorType)
        for i in 0..<width * height {
            let s = Array(samples[i * c..<i * c + c])
            switch colorType {
            case 0: out += [s[0], s[0], s[0], key == [s[0]] ? 0 : 255]
            case 2: out += [s[0], s[1], s[2], key == s ? 0 : 255]
            case 3:
                let index = Int(s[0])
                out += palette[3 * index..<3 * index + 3] + [index < alphas.count ? alphas[index] : 255]
            case 4: out += [s[0], s[0], s[0], s[1]]
            default: out += s
            }
        }
        return out
    }

    /// Seeded noise, `count` bytes below `bound`.
    static func noise(_ count: Int, seed: UInt64, below bound: Int = 256) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(Int(state >> 33) % bound)
        }
    }
}

@Suite struct PNGReaderTests {
    /// PNGReader's pixels, which must be there, equal libpng's and `expected`.
    func expectSame(_ png: [UInt8], _ expected: [UInt8]? = nil, _ comment: Comment? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fast = try #require(RGBAImage.decodedByPNGReader(png), "PNGReader declined: \(comment?.rawValue ?? "")",
                                sourceLocation: sourceLocation)
        let reference = try RGBAImage.decodedByLibpng(png)
        #expect(Self.difference(fast, reference) == nil, comment, sourceLocation: sourceLocation)
        if let expected {
            #expect(Self.difference(fast, RGBAImage(width: fast.width, height: fast.height, pixels: expected)) == nil, comment,
                    sourceLocation: sourceLocation)
        }
        #expect(Self.difference(try RGBAImage(decoding: png), reference) == nil, comment, sourceLocation: sourceLocation)
    }

    /// Where two images first differ ("pixel x,y: ... vs ..."), or nil: short enough to read
    /// in a failure, where the images themselves would be pages of numbers.
    static func difference(_ a: RGBAImage, _ b: RGBAImage?) -> String? {
        guard let b else { return "the second image is missing" }
        guard a.width == b.width, a.height == b.height else { return "\(a.width)x\(a.height) vs \(b.width)x\(b.height)" }
        guard let i = a.pixels.indices.first(where: { a.pixels[$0] != b.pixels[$0] }) else { return nil }
        let p = i / 4
        return "pixel \(p % a.width),\(p / a.width): \(a[p % a.width, p / a.width]) vs \(b[p % a.width, p / a.width])"
    }

    /// A file PNGReader leaves to libpng; `RGBAImage(decoding:)` still gives libpng's answer.
    func expectDeclined(_ png: [UInt8], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        let decodedFast = RGBAImage.decodedByPNGReader(png) != nil
        #expect(!decodedFast, comment, sourceLocation: sourceLocation)
        switch (Result { () throws(CanvasError) in try RGBAImage.decodedByLibpng(png) }, Result { () throws(CanvasError) in try RGBAImage(decoding: png) }) {
        case (.success(let reference), .success(let decoded)):
            #expect(Self.difference(decoded, reference) == nil, comment, sourceLocation: sourceLocation)
        case (.failure(let reference), .failure(let error)): #expect(error == reference, comment, sourceLocation: sourceLocation)
        default: Issue.record("RGBAImage(decoding:) and libpng disagree on success: \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
        }
    }

    static let palette = TestPNG.noise(256 * 3, seed: 7)

    /// An image of `colorType` with noise samples (palette indices below `paletteCount`).
    static func image(_ colorType: UInt8, width: Int = 37, height: Int = 23, filters: [UInt8] = [0, 1, 2, 3, 4],
                      paletteCount: Int = 256, seed: UInt64 = 1) -> TestPNG {
        let count = width * height * TestPNG.channels(colorType)
        var png = TestPNG(width: width, height: height, colorType: colorType,
                          samples: TestPNG.noise(count, seed: seed, below: colorType == 3 ? paletteCount : 256), filters: filters)
        if colorType == 3 { png.before = [("PLTE", Array(palette[0..<paletteCount * 3]))] }
        return png
    }

    @Test("every colour type, every filter type, PNGReader = libpng = the samples", arguments: [0, 2, 3, 4, 6] as [UInt8])
    func everyColourTypeAndFilter(colorType: UInt8) throws {
        for (width, height) in [(1, 1), (2, 5), (37, 23), (256, 3)] {
            for filter: UInt8 in 0...4 {
                let png = Self.image(colorType, width: width, height: height, filters: [filter], seed: UInt64(width * 10 + Int(filter)))
                try expectSame(png.bytes(), png.expected(palette: Self.palette), "type \(colorType) \(width)x\(height) filter \(filter)")
            }
            // A filter per row, cycled: each filter above rows of every other.
            let mixed = Self.image(colorType, width: width, height: height, filters: [4, 0, 3, 1, 2, 4, 4, 3])
            try expectSame(mixed.bytes(), mixed.expected(palette: Self.palette), "type \(colorType) \(width)x\(height) mixed filters")
        }
    }

    /// RGB rows become RGBA 16 pixels at a time (tk_rgb_to_rgba) and the rest one by one:
    /// every width from 1 to 70 covers no run, runs, and each length of tail.
    @Test func rgbRowsOfEveryWidthAroundTheShuffledRuns() throws {
        for width in 1...70 {
            let png = Self.image(2, width: width, height: 3, filters: [0, 1], seed: UInt64(width))
            try expectSame(png.bytes(), png.expected(palette: Self.palette), "RGB \(width) x 3")
        }
    }

    @Test func paletteWithTransparencyAndAShortPalette() throws {
        for (count, alphas) in [(256, 256), (256, 1), (16, 7), (1, 1), (200, 200)] {
            var png = Self.image(3, paletteCount: count, seed: UInt64(count))
            let trns = TestPNG.noise(alphas, seed: 3)
            png.before.append(("tRNS", trns))
            try expectSame(png.bytes(), png.expected(palette: Self.palette, alphas: trns), "\(count) entries, \(alphas) alphas")
        }
    }

    @Test func colourKeyOfGrayAndRGB() throws {
        var gray = Self.image(0)
        let grayKey = gray.samples[5]
        gray.before = [("tRNS", [0, grayKey])]
        let grayExpected = gray.expected(key: [grayKey])
        #expect(grayExpected[5 * 4 + 3] == 0)
        try expectSame(gray.bytes(), grayExpected)

        var rgb = Self.image(2)
        let rgbKey = Array(rgb.samples[9..<12])
        rgb.before = [("tRNS", [0, rgbKey[0], 0, rgbKey[1], 0, rgbKey[2]])]
        let rgbExpected = rgb.expected(key: rgbKey)
        #expect(rgbExpected[3 * 4 + 3] == 0)
        try expectSame(rgb.bytes(), rgbExpected)
    }

    @Test func idatSplitAnywhereAndChunksThatChangeNothing() throws {
        var png = Self.image(6, width: 64, height: 40)
        let stream = try png.zlib()
        png.splits = [1, 2, 2, 100, stream.count - 3, stream.count]  // empty IDATs too, and one of 3 bytes
        png.before = [("tEXt", Array("Software\0test".utf8)), ("pHYs", [0, 0, 11, 19, 0, 0, 11, 19, 1]), ("bKGD", [0, 1, 0, 2, 0, 3]),
                      ("sBIT", [5, 6, 5, 8]), ("cHRM", TestPNG.noise(32, seed: 2)), ("sRGB", [0]), ("gAMA", [0, 0, 0xB1, 0x8F]),
                      ("iCCP", Array("x\0\0".utf8) + (try PNGWriter.zlibCompressed(Array(repeating: 7, count: 300), level: 6))),
                      ("prVt", [1, 2, 3])]
        png.after = [("tEXt", Array("Comment\0after".utf8)), ("tIME", [7, 234, 12, 2, 10, 0, 0])]
        try expectSame(png.bytes(zlib: stream), png.expected())
    }

    /// libpng changes the pixels for a gAMA unless `gamma * 2.2` is within 5% of 1: the
    /// range read here, found by experiment (every sample value), checked at both ends.
    @Test func gammaIsReadOnlyWhereLibpngLeavesPixelsAlone() throws {
        // Every value in every channel.
        var png = TestPNG(width: 256, height: 1, colorType: 6, samples: (0..<1024).map { UInt8(truncatingIfNeeded: $0 / 4 + $0 % 4 * 61) })
        func withGamma(_ gamma: UInt32) throws -> [UInt8] {
            var bytes: [UInt8] = []
            PNGWriter.appendBigEndian(gamma, to: &bytes)
            png.before = [("gAMA", bytes)]
            return try png.bytes()
        }
        for gamma: UInt32 in [43182, 45455, 45000, 47727] { try expectSame(withGamma(gamma), png.samples, "gAMA \(gamma)") }
        for gamma: UInt32 in [43181, 47728, 100000, 0] { expectDeclined(try withGamma(gamma), "gAMA \(gamma)") }
        // And it is not for nothing: at 1.0 libpng brightens the midtones (sRGB out).
        #expect(try RGBAImage.decodedByLibpng(withGamma(100000)).pixels != png.samples)
        #expect(try RGBAImage.decodedByLibpng(withGamma(43181)).pixels != png.samples)
    }

    @Test func damagedOrUnusualFilesAreLeftToLibpng() throws {
        let base = Self.image(2, width: 40, height: 30)
        let good = try base.bytes()
        let stream = try base.zlib()
        try expectSame(good, base.expected())

        // Damage: a CRC, a cut, the Adler-32, the stream's end, a filter type.
        var badCRC = good
        badCRC[good.count - 13] ^= 1  // the IDAT's CRC, before IEND's 12 bytes
        expectDeclined(badCRC, "IDAT CRC")
        var badAncillaryCRC = base
        badAncillaryCRC.before = [("tEXt", Array("a\0b".utf8))]
        var ancillary = try badAncillaryCRC.bytes()
        ancillary[33 + 8] ^= 1  // its text, after IHDR: libpng warns and reads on
        expectDeclined(ancillary, "tEXt CRC")
        expectDeclined(Array(good.prefix(good.count - 20)), "cut inside IDAT")
        expectDeclined(Array(good.prefix(good.count - 12)), "no IEND")
        var adler = stream
        adler[adler.count - 1] ^= 1
        expectDeclined(try base.bytes(zlib: adler), "Adler-32")
        expectDeclined(try base.bytes(zlib: stream + [0]), "a byte after the zlib stream")
        expectDeclined(try base.bytes(zlib: Array(stream.prefix(stream.count - 4))), "no Adler-32")
        var window = stream
        window[0] = 0x68; window[1] = 0x81  // CINFO 6 (16 KiB), FCHECK fixed
        #expect((Int(window[0]) << 8 | Int(window[1])) % 31 == 0)
        expectDeclined(try base.bytes(zlib: window), "a 16 KiB window")
        var filter5 = base
        filter5.filters = [0, 5]
        expectDeclined(try filter5.bytes(), "filter type 5")
        var shortRows = base
        shortRows.height = 29  // one row of data more than IHDR says
        expectDeclined(try shortRows.bytes(zlib: stream), "too much image data")
        shortRows.height = 31
        expectDeclined(try shortRows.bytes(zlib: stream), "too little image data")

        // What libpng reads differently or refuses.
        var interlaced = base
        interlaced.interlace = 1
        expectDeclined(try interlaced.bytes(), "interlaced")
        // 16 bits a sample: the rows of the 40 px image are those of 20 px at 16 bits.
        let sixteen = Self.withHeader(try TestPNG(width: 40, height: 30, colorType: 2, samples: base.samples).bytes(), width: 20, bitDepth: 16)
        #expect(try RGBAImage.decodedByLibpng(sixteen).width == 20)
        expectDeclined(sixteen, "16 bits a sample")
        var twoRuns = base
        twoRuns.splits = [stream.count / 2]
        var twoRunsBytes = try twoRuns.bytes(zlib: stream)
        // A tEXt chunk between the two IDATs.
        let second = try #require(Self.chunkOffsets(twoRunsBytes).filter { $0.type == "IDAT" }.last?.offset)
        var text: [UInt8] = []
        PNGWriter.appendChunk("tEXt", Array("a\0b".utf8), to: &text)
        twoRunsBytes.insert(contentsOf: text, at: second)
        expectDeclined(twoRunsBytes, "IDAT, tEXt, IDAT")
        var critical = base
        critical.before = [("CgBI", [0, 0, 0, 0])]
        expectDeclined(try critical.bytes(), "an unknown critical chunk")
        var colourAfterImage = base
        colourAfterImage.after = [("gAMA", [0, 0, 0xB1, 0x8F])]
        expectDeclined(try colourAfterImage.bytes(), "gAMA after IDAT")
        var twice = base
        twice.before = [("sRGB", [0]), ("sRGB", [0])]
        expectDeclined(try twice.bytes(), "two sRGB")
        var badIntent = base
        badIntent.before = [("sRGB", [4])]
        expectDeclined(try badIntent.bytes(), "sRGB intent 4")
        var bigKey = base
        bigKey.before = [("tRNS", [1, base.samples[0], 0, base.samples[1], 0, base.samples[2]])]
        expectDeclined(try bigKey.bytes(), "a colour key above 255 (libpng matches its low byte)")
        var paletteAfterKey = base
        paletteAfterKey.before = [("tRNS", [0, 1, 0, 2, 0, 3]), ("PLTE", [1, 2, 3])]
        expectDeclined(try paletteAfterKey.bytes(), "PLTE after tRNS (libpng drops the tRNS)")
    }

    @Test func oddPalettesAndAlphaChunksAreLeftToLibpng() throws {
        var outOfRange = Self.image(3, paletteCount: 256)
        outOfRange.before = [("PLTE", Array(Self.palette[0..<16 * 3]))]  // indices up to 255
        expectDeclined(try outOfRange.bytes(), "index past the palette")
        var noPalette = Self.image(3)
        noPalette.before = []
        expectDeclined(try noPalette.bytes(), "no PLTE")
        var longAlphas = Self.image(3, paletteCount: 16)
        longAlphas.before.append(("tRNS", Array(repeating: 9, count: 17)))
        expectDeclined(try longAlphas.bytes(), "tRNS longer than PLTE")
        var alphasFirst = Self.image(3)
        alphasFirst.before.insert(("tRNS", [9]), at: 0)
        expectDeclined(try alphasFirst.bytes(), "tRNS before PLTE")
        var rgbaKey = Self.image(6)
        rgbaKey.before = [("tRNS", [0, 1, 0, 2, 0, 3])]
        expectDeclined(try rgbaKey.bytes(), "tRNS on RGBA")
        var grayPalette = Self.image(0)
        grayPalette.before = [("PLTE", [1, 2, 3])]
        expectDeclined(try grayPalette.bytes(), "PLTE on gray")
        // A suggested palette of an RGB image changes nothing.
        var suggested = Self.image(2)
        suggested.before = [("PLTE", Array(Self.palette[0..<30]))]
        try expectSame(suggested.bytes(), suggested.expected())
    }

    @Test func imagesPastTheSizeLimitAreLeftToLibpng() throws {
        let wide = TestPNG(width: PNGReader.maxSide + 1, height: 1, colorType: 0, samples: Array(repeating: 9, count: PNGReader.maxSide + 1))
        expectDeclined(try wide.bytes())
        let widest = TestPNG(width: PNGReader.maxSide, height: 2, colorType: 0, samples: Array(repeating: 9, count: 2 * PNGReader.maxSide))
        try expectSame(widest.bytes(), widest.expected())
    }

    /// Every PNG of the repository (fixtures, goldens, docs, examples, fuzz seeds): where
    /// PNGReader decodes it, libpng decodes it to the same pixels.
    @Test func everyPNGOfTheRepository() throws {
        let root = repositoryRoot()
        var files: [URL] = []
        for folder in ["Tests", "docs", "Examples", "Fuzz/corpus"] {
            let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                if let bytes = try? Data(contentsOf: url), bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { files.append(url) }
            }
        }
        var read = 0
        for url in files {
            let bytes = Array(try Data(contentsOf: url))
            guard let fast = RGBAImage.decodedByPNGReader(bytes) else { continue }
            read += 1
            #expect(Self.difference(fast, try? RGBAImage.decodedByLibpng(bytes)) == nil, "\(url.path)")
        }
        #expect(files.count >= 30)
        #expect(read >= 20, "PNGReader read \(read) of \(files.count) files")
    }

    /// `png` with its IHDR's width and bit depth replaced (and its CRC made right).
    static func withHeader(_ png: [UInt8], width: Int, bitDepth: UInt8) -> [UInt8] {
        var header: [UInt8] = []
        PNGWriter.appendBigEndian(UInt32(width), to: &header)
        header += png[20..<24] + [bitDepth] + png[25..<29]
        var out = Array(png[0..<8])
        PNGWriter.appendChunk("IHDR", header, to: &out)
        return out + png[33...]
    }

    /// libdeflate inflates a few deflate streams that zlib refuses (see PNGReader): PNGReader
    /// decodes these two files, all zeros as their streams and Adler-32s say, libpng refuses
    /// them. Made by Fuzz/make-files.py (crashes/README.md).
    @Test(arguments: [("length-code-286.png", "IDAT: invalid literal/length code"), ("distance-code-30.png", "IDAT: invalid distance code")])
    func streamsOnlyLibdeflateReads(name: String, message: String) throws {
        let root = repositoryRoot()
        let bytes = Array(try Data(contentsOf: root.appendingPathComponent("Fuzz/crashes/pngreader/" + name)))
        let fast = try #require(RGBAImage.decodedByPNGReader(bytes))
        #expect(fast == RGBAImage(width: fast.width, height: fast.height, color: .black))
        #expect(throws: CanvasError.decodeFailed(format: .png, reason: message)) { try RGBAImage.decodedByLibpng(bytes) }
        #expect(try RGBAImage(decoding: bytes) == fast)
    }

    static func chunkOffsets(_ png: [UInt8]) -> [(type: String, offset: Int)] {
        var result: [(String, Int)] = []
        var offset = 8
        while offset + 8 <= png.count {
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            result.append((String(decoding: png[offset + 4..<offset + 8], as: UTF8.self), offset))
            offset += 12 + length
        }
        return result
    }
}
