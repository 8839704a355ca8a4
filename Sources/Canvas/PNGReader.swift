internal import CDeflate
internal import CPixelLoops

/// Decodes the PNGs that tiles are (8-bit, not interlaced) in one piece: the IDAT data
/// inflated by one libdeflate call, then unfiltered and expanded to RGBA in one pass.
///
/// libpng inflates through zlib's streaming inflate, row by row; libdeflate inflates a whole
/// buffer 2-3x faster, and a tile's PNG is whole in memory anyway. This is only a fast path:
/// anything it does not fully understand, or finds wrong, returns nil and the caller hands
/// the file to libpng, which decodes it or says what is wrong. So it never has to explain an
/// error, only never be wrong when it succeeds: its pixels are exactly those of libpng's
/// simplified API reading the file as `PNG_FORMAT_RGBA` (straight alpha, no gamma change).
///
/// Read (PNG spec, 3rd edition, §11): bit depth 8; colour types 0 (gray), 2 (RGB),
/// 3 (palette), 4 (gray + alpha), 6 (RGBA); no interlace; tRNS for types 0, 2 and 3.
/// What libpng 1.6.39's simplified API does with the colour chunks, found by experiment
/// (every sample value, each colour type; see PNGReaderTests):
/// - gAMA: pixels change unless `gamma * 2.2` is within 5% of 1 (libpng's
///   PNG_GAMMA_THRESHOLD), i.e. 43182...47727 in the chunk's units (45455 is 1/2.2);
///   the file is read here only inside that range.
/// - sRGB, iCCP: at most set the file gamma to 45455, which changes nothing; cHRM is used
///   only to turn colour to gray; sBIT and bKGD are not used at all.
/// - tRNS with a colour key above 255 matches the key's low byte: not read here.
/// - A zlib window below 32 KiB (CINFO < 7) makes zlib refuse distances past it, which
///   libdeflate, reading the whole buffer, would follow: not read here.
///
/// One difference is left: libdeflate (1.14) inflates some deflate streams that zlib refuses,
/// such as length code 286 or distance code 30 (read as 285 and 29), and, by its source,
/// too many codes in a block header or a code-length repeat past the last code. PNGReader
/// decodes such a file, with the right Adler-32, where libpng refuses it. No encoder writes
/// them: Fuzz/crashes/pngreader has two, made by hand.
enum PNGReader {
    /// The largest width and height read here (64 MiB as RGBA): larger images go to
    /// libpng, which decodes row by row without a second buffer the size of the image.
    static let maxSide = 4096

    /// Straight RGBA pixels, `width * height * 4` bytes, or nil when the file is anything
    /// but a PNG of `width` x `height` pixels read here, whole and undamaged.
    static func decode(_ png: [UInt8], width: Int, height: Int) -> [UInt8]? {
        guard (1...maxSide).contains(width), (1...maxSide).contains(height) else { return nil }
        return png.withUnsafeBufferPointer { bytes -> [UInt8]? in
            guard let layout = Layout(bytes, width: width, height: height) else { return nil }
            return layout.pixels(bytes)
        }
    }

    /// The chunks' meaning: what the pixels need, where the IDAT data is.
    struct Layout {
        let width: Int, height: Int
        /// 1, 2, 3 or 4 bytes a pixel (colour types 0 and 3, 4, 2, 6).
        let channels: Int
        let colorType: UInt8
        /// For colour type 3: RGBA of each entry, alpha from tRNS (255 past its end).
        var palette = [UInt8](repeating: 0, count: 256 * 4)
        var paletteCount = 0
        /// The tRNS colour key of types 0 (gray in all three) and 2: such pixels get alpha 0.
        var key: (UInt8, UInt8, UInt8)?
        /// The IDAT chunks' data, in file order: one zlib stream.
        var idat: [Range<Int>] = []
        /// With `untilImageData`: where the first IDAT chunk starts (its length field).
        var imageDataStart = 0

        /// Reads the chunks up to IEND, or with `untilImageData` up to the first IDAT chunk
        /// (`imageDataStart`; PNGRowStream reads the rest); nil for anything not read here
        /// (see PNGReader).
        init?(_ b: UnsafeBufferPointer<UInt8>, width: Int, height: Int, untilImageData: Bool = false) {
            guard b.count >= 8, b[0] == 0x89, b[1] == 0x50, b[2] == 0x4E, b[3] == 0x47,
                  b[4] == 0x0D, b[5] == 0x0A, b[6] == 0x1A, b[7] == 0x0A else { return nil }
            // IHDR first (§11.2.2): width, height, bit depth, colour type, compression,
            // filter method, interlace; its CRC is checked in the loop below.
            guard b.count >= 33, Self.uint32(b, 8) == 13, Self.uint32(b, 12) == Chunk.IHDR,
                  Int(Self.uint32(b, 16)) == width, Int(Self.uint32(b, 20)) == height,
                  b[24] == 8, b[26] == 0, b[27] == 0, b[28] == 0 else { return nil }
            guard let channels = PNGRows.channels(colorType: b[25]) else { return nil }
            self.channels = channels
            colorType = b[25]
            self.width = width
            self.height = height

            var seen: Set<UInt32> = []
            var idatState = 0  // 0: none yet, 1: in the run of IDAT chunks, 2: after it
            var offset = 8
            while true {
                // Length, type, data, CRC-32 of type and data (§5.3). A length is at most
                // 2^31 - 1; libpng refuses a type that is not four ASCII letters.
                let start = offset
                guard start + 12 <= b.count else { return nil }
                let length = Int(Self.uint32(b, start))
                let type = Self.uint32(b, start + 4)
                if untilImageData, type == Chunk.IDAT {
                    guard colorType != 3 || paletteCount > 0 else { return nil }
                    imageDataStart = start
                    return
                }
                let data = start + 8
                guard length <= Int(Int32.max), data + length + 4 <= b.count,
                      (start + 4..<start + 8).allSatisfy({ Self.isLetter(b[$0]) }) else { return nil }
                let crc = libdeflate_crc32(0, b.baseAddress.map { $0 + start + 4 }, 4 + length)
                guard crc == Self.uint32(b, data + length) else { return nil }
                offset = data + length + 4
                switch type {
                case Chunk.IHDR:
                    guard start == 8 else { return nil }  // libpng refuses a second one
                case Chunk.IDAT:
                    // libpng reads IDAT chunks only as one run; a second run is not read here.
                    guard idatState < 2, colorType != 3 || paletteCount > 0 else { return nil }
                    idatState = 1
                    idat.append(data..<data + length)
                case Chunk.IEND:
                    guard idatState > 0, length == 0 else { return nil }
                    return
                case _ where Chunk.colour.contains(type):
                    // The chunks that can change pixels: before the image data, at most once each.
                    guard idatState == 0, seen.insert(type).inserted, read(type, b, data, length) else { return nil }
                default:
                    // Any other critical chunk (upper-case first letter) is one libpng refuses;
                    // other ancillary chunks (text, time, pHYs, unknown ones) change nothing.
                    guard b[start + 4] & 0x20 != 0 else { return nil }
                }
                if type != Chunk.IDAT && idatState == 1 { idatState = 2 }
            }
        }

        /// Reads a colour chunk; false when its content is not read here.
        private mutating func read(_ type: UInt32, _ b: UnsafeBufferPointer<UInt8>, _ data: Int, _ length: Int) -> Bool {
            switch type {
            case Chunk.PLTE:
                // Read for type 3. Types 2 and 6 may carry a suggested palette, which libpng
                // ignores, but it also drops a tRNS read before it: that order is not read here.
                guard colorType == 3 || colorType == 2 || colorType == 6, length % 3 == 0,
                      (3...768).contains(length), key == nil else { return false }
                guard colorType == 3 else { return true }
                paletteCount = length / 3
                for i in 0..<paletteCount {
                    palette[4 * i] = b[data + 3 * i]
                    palette[4 * i + 1] = b[data + 3 * i + 1]
                    palette[4 * i + 2] = b[data + 3 * i + 2]
                    palette[4 * i + 3] = 255
                }
                return true
            case Chunk.tRNS:
                switch colorType {
                case 0:
                    guard length == 2, b[data] == 0 else { return false }
                    key = (b[data + 1], b[data + 1], b[data + 1])
                case 2:
                    guard length == 6, b[data] == 0, b[data + 2] == 0, b[data + 4] == 0 else { return false }
                    key = (b[data + 1], b[data + 3], b[data + 5])
                case 3:
                    // libpng ignores a tRNS before PLTE or longer than the palette.
                    guard paletteCount > 0, (1...paletteCount).contains(length) else { return false }
                    for i in 0..<length { palette[4 * i + 3] = b[data + i] }
                default:
                    return false  // types 4 and 6 have alpha already; libpng ignores it
                }
                return true
            case Chunk.gAMA:
                return length == 4 && (43182...47727).contains(Self.uint32(b, data))
            case Chunk.sRGB:
                return length == 1 && b[data] <= 3
            default:
                return true  // iCCP, cHRM, sBIT: no effect on these pixels
            }
        }

        /// Inflates the IDAT data, unfilters and expands it; nil on any damage.
        ///
        /// One buffer the size of the image: the filtered rows are inflated into its end and
        /// each row's pixels are written over rows already read. A second buffer cost more than
        /// the whole decode: freed, it took the heap past glibc's trim threshold, and the next
        /// decode page-faulted all of it in again (0.21 ms a debug-grid tile against 0.03).
        func pixels(_ b: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
            let rowBytes = width * channels
            let filtered = (rowBytes + 1) * height
            let count = width * height * 4
            // RGBA rows are shorter than the filtered ones by their filter byte; every other
            // type's filtered rows fit in its RGBA rows.
            let capacity = max(count, filtered)
            var ok = false
            let rgba = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
                guard let out = buffer.baseAddress else { return }
                let rows = out + (capacity - filtered)
                guard inflate(b, into: rows, count: filtered) else { return }
                // Two rows: the one being expanded and the one above it (zeros above the first).
                let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 2 * rowBytes)
                defer { scratch.deallocate() }
                scratch.initialize(repeating: 0, count: 2 * rowBytes)
                var above = scratch, current = scratch + rowBytes
                for y in 0..<height {
                    // Row y's RGBA ends before row y + 1's filtered bytes begin: the filtered
                    // rows end with the buffer and are at most 1 byte a row longer (type 6).
                    let row = rows + y * (rowBytes + 1)
                    guard Self.unfilter(row[0], row + 1, into: current, above: above, rowBytes, channels),
                          expand(current, into: out + y * width * 4) else { return }
                    swap(&above, &current)
                }
                ok = true
                initialized = count  // bytes are trivial: nothing to clean up when not
            }
            return ok ? rgba : nil
        }

        /// The zlib stream of the IDAT chunks inflated into exactly `count` bytes at `out`:
        /// false unless it is one whole stream, ends with the last IDAT and its Adler-32 is right.
        private func inflate(_ b: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, count: Int) -> Bool {
            guard let base = b.baseAddress, let first = idat.first else { return false }
            if idat.count == 1 {
                // One IDAT (what PNGWriter and most tile servers write) is inflated where it is.
                return Self.inflate(UnsafeRawBufferPointer(start: base + first.lowerBound, count: first.count), into: out, count: count)
            }
            var joined: [UInt8] = []
            joined.reserveCapacity(idat.reduce(0) { $0 + $1.count })
            for range in idat { joined.append(contentsOf: UnsafeBufferPointer(rebasing: b[range])) }
            return joined.withUnsafeBytes { Self.inflate($0, into: out, count: count) }
        }

        private static func inflate(_ stream: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<UInt8>, count: Int) -> Bool {
            // CMF 0x78: deflate with a 32 KiB window (CINFO 7); see PNGReader.
            guard stream.count >= 2, stream[0] == 0x78, let decompressor = libdeflate_alloc_decompressor() else { return false }
            defer { libdeflate_free_decompressor(decompressor) }
            var read = 0, written = 0
            let result = libdeflate_zlib_decompress_ex(decompressor, stream.baseAddress, stream.count, out, count, &read, &written)
            return result == LIBDEFLATE_SUCCESS && read == stream.count && written == count
        }

        /// Undoes one row's filter (§9.2-9.4) from `row` into `out` (apart); `above` is the
        /// unfiltered row above. False for a filter type above 4.
        static func unfilter(_ type: UInt8, _ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>,
                                     above: UnsafePointer<UInt8>, _ count: Int, _ bpp: Int) -> Bool {
            switch type {
            case 0:
                out.update(from: row, count: count)
            case 2:
                for i in 0..<count { out[i] = row[i] &+ above[i] }
            case 1, 3, 4:
                // Each size of pixel its own loop, so that each is unrolled to its channels.
                switch bpp {
                case 4: unfilterPixels(type, row, out, above, count, 4)
                case 3: unfilterPixels(type, row, out, above, count, 3)
                case 2: unfilterPixels(type, row, out, above, count, 2)
                default: unfilterPixels(type, row, out, above, count, 1)
                }
            default:
                return false
            }
            return true
        }

        /// Sub, Average or Paeth, a pixel at a time with its channels side by side: the
        /// filters chain each pixel to the one on its left, and a vector of four lanes works
        /// through that chain once a pixel instead of once a byte. Bytes are moved four at a
        /// time; past the pixel's `bpp` they belong to the next pixel, which is read and
        /// written again in its turn, so only the last pixel of a row goes byte by byte.
        private static func unfilterPixels(_ type: UInt8, _ row: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>,
                                           _ above: UnsafePointer<UInt8>, _ count: Int, _ bpp: Int) {
            // Left of the first pixel, and above that, are zeros.
            var left = SIMD4<Int16>(), upperLeft = SIMD4<Int16>()
            var i = 0
            while i + bpp <= count {
                let whole = i + 4 <= count
                var filtered = SIMD4<Int16>(), up = SIMD4<Int16>()
                if whole {
                    filtered = SIMD4(truncatingIfNeeded: UnsafeRawPointer(row + i).loadUnaligned(as: SIMD4<UInt8>.self))
                    up = SIMD4(truncatingIfNeeded: UnsafeRawPointer(above + i).loadUnaligned(as: SIMD4<UInt8>.self))
                } else {
                    for k in 0..<bpp {
                        filtered[k] = Int16(row[i + k])
                        up[k] = Int16(above[i + k])
                    }
                }
                var predictor: SIMD4<Int16>
                switch type {
                case 1:
                    predictor = left
                case 3:
                    predictor = (left &+ up) &>> 1
                default:
                    // Paeth: of left, up and upper left, the one nearest left + up - upper left,
                    // in that order on ties.
                    let pa = magnitude(up &- upperLeft), pb = magnitude(left &- upperLeft)
                    let pc = magnitude(left &+ up &- upperLeft &- upperLeft)
                    predictor = upperLeft
                    predictor.replace(with: up, where: pb .<= pc)
                    predictor.replace(with: left, where: (pa .<= pb) .& (pa .<= pc))
                }
                let value = (filtered &+ predictor) & 0xFF
                if whole {
                    UnsafeMutableRawPointer(out + i).storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: value), as: SIMD4<UInt8>.self)
                } else {
                    for k in 0..<bpp { out[i + k] = UInt8(truncatingIfNeeded: value[k]) }
                }
                left = value
                upperLeft = up
                i += bpp
            }
        }

        @inline(__always)
        private static func magnitude(_ v: SIMD4<Int16>) -> SIMD4<Int16> { v.replacing(with: 0 &- v, where: v .< 0) }

        /// One unfiltered row as RGBA; false for a palette index past the palette.
        func expand(_ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> Bool {
            switch colorType {
            case 6:
                out.initialize(from: row, count: width * 4)
            case 2:
                guard let key else {
                    tk_rgb_to_rgba(row, out, width)
                    return true
                }
                // Pixels as little-endian words RGBA; the colour key is the word with alpha 255
                // that becomes alpha 0.
                let opaque = UInt32(0xFF00_0000)
                let keyWord = UInt32(key.0) | UInt32(key.1) << 8 | UInt32(key.2) << 16 | opaque
                let words = UnsafeMutableRawPointer(out)
                for x in 0..<width {
                    var word = UInt32(row[3 * x]) | UInt32(row[3 * x + 1]) << 8 | UInt32(row[3 * x + 2]) << 16 | opaque
                    if word == keyWord { word &= 0x00FF_FFFF }
                    words.storeBytes(of: word.littleEndian, toByteOffset: 4 * x, as: UInt32.self)
                }
            case 0:
                let kg = key.map { Int($0.0) } ?? -1
                for x in 0..<width {
                    let v = row[x]
                    out[4 * x] = v; out[4 * x + 1] = v; out[4 * x + 2] = v
                    out[4 * x + 3] = Int(v) == kg ? 0 : 255
                }
            case 4:
                for x in 0..<width {
                    let v = row[2 * x]
                    out[4 * x] = v; out[4 * x + 1] = v; out[4 * x + 2] = v; out[4 * x + 3] = row[2 * x + 1]
                }
            default:  // 3: libpng reads an index past the palette as opaque black; not read here
                return palette.withUnsafeBufferPointer { table in
                    guard let table = table.baseAddress else { return false }
                    for x in 0..<width {
                        let index = Int(row[x])
                        guard index < paletteCount else { return false }
                        (out + 4 * x).initialize(from: table + 4 * index, count: 4)
                    }
                    return true
                }
            }
            return true
        }

        static func uint32(_ b: UnsafeBufferPointer<UInt8>, _ at: Int) -> UInt32 {
            UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
        }

        static func isLetter(_ c: UInt8) -> Bool { (65...90).contains(c) || (97...122).contains(c) }
    }

    /// Chunk types as big-endian UInt32s.
    enum Chunk {
        static let IHDR: UInt32 = 0x4948_4452, PLTE: UInt32 = 0x504C_5445, IDAT: UInt32 = 0x4944_4154, IEND: UInt32 = 0x4945_4E44
        static let tRNS: UInt32 = 0x7452_4E53, gAMA: UInt32 = 0x6741_4D41, sRGB: UInt32 = 0x7352_4742
        static let iCCP: UInt32 = 0x6943_4350, cHRM: UInt32 = 0x6348_524D, sBIT: UInt32 = 0x7342_4954
        static let colour: Set<UInt32> = [PLTE, tRNS, gAMA, sRGB, iCCP, cHRM, sBIT]
    }
}
