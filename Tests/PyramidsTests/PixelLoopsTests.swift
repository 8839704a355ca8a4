import Foundation
import Testing
import Canvas
import TileMath
@testable import Pyramids

/// The pyramid's resampling and averaging run in C (CPixelLoops, AVX2 where the CPU has
/// it). Each must give the bytes of the scalar Swift it replaced, written out again here as
/// the reference: the same float operations in the same order.
@Suite struct PixelLoopsTests {
    /// Noise with every kind of alpha: none, full, and in between (premultiplying matters).
    static func noise(width: Int, height: Int, seed: UInt64) -> RGBAImage {
        var state = seed
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for p in stride(from: 0, to: pixels.count, by: 4) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let bits = state >> 24
            pixels[p] = UInt8(truncatingIfNeeded: bits)
            pixels[p + 1] = UInt8(truncatingIfNeeded: bits >> 8)
            pixels[p + 2] = UInt8(truncatingIfNeeded: bits >> 16)
            switch (bits >> 24) % 4 {
            case 0: pixels[p + 3] = 0
            case 1: pixels[p + 3] = 255
            default: pixels[p + 3] = UInt8(truncatingIfNeeded: bits >> 32)
            }
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }

    /// Where two tiles' bytes first differ (a short message instead of two 256 KB arrays).
    static func firstDifference(_ got: [UInt8]?, _ expected: [UInt8]?) -> String? {
        switch (got, expected) {
        case (nil, nil): return nil
        case (nil, _): return "no tile, expected one"
        case (_, nil): return "a tile, expected none"
        case (let got?, let expected?):
            guard got.count == expected.count else { return "\(got.count) bytes, expected \(expected.count)" }
            guard let i = got.indices.first(where: { got[$0] != expected[$0] }) else { return nil }
            return "byte \(i) (pixel \(i / 4), channel \(i % 4)) is \(got[i]), expected \(expected[i])"
        }
    }

    /// The separable warp as the Swift code did it, one output pixel at a time.
    static func referenceRender(_ warper: TileWarper, _ tile: TileID, size: Int, pixels: [UInt8], width: Int, height: Int) -> [UInt8]? {
        let inv = warper.georeference.inverse
        var out = [UInt8](repeating: 0, count: size * size * 4)
        var any = false
        var xi = [Int](), yi = [Int](), xw = [Float](), yw = [Float]()
        out.withUnsafeMutableBufferPointer { dst in
            for j in 0..<size {
                let sy = inv.e * warper.worldY(tile: tile, size: size, j: Double(j) + 0.5) + inv.f
                guard sy >= 0, sy < Double(height) else { continue }
                warper.resampling.taps(sy, count: height, into: &yi, &yw)
                for i in 0..<size {
                    let sx = inv.a * warper.worldX(tile: tile, size: size, i: Double(i) + 0.5) + inv.c
                    guard sx >= 0, sx < Double(width) else { continue }
                    warper.resampling.taps(sx, count: width, into: &xi, &xw)
                    var r: Float = 0, g: Float = 0, b: Float = 0, a: Float = 0
                    for (x, w) in zip(xi, xw) where w != 0 {
                        var cr: Float = 0, cg: Float = 0, cb: Float = 0, ca: Float = 0
                        for (y, wy) in zip(yi, yw) {
                            let p = (y * width + x) * 4
                            let alpha = Float(pixels[p + 3]) * wy
                            cr += Float(pixels[p]) * alpha; cg += Float(pixels[p + 1]) * alpha; cb += Float(pixels[p + 2]) * alpha; ca += 1 * alpha
                        }
                        r += cr * w; g += cg * w; b += cb * w; a += ca * w
                    }
                    if Self.referenceStore(r, g, b, a, at: (j * size + i) * 4, dst) { any = true }
                }
            }
        }
        return any ? out : nil
    }

    /// Un-premultiplies and stores a pixel as the Swift code did; true when it is not fully
    /// transparent.
    static func referenceStore(_ r: Float, _ g: Float, _ b: Float, _ a: Float, at p: Int, _ dst: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        guard a > 0.5 else { return false }
        let alpha = min(255, a)
        dst[p] = UInt8(min(255, max(0, r / a + 0.5)))
        dst[p + 1] = UInt8(min(255, max(0, g / a + 0.5)))
        dst[p + 2] = UInt8(min(255, max(0, b / a + 0.5)))
        dst[p + 3] = UInt8(alpha + 0.5 > 255 ? 255 : alpha + 0.5)
        return true
    }

    /// Tiles over a noise image at 0.5x, 1.3x and 2.6x its pixels, each tile partly off the
    /// image, with every resampling, at tile sizes even and odd (the vector loops take two
    /// pixels at a time).
    @Test(arguments: [0.5, 1.3, 2.6])
    func warpedTilesAreTheReferenceBytes(scale: Double) throws {
        let width = 301, height = 257
        let image = Self.noise(width: width, height: height, seed: UInt64(scale * 10))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pixel-loops-\(UUID().uuidString).png").path
        try Data(image.encoded(.png())).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rows = try SourceRows(path: path)
        try rows.load(0..<height)
        for size in [256, 9] {
            // At zoom z a tile's pixel is 360 / (size * 2^z) degrees wide; the image's pixel is
            // `scale` of them, so it is drawn at 1 / scale.
            let z = 10
            let pixelDegrees = 360 / (Double(size) * pow(2, Double(z))) * scale
            let west = -0.3 * Double(size) * 360 / (Double(size) * pow(2, Double(z)))  // the tile at x = 2^(z-1) - 1 is partly west of it
            let georeference = try Georeference(a: pixelDegrees, b: 0, c: west, d: 0, e: -pixelDegrees * 0.75, f: 0.05,
                                                space: .degrees, width: width, height: height)
            for resampling in Resampling.allCases {
                let warper = TileWarper(georeference: georeference, resampling: resampling)
                var drawn = 0
                for x in (1 << (z - 1)) - 1...(1 << (z - 1)) + 1 {
                    for y in (1 << (z - 1)) - 1...(1 << (z - 1)) + 1 {
                        let tile = TileID(z: z, x: x, y: y)
                        let expected = Self.referenceRender(warper, tile, size: size, pixels: rows.pixels, width: width, height: height)
                        let got = warper.render(tile, size: size, rows: rows)
                        #expect(Self.firstDifference(got?.pixels, expected) == nil, "\(resampling) \(tile) size \(size)")
                        if expected != nil { drawn += 1 }
                    }
                }
                #expect(drawn >= 2, "\(resampling) size \(size): the tiles miss the image")
            }
        }
    }

    /// gdal2tiles' average as the Swift code did it, with integer division.
    static func referenceAverage(_ children: [RGBAImage?], size: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: size * size * 4)
        let half = size / 2
        var any = false
        for (index, child) in children.enumerated() {
            guard let src = child?.pixels else { continue }
            let ox = (index % 2) * half, oy = (index / 2) * half
            for j in 0..<half {
                for i in 0..<half {
                    var r: UInt32 = 0, g: UInt32 = 0, b: UInt32 = 0, a: UInt32 = 0
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        let p = ((2 * j + dy) * size + 2 * i + dx) * 4
                        let alpha = UInt32(src[p + 3])
                        r += UInt32(src[p]) * alpha; g += UInt32(src[p + 1]) * alpha; b += UInt32(src[p + 2]) * alpha; a += alpha
                    }
                    guard a > 0 else { continue }
                    let q = ((oy + j) * size + ox + i) * 4
                    out[q] = UInt8((r + a / 2) / a); out[q + 1] = UInt8((g + a / 2) / a); out[q + 2] = UInt8((b + a / 2) / a)
                    out[q + 3] = UInt8((a + 2) / 4)
                    any = true
                }
            }
        }
        return any ? out : nil
    }

    @Test func averagedParentsAreTheReferenceBytes() {
        for size in [256, 10] {
            let children: [RGBAImage?] = [Self.noise(width: size, height: size, seed: 1), nil,
                                          Self.noise(width: size, height: size, seed: 2), Self.noise(width: size, height: size, seed: 3)]
            #expect(Self.firstDifference(TileWarper.average(children, size: size)?.pixels, Self.referenceAverage(children, size: size)) == nil)
            // A grid of grey levels under many alphas (every quotient n / a the loop can take,
            // n <= 255a + a/2 for a <= 1020, was checked in float once, in C: all exact).
            var exhaustive = [UInt8](repeating: 0, count: size * size * 4)
            var n = 0
            for p in stride(from: 0, to: exhaustive.count, by: 4) {
                exhaustive[p] = UInt8(n % 256); exhaustive[p + 1] = UInt8((n / 7) % 256); exhaustive[p + 2] = UInt8(255 - n % 256)
                exhaustive[p + 3] = UInt8((n * 37) % 256)
                n += 1
            }
            let grid = RGBAImage(width: size, height: size, pixels: exhaustive)
            #expect(Self.firstDifference(TileWarper.average([grid, grid, grid, grid], size: size)?.pixels,
                                         Self.referenceAverage([grid, grid, grid, grid], size: size)) == nil)
        }
        #expect(TileWarper.average([nil, nil, nil, nil], size: 8) == nil)
        let clear = RGBAImage(width: 8, height: 8, pixels: [UInt8](repeating: 0, count: 256))
        #expect(TileWarper.average([clear, nil, nil, nil], size: 8) == nil)
    }
}
