import Testing
@testable import Canvas

/// Images drawn 1:1 at whole pixels (map tiles) are composited by the canvas itself: the
/// same bytes as cairo's, for every alpha, over every background, partly off the canvas.
@Suite struct ImageCompositingTests {
    /// Deterministic noise: every alpha from 0 to 255 among the pixels, runs of opaque and
    /// transparent ones as tiles have them.
    static func image(width: Int, height: Int, seed: UInt64) -> RGBAImage {
        var state = seed
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) {
            pixels[i] = next(); pixels[i + 1] = next(); pixels[i + 2] = next()
            let kind = next() % 4
            pixels[i + 3] = kind == 0 ? 255 : kind == 1 ? 0 : next()
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }

    @Test func wholePixelPlacementsMatchCairo() throws {
        let background = Self.image(width: 48, height: 40, seed: 1)
        let placements: [(Double, Double)] = [(0, 0), (5, 7), (-9, -3), (30, 25), (-40, 10), (47, 39), (100, 0)]
        var results = [[UInt8]]()
        for cairoOnly in [false, true] {
            let canvas = try Canvas(image: background)
            canvas.drawsWithCairoOnly = cairoOnly
            for (index, (x, y)) in placements.enumerated() {
                let tile = Self.image(width: 20 + index, height: 17, seed: UInt64(index + 2))
                canvas.draw(tile, x: x, y: y, width: Double(tile.width), height: Double(tile.height))
            }
            // Premultiplied, as cairo holds them: straight alpha would hide faint differences.
            results.append(canvas.surfaceBytes)
        }
        #expect(zip(results[0], results[1]).filter { $0 != $1 }.count == 0, "bytes unlike cairo's")
        #expect(results[0] != (try Canvas(image: background)).surfaceBytes, "something was drawn")
    }

    /// What is not a 1:1 placement at whole pixels still goes through cairo, unchanged.
    @Test func otherPlacementsGoThroughCairo() throws {
        let tile = Self.image(width: 16, height: 16, seed: 9)
        for (x, y, size, opacity) in [(0.5, 0.0, 16.0, 1.0), (2.0, 3.0, 32.0, 1.0), (2.0, 3.0, 16.0, 0.5)] {
            var results = [[UInt8]]()
            for cairoOnly in [false, true] {
                let canvas = try Canvas(width: 40, height: 40, background: .white)
                canvas.drawsWithCairoOnly = cairoOnly
                canvas.draw(tile, x: x, y: y, width: size, height: size, opacity: opacity)
                results.append(canvas.surfaceBytes)
            }
            #expect(zip(results[0], results[1]).filter { $0 != $1 }.count == 0, "\(x),\(y) \(size) px at \(opacity)")
        }
    }
}
