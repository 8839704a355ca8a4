import Foundation
import Testing
import TileMath
@testable import Canvas

@Suite struct CodecTests {
    /// A map-like test image: flat areas, a gradient and some transparency.
    static func sample(opaque: Bool) -> RGBAImage {
        var image = RGBAImage(width: 64, height: 48, color: Color(hex: "#e8dcc0")!)
        for y in 0..<48 {
            for x in 0..<64 {
                if x > 40 { image[x, y] = Pixel(red: UInt8(x * 3), green: UInt8(y * 5), blue: 120, alpha: opaque ? 255 : UInt8(y * 5)) }
                if (x - 20) * (x - 20) + (y - 24) * (y - 24) < 100 { image[x, y] = Pixel(red: 40, green: 90, blue: 200) }
            }
        }
        return image
    }

    @Test(arguments: [true, false])
    func pngRoundTripIsExact(opaque: Bool) throws {
        let image = Self.sample(opaque: opaque)
        for level in [0, 2, 9] {
            for filter in [PNGFilter.none, .sub, .up, .average, .paeth, .all] {
                let bytes = try image.encoded(.png(compressionLevel: level, filter: filter))
                #expect(ImageFormat(sniffing: bytes) == .png)
                // Opaque images are written as RGB (colour type 2), others as RGBA (6).
                #expect(bytes[25] == (opaque ? 2 : 6))
                #expect(try RGBAImage(decoding: bytes) == image)
            }
        }
        // Level 9 is no larger than level 0.
        #expect(try image.encoded(.png(compressionLevel: 9)).count < image.encoded(.png(compressionLevel: 0)).count)
    }

    /// Seeded noise of an odd size, so every filter's arithmetic wraps and rows do not align.
    static func noise(width: Int, height: Int, opaque: Bool, seed: UInt64) -> RGBAImage {
        var state = seed
        var image = RGBAImage(width: width, height: height, color: .white)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let bits = state >> 24
                image[x, y] = Pixel(red: UInt8(bits & 0xFF), green: UInt8(bits >> 8 & 0xFF), blue: UInt8(bits >> 16 & 0xFF),
                                    alpha: opaque ? 255 : UInt8(bits >> 24 & 0xFF))
            }
        }
        return image
    }

    @Test(arguments: [true, false])
    func pngWriterRoundTripsNoiseThroughEveryFilter(opaque: Bool) throws {
        for (width, height) in [(1, 1), (37, 23), (3, 64)] {
            let image = Self.noise(width: width, height: height, opaque: opaque, seed: UInt64(width * 100 + height))
            for filter in [PNGFilter.none, .sub, .up, .average, .paeth, .all] {
                let bytes = try image.encoded(.png(compressionLevel: 6, filter: filter))
                // libpng decodes it (checking every chunk's CRC) to the same pixels.
                #expect(try RGBAImage(decoding: bytes) == image, "\(width)x\(height) \(filter)")
            }
        }
    }

    /// `.all` picks a filter per row, as libpng does: the one whose bytes, read as signed,
    /// sum to the least.
    @Test func pngWriterChoosesAFilterPerRow() throws {
        var image = RGBAImage(width: 16, height: 4, color: .white)
        for x in 0..<16 { image[x, 0] = Pixel(red: UInt8(x * 16), green: UInt8(x * 16), blue: UInt8(x * 16)) }  // a ramp: sub
        for y in 1..<4 { for x in 0..<16 { image[x, y] = image[x, 0] } }  // the row above again: up (or any of its equals)
        let rows = PNGWriter.filteredRows(image.pixels, width: 16, height: 4, channels: 3, filter: .all)
        #expect(rows.count == 4 * (16 * 3 + 1))
        #expect(rows[0] == PNGFilter.sub.typeByte)
        for y in 1..<4 {
            let row = rows[(y * 49 + 1)..<(y * 49 + 49)]
            #expect(row.allSatisfy { $0 == 0 }, "row \(y) filtered to zeros")
            #expect(rows[y * 49] != PNGFilter.none.typeByte)
        }
        #expect(try RGBAImage(decoding: image.encoded(.png(filter: .all))) == image)
    }

    /// Images up to PNGWriter's limit are deflated in one piece (one IDAT chunk); larger ones
    /// stream through libpng (which writes IDAT chunks of 8 KB); both decode to the same pixels.
    @Test func largeImagesStreamThroughLibpng() throws {
        func idatChunks(_ png: [UInt8]) -> Int {
            var count = 0, offset = 8
            while offset + 8 <= png.count {
                let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                if png[offset + 4..<offset + 8].elementsEqual("IDAT".utf8) { count += 1 }
                offset += length + 12
            }
            return count
        }
        let small = Self.noise(width: 300, height: 200, opaque: false, seed: 7)
        #expect(PNGWriter.accepts(width: 300, height: 200, channels: 4))
        #expect(idatChunks(try small.encoded()) == 1)
        // 2,100 x 2,048 RGBA filtered is 16.8 MB, past the 16 MiB limit.
        #expect(!PNGWriter.accepts(width: 2_100, height: 2_048, channels: 4))
        var large = RGBAImage(width: 2_100, height: 2_048, color: Color(red: 0.2, green: 0.5, blue: 0.3, alpha: 0.5))
        large[2_099, 2_047] = Pixel(red: 1, green: 2, blue: 3, alpha: 4)
        let bytes = try large.encoded(.png(compressionLevel: 1))
        #expect(idatChunks(bytes) > 1)
        #expect(try RGBAImage(decoding: bytes) == large)
    }

    /// A feature tile: translucent polygons with outlines and crossing lines, antialiased,
    /// over transparency (seeded).
    static func featureTile() throws -> RGBAImage {
        let canvas = try Canvas(width: 256, height: 256)
        var state: UInt64 = 11
        func next() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
        for _ in 0..<40 {
            let cx = next() * 256, cy = next() * 256, r = 8 + next() * 24
            let ring: [PixelPoint] = (0..<7).map { k in
                let angle = Double(k) * .pi / 3.5
                return PixelPoint(x: cx + r * cos(angle), y: cy + r * sin(angle))
            }
            canvas.fill(.polygon([ring]), with: .color(Color(red: 0.5, green: 0.65, blue: 0.35, alpha: 0.6)))
            canvas.stroke(.polygon([ring]), with: .color(Color(red: 0.29, green: 0.21, blue: 0.13)), style: StrokeStyle(width: 1.5))
        }
        for _ in 0..<40 {
            let line = (0..<6).map { _ in PixelPoint(x: next() * 256, y: next() * 256) }
            canvas.stroke(.polyline(line), with: .color(Color(red: 0.12, green: 0.37, blue: 0.75)), style: StrokeStyle(width: 2))
        }
        return canvas.makeImage()
    }

    /// On a feature tile, libdeflate at the same level comes out no larger than libpng with
    /// zlib. (Not on every image: libdeflate's levels 1-9 find no matches shorter than 4
    /// bytes, and zlib's 3-byte ones win on images where one channel alone changes from pixel
    /// to pixel, like `sample`'s ramp, 2x, and by ~4% on photo-like noise.)
    @Test func pngWriterIsNoLargerThanLibpngOnAFeatureTile() throws {
        let image = try Self.featureTile()
        #expect(!image.isOpaque)
        for level in [1, 2, 6] {
            let ours = try image.encoded(.png(compressionLevel: level)).count
            let libpng = try image.libpngEncoded(level: level, filter: .none, opaque: false).count
            #expect(ours <= libpng, "level \(level): \(ours) against libpng's \(libpng) bytes")
        }
    }

    @Test func jpegIsCloseAndFlattensTransparency() throws {
        let image = Self.sample(opaque: true)
        let bytes = try image.encoded(.jpeg(quality: 90))
        #expect(ImageFormat(sniffing: bytes) == .jpeg)
        let back = try RGBAImage(decoding: bytes)
        #expect(back.width == 64 && back.height == 48 && back.isOpaque)
        expectPixel(back, 5, 5, image[5, 5], tolerance: 6)
        expectPixel(back, 20, 24, image[20, 24], tolerance: 12)
        // A transparent image goes onto the background colour.
        let clear = RGBAImage(width: 16, height: 16, color: .clear)
        let flattened = try RGBAImage(decoding: clear.encoded(.jpeg(quality: 90, background: Color(hex: "#102030")!)))
        expectPixel(flattened, 8, 8, Pixel(red: 16, green: 32, blue: 48), tolerance: 3)
        #expect(throws: CanvasError.self) { try image.encoded(.jpeg(quality: 0)) }
    }

    @Test func webpLosslessIsExactAndLossyIsClose() throws {
        let image = Self.sample(opaque: false)
        let lossless = try image.encoded(.webp(quality: 75, lossless: true, method: 0))
        #expect(ImageFormat(sniffing: lossless) == .webp)
        let back = try RGBAImage(decoding: lossless)
        // libwebp keeps RGB exact where alpha > 0; fully transparent pixels may change colour.
        for y in 0..<48 {
            for x in 0..<64 where image[x, y].alpha > 0 {
                #expect(back[x, y] == image[x, y])
            }
        }
        let lossy = try RGBAImage(decoding: image.encoded(.webp(quality: 90, method: 4)))
        expectPixel(lossy, 5, 5, image[5, 5], tolerance: 8)
        #expect(throws: CanvasError.self) { try image.encoded(.webp(quality: 80, method: 7)) }
    }

    @Test func corruptInputGetsAClearError() throws {
        let png = try Self.sample(opaque: true).encoded()
        // Truncated PNG.
        #expect {
            try RGBAImage(decoding: png.prefix(png.count / 2))
        } throws: { error in
            guard case .decodeFailed(.png, let reason) = error as? CanvasError else { return false }
            return !reason.isEmpty
        }
        // A flipped byte in the image data breaks the CRC.
        var damaged = png
        damaged[60] ^= 0xFF
        #expect(throws: CanvasError.self) { try RGBAImage(decoding: damaged) }
        // Not an image at all.
        #expect(throws: CanvasError.unknownFormat(firstBytes: "3c 68 74 6d 6c 3e")) { try RGBAImage(decoding: Array("<html>".utf8)) }
        #expect(throws: CanvasError.unknownFormat(firstBytes: "nothing")) { try RGBAImage(decoding: [UInt8]()) }
        // Truncated JPEG and WebP.
        let jpeg = try Self.sample(opaque: true).encoded(.jpeg())
        #expect(throws: CanvasError.self) { try RGBAImage(decoding: jpeg.prefix(jpeg.count / 2)) }
        let webp = try Self.sample(opaque: true).encoded(.webp())
        #expect(throws: CanvasError.self) { try RGBAImage(decoding: webp.prefix(30)) }
        // A missing file names its path.
        #expect {
            try RGBAImage(contentsOf: URL(fileURLWithPath: "/nonexistent/tile.png"))
        } throws: { error in
            (error as? CanvasError)?.description.hasPrefix("/nonexistent/tile.png: ") == true
        }
    }

    @Test func uniformAndOpaqueDetection() {
        #expect(RGBAImage(width: 8, height: 8, color: .white).uniformPixel == white)
        #expect(Self.sample(opaque: true).uniformPixel == nil)
        #expect(Self.sample(opaque: true).isOpaque && !Self.sample(opaque: false).isOpaque)
        let crop = Self.sample(opaque: true).cropped(x: 60, y: 40, width: 10, height: 10)
        #expect(crop.width == 4 && crop.height == 8)
    }
}
