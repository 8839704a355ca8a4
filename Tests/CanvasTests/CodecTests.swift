import Foundation
import Testing
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
