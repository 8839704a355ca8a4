@_spi(PNGDecoders) import Canvas
import CDeflate
import CZlib

// PNGReader (the fast path of RGBAImage(decoding:)) against libpng, differentially: whatever
// PNGReader decodes, libpng must decode too, to the same pixels.

extension FuzzTarget {
    static let pngReader = FuzzTarget(name: "pngreader",
                                      input: "a PNG image (then again with its checksums made right), or a recipe for one (PNGRecipe)") { bytes in
        forEachPNG(bytes, compareDecoders)
    }

    /// The PNGs an input of the PNG decoder targets stands for: a PNG as it is and again with
    /// its checksums made right, or the PNG a recipe (`PNGRecipe`) puts together.
    ///
    /// Nearly every change to a PNG breaks a chunk's CRC-32 or the zlib stream's Adler-32,
    /// and the decoders then rightly decline. libFuzzer can learn the CRC from a comparison,
    /// but the Adler-32 is checked inside libdeflate or igzip, where it sees nothing: so the
    /// input runs a second time with both made right, and mutations of the pixel data, the
    /// filters and the deflate stream reach the unfiltering and expansion.
    static func forEachPNG(_ bytes: [UInt8], _ body: ([UInt8]) -> Void) {
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            if let png = PNGRecipe.png(bytes) { body(png) }
            return
        }
        body(bytes)
        let repaired = PNGChecksums.repaired(bytes)
        if repaired != bytes { body(repaired) }
    }

    /// Traps when PNGReader decodes what libpng refuses, or decodes it differently.
    ///
    /// One difference is allowed, and checked: libdeflate inflates a few deflate streams that
    /// zlib refuses (such as a length code 286 or a distance code 30: Fuzz/crashes/README.md),
    /// and libpng then refuses the file. Then zlib itself must refuse the stream, and the same
    /// filtered rows deflated afresh must decode in libpng to PNGReader's pixels.
    static func compareDecoders(_ bytes: [UInt8]) {
        guard let fast = RGBAImage.decodedByPNGReader(bytes) else { return }
        let reference: RGBAImage
        do {
            reference = try RGBAImage.decodedByLibpng(bytes)
        } catch {
            guard let stream = PNGChecksums.idatStream(bytes), PNGChecksums.zlibRefuses(stream),
                  let redeflated = PNGChecksums.redeflated(bytes) else {
                fatalError("PNGReader decoded a \(fast.width)x\(fast.height) PNG that libpng refuses: \(error)")
            }
            do {
                reference = try RGBAImage.decodedByLibpng(redeflated)
            } catch {
                fatalError("libpng refuses the rows PNGReader decoded (\(fast.width)x\(fast.height)), deflated afresh: \(error)")
            }
        }
        guard fast.width == reference.width, fast.height == reference.height else {
            fatalError("PNGReader decoded \(fast.width)x\(fast.height), libpng \(reference.width)x\(reference.height)")
        }
        if let i = fast.pixels.indices.first(where: { fast.pixels[$0] != reference.pixels[$0] }) {
            let x = i / 4 % fast.width, y = i / 4 / fast.width
            fatalError("PNGReader and libpng differ at pixel \(x),\(y) of \(fast.width)x\(fast.height): \(fast[x, y]) against \(reference[x, y])")
        }
    }
}

/// A PNG's chunks and zlib stream, for the target: its checksums made right (`repaired`),
/// the stream read by zlib (`zlibRefuses`) and deflated afresh (`redeflated`).
enum PNGChecksums {
    /// The Adler-32 is fixed only for images of at most this many filtered bytes (2 MiB):
    /// finding where the deflate stream ends means inflating it.
    static let inflateLimit = 2 << 20

    /// Whole chunks from byte 8: where each starts and the length of its data.
    static func chunks(_ bytes: [UInt8]) -> [(start: Int, length: Int)] {
        var chunks: [(start: Int, length: Int)] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(uint32(bytes, offset))
            guard length <= bytes.count - offset - 12 else { break }
            chunks.append((offset, length))
            offset += 12 + length
        }
        return chunks
    }

    /// The first run of IDAT chunks (one zlib stream), as indices into `chunks`.
    static func idatRun(_ bytes: [UInt8], _ chunks: [(start: Int, length: Int)]) -> Range<Int>? {
        let isIDAT = { (i: Int) in bytes[chunks[i].start + 4..<chunks[i].start + 8].elementsEqual("IDAT".utf8) }
        guard let first = chunks.indices.first(where: isIDAT) else { return nil }
        let end = chunks.indices[first...].first { !isIDAT($0) } ?? chunks.count
        return first..<end
    }

    /// The zlib stream of the first run of IDAT chunks.
    static func idatStream(_ bytes: [UInt8]) -> [UInt8]? {
        let chunks = chunks(bytes)
        guard let run = idatRun(bytes, chunks) else { return nil }
        return run.flatMap { bytes[chunks[$0].start + 8..<chunks[$0].start + 8 + chunks[$0].length] }
    }

    /// Whether zlib refuses the stream as data (libpng's inflate: the window from the header,
    /// the Adler-32 not checked).
    static func zlibRefuses(_ stream: [UInt8]) -> Bool {
        var z = z_stream()
        guard inflateInit_(&z, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return false }
        defer { inflateEnd(&z) }
        inflateValidate(&z, 0)
        var input = stream
        var output = [UInt8](repeating: 0, count: 64 << 10)
        var status = Z_OK
        input.withUnsafeMutableBufferPointer { inBuffer in
            z.next_in = inBuffer.baseAddress
            z.avail_in = UInt32(inBuffer.count)
            while status == Z_OK {
                output.withUnsafeMutableBufferPointer { outBuffer in
                    z.next_out = outBuffer.baseAddress
                    z.avail_out = UInt32(outBuffer.count)
                    status = inflate(&z, Z_NO_FLUSH)
                }
            }
        }
        return status == Z_DATA_ERROR
    }

    /// The PNG with its first run of IDAT chunks replaced by one IDAT of the same rows (as
    /// libdeflate inflates them) deflated afresh; nil when they do not inflate.
    static func redeflated(_ bytes: [UInt8]) -> [UInt8]? {
        let chunks = chunks(bytes)
        guard let run = idatRun(bytes, chunks), let stream = idatStream(bytes), let size = filteredSize(bytes),
              let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var rows = [UInt8](repeating: 0, count: size)
        let result = rows.withUnsafeMutableBytes { libdeflate_zlib_decompress(decompressor, stream, stream.count, $0.baseAddress, size, nil) }
        guard result == LIBDEFLATE_SUCCESS, let compressor = libdeflate_alloc_compressor(6) else { return nil }
        defer { libdeflate_free_compressor(compressor) }
        var fresh = [UInt8](repeating: 0, count: libdeflate_zlib_compress_bound(compressor, size))
        let length = fresh.withUnsafeMutableBytes { libdeflate_zlib_compress(compressor, rows, size, $0.baseAddress, $0.count) }
        guard length > 0 else { return nil }
        var png = Array(bytes[..<chunks[run.lowerBound].start])
        PNGRecipe.append("IDAT", Array(fresh.prefix(length)), to: &png)
        let last = chunks[run.upperBound - 1]
        return png + bytes[(last.start + 12 + last.length)...]
    }

    /// The zlib header's FCHECK and the Adler-32 of the first IDAT run made right, then every
    /// chunk's CRC-32. Whatever is not a whole chunk or a whole deflate stream stays as it is.
    static func repaired(_ png: [UInt8]) -> [UInt8] {
        var bytes = png
        let chunks = chunks(bytes)
        // Where each byte of the first IDAT run's zlib stream is.
        let positions = idatRun(bytes, chunks).map { run in run.flatMap { chunks[$0].start + 8..<chunks[$0].start + 8 + chunks[$0].length } } ?? []
        if positions.count >= 2 {
            // FCHECK: CMF * 256 + FLG a multiple of 31, keeping FLG's top three bits.
            let cmf = Int(bytes[positions[0]])
            let flagsHigh = Int(bytes[positions[1]]) & 0xE0
            bytes[positions[1]] = UInt8(flagsHigh + (31 - (cmf * 256 + flagsHigh) % 31) % 31)
        }
        if positions.count >= 6, let expected = filteredSize(bytes), expected <= inflateLimit,
           let decompressor = libdeflate_alloc_decompressor() {
            defer { libdeflate_free_decompressor(decompressor) }
            let stream = positions.dropFirst(2).map { bytes[$0] }
            var output = [UInt8](repeating: 0, count: max(1, expected))
            var read = 0, written = 0
            let result = output.withUnsafeMutableBytes { out in
                libdeflate_deflate_decompress_ex(decompressor, stream, stream.count, out.baseAddress, out.count, &read, &written)
            }
            if result == LIBDEFLATE_SUCCESS, 2 + read + 4 <= positions.count {
                let adler = output.withUnsafeBytes { libdeflate_adler32(1, $0.baseAddress, written) }
                for k in 0..<4 { bytes[positions[2 + read + k]] = UInt8(truncatingIfNeeded: adler >> (24 - 8 * k)) }
            }
        }
        for chunk in chunks {
            let crc = bytes.withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress.map { $0 + chunk.start + 4 }, 4 + chunk.length) }
            for k in 0..<4 { bytes[chunk.start + 8 + chunk.length + k] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * k)) }
        }
        return bytes
    }

    /// (width * channels + 1) * height from IHDR, for 8 bits a sample; nil otherwise.
    static func filteredSize(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 29, bytes[24] == 8 else { return nil }
        guard let channels = PNGRows.channels(colorType: bytes[25]) else { return nil }
        let width = Int(uint32(bytes, 16)), height = Int(uint32(bytes, 20))
        guard width <= 1 << 16, height <= 1 << 16 else { return nil }
        return (width * channels + 1) * height
    }

    static func uint32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
    }
}

/// A PNG made from a recipe, so that most inputs are images PNGReader decodes: a mutated PNG
/// is mostly one it declines, even with its checksums made right.
///
/// Bytes: colour type (0, 2, 3, 4, 6: value mod 5), width and height (value mod 64, + 1),
/// options (bit 0 tRNS; 1 the IDAT in three, and an empty one; 2 gAMA 45455 + 20 x the
/// next byte as signed, both ends of the range PNGReader reads and past them; 3 sRGB; 4 a
/// PLTE on RGB and a tEXt; 5 stored, not deflated; 6 an unknown ancillary chunk; 7 palette
/// indices as they come, past the palette too, not modulo its size), palette entries - 1.
/// Then that gamma byte, a filter type a row (value mod 5, or from 250 the type 5 that
/// PNGReader must refuse), the palette, the tRNS bytes and the samples; zeros once the
/// input ends.
enum PNGRecipe {
    static func png(_ recipe: [UInt8]) -> [UInt8]? {
        guard recipe.count >= 5 else { return nil }
        var next = 5
        func byte() -> UInt8 {
            defer { next += 1 }
            return next < recipe.count ? recipe[next] : 0
        }
        let colorType: UInt8 = [0, 2, 3, 4, 6][Int(recipe[0]) % 5]
        let channels = PNGRows.channels(colorType: colorType) ?? 1
        let width = Int(recipe[1]) % 64 + 1, height = Int(recipe[2]) % 64 + 1, options = recipe[3]
        let paletteCount = Int(recipe[4]) + 1
        let gammaDelta = Int(Int8(bitPattern: byte())) * 20  // ±2560 around 45455: both ends of the range read
        let filters = (0..<height).map { _ in byte() }.map { $0 >= 250 ? UInt8(5) : $0 % 5 }
        let palette = colorType == 3 ? (0..<paletteCount * 3).map { _ in byte() } : []
        var before: [(String, [UInt8])] = []
        if options & 4 != 0 { before.append(("gAMA", bigEndian(UInt32(45455 + gammaDelta)))) }
        if options & 8 != 0 { before.append(("sRGB", [0])) }
        if options & 64 != 0 { before.append(("juNk", Array(recipe.prefix(13)))) }
        if colorType == 3 { before.append(("PLTE", palette)) }
        if options & 16 != 0, colorType == 2 { before.append(("PLTE", [1, 2, 3])) }
        if options & 1 != 0 {
            switch colorType {
            case 0: before.append(("tRNS", [0, byte()]))
            case 2: before.append(("tRNS", [0, byte(), 0, byte(), 0, byte()]))
            case 3: before.append(("tRNS", (0..<min(paletteCount, Int(recipe[4] / 2) + 1)).map { _ in byte() }))
            default: before.append(("tRNS", [0, 1]))  // refused on types 4 and 6
            }
        }
        if options & 16 != 0 { before.append(("tEXt", Array("Comment\0recipe".utf8))) }
        // Palette indices within the palette, unless option bit 7 says as they come.
        let indexBound = colorType == 3 && options & 128 == 0 ? paletteCount : 256
        let samples = (0..<width * height * channels).map { _ in UInt8(Int(byte()) % indexBound) }
        let filtered = PNGRows.filtered(samples, rowBytes: width * channels, bytesPerPixel: channels, types: filters)
        guard let compressor = libdeflate_alloc_compressor(options & 32 != 0 ? 0 : 6) else { return nil }
        defer { libdeflate_free_compressor(compressor) }
        var stream = [UInt8](repeating: 0, count: libdeflate_zlib_compress_bound(compressor, filtered.count))
        let size = stream.withUnsafeMutableBytes { libdeflate_zlib_compress(compressor, filtered, filtered.count, $0.baseAddress, $0.count) }
        guard size > 0 else { return nil }
        stream.removeLast(stream.count - size)
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        append("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, colorType, 0, 0, 0], to: &png)
        for (type, data) in before { append(type, data, to: &png) }
        if options & 2 != 0, stream.count > 4 {
            let third = stream.count / 3
            append("IDAT", Array(stream[..<third]), to: &png)
            append("IDAT", [], to: &png)
            append("IDAT", Array(stream[third..<2 * third]), to: &png)
            append("IDAT", Array(stream[(2 * third)...]), to: &png)
        } else {
            append("IDAT", stream, to: &png)
        }
        append("IEND", [], to: &png)
        return png
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

    static func append(_ type: String, _ data: [UInt8], to png: inout [UInt8]) {
        png += bigEndian(UInt32(data.count))
        let start = png.count
        png += Array(type.utf8) + data
        let crc = png.withUnsafeBytes { bytes in libdeflate_crc32(0, bytes.baseAddress.map { $0 + start }, data.count + 4) }
        png += bigEndian(crc)
    }
}
