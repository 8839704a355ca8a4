import Foundation
import Testing
import TileMath
@testable import Canvas

/// The canvas's own rasterizer (CoverageRaster, StrokeOutline) against cairo and against the
/// truth: the same shapes drawn by cairo at 16x and averaged down, which is the area of each
/// pixel the shape covers, to within cairo's error at 16x.
@Suite struct CoverageRasterTests {
    static let size = 64, factor = 16

    enum Shape {
        case fill([[PixelPoint]], FillRule)
        case stroke([PixelPoint], closed: Bool, StrokeStyle)
    }

    /// The shape's alpha, drawn directly, by cairo, and by cairo at 16x averaged down.
    static func alphas(_ shape: Shape) throws -> (direct: [Double], cairo: [Double], truth: [Double]) {
        func draw(on canvas: Canvas, scale: Double) {
            switch shape {
            case .fill(let rings, let rule):
                canvas.fill(.polygon(rings.map { $0.map { P($0.x * scale, $0.y * scale) } }), with: .color(.black), rule: rule)
            case .stroke(let points, let closed, var style):
                style.width *= scale
                let scaled = points.map { P($0.x * scale, $0.y * scale) }
                canvas.stroke(closed ? .polygon([scaled]) : .polyline(scaled), with: .color(.black), style: style)
            }
        }
        func alpha(_ image: RGBAImage) -> [Double] { (0..<(image.width * image.height)).map { Double(image.pixels[$0 * 4 + 3]) } }
        let direct = try Canvas(width: size, height: size)
        draw(on: direct, scale: 1)
        let cairo = try Canvas(width: size, height: size)
        cairo.drawsWithCairoOnly = true
        draw(on: cairo, scale: 1)
        let big = try Canvas(width: size * factor, height: size * factor)
        big.drawsWithCairoOnly = true
        draw(on: big, scale: Double(factor))
        let fine = alpha(big.makeImage())
        var truth = [Double](repeating: 0, count: size * size)
        for y in 0..<(size * factor) {
            for x in 0..<(size * factor) { truth[(y / factor) * size + x / factor] += fine[y * size * factor + x] }
        }
        return (alpha(direct.makeImage()), alpha(cairo.makeImage()), truth.map { $0 / Double(factor * factor) })
    }

    static func rms(_ a: [Double], _ b: [Double]) -> Double {
        (zip(a, b).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Double(a.count)).squareRoot()
    }

    /// Seeded shapes: small polygons, random walks 1.5-3 px wide (kept on the canvas, so
    /// they run along its edges and over themselves), a wide closed ring, a self-crossing
    /// star under both fill rules, a hairpin, a line that turns back on itself, a dense
    /// GPS-like track.
    static func shapes() -> [(String, Shape)] {
        var rng = SeededRandom(seed: 1689)
        var shapes = [(String, Shape)]()
        for index in 0..<12 {
            let cx = rng.next(in: 12...52), cy = rng.next(in: 12...52), r = rng.next(in: 4...14)
            let sides = Int(rng.next(in: 3...9.99))
            let ring = (0..<sides).map { k in P(cx + r * cos(2 * .pi * Double(k) / Double(sides)), cy + 0.76 * r * sin(2 * .pi * Double(k) / Double(sides))) }
            shapes.append(("polygon \(index)", .fill([ring], .nonZero)))
            var walk = [P(rng.next(in: 8...56), rng.next(in: 8...56))]
            for _ in 0..<9 { walk.append(P(min(62, max(2, walk.last!.x + rng.next(in: -12...12))), min(62, max(2, walk.last!.y + rng.next(in: -12...12))))) }
            let caps: [StrokeStyle.Cap] = [.round, .butt, .square]
            shapes.append(("walk \(index)", .stroke(walk, closed: false, StrokeStyle(width: rng.next(in: 1.5...3), cap: caps[index % 3], join: .round))))
        }
        let star = (0..<5).map { k in P(32 + 26 * cos(4 * .pi * Double(k) / 5), 32 + 26 * sin(4 * .pi * Double(k) / 5)) }
        shapes.append(("star, nonzero", .fill([star], .nonZero)))
        shapes.append(("star, even-odd", .fill([star], .evenOdd)))
        let square = [P(6, 6), P(58, 6), P(58, 58), P(6, 58)], hole = [P(20, 20), P(44, 20), P(44, 44), P(20, 44)]
        shapes.append(("square with a hole", .fill([square, hole], .evenOdd)))
        shapes.append(("closed ring, 7 px", .stroke([P(10, 12), P(54, 20), P(40, 52), P(14, 40)], closed: true, StrokeStyle(width: 7, join: .round))))
        shapes.append(("hairpin", .stroke([P(8, 30), P(56, 31), P(8, 33)], closed: false, StrokeStyle(width: 4, cap: .round, join: .round))))
        shapes.append(("turn back on itself", .stroke([P(8, 30), P(50, 30), P(20, 30)], closed: false, StrokeStyle(width: 3, cap: .round, join: .round))))
        var track = [P(4, 40)]
        for k in 1..<400 { track.append(P(4 + Double(k) * 0.14, 40 - 20 * sin(Double(k) / 60) + rng.next(in: -0.4...0.4))) }
        shapes.append(("dense GPS-like track, 3 px", .stroke(track, closed: false, StrokeStyle(width: 3, cap: .round, join: .round))))
        return shapes
    }

    /// Shapes that keep clear of themselves are drawn with the exact area: no further from
    /// the truth than cairo. Lines that overlap themselves are drawn as pieces united per
    /// pixel, which is exact where the pieces' edges coincide and approximate (a + b − ab,
    /// or the larger) in the few pixels where two pieces' edges cross: those are bounded
    /// here, a little further from the truth than cairo.
    @Test func coverageIsAsCloseToTheTrueAreaAsCairos() throws {
        let overlapping: Set = ["hairpin", "turn back on itself"]
        var directTotal = 0.0, cairoTotal = 0.0
        for (name, shape) in Self.shapes() {
            let (direct, cairo, truth) = try Self.alphas(shape)
            let directError = Self.rms(direct, truth), cairoError = Self.rms(cairo, truth)
            let worst = zip(direct, truth).map { abs($0 - $1) }.max() ?? 0
            let ink = direct.reduce(0, +), trueInk = truth.reduce(0, +)
            if name.hasPrefix("walk") || overlapping.contains(name) {
                #expect(directError <= cairoError + 3, "\(name): RMS \(directError) against the true area, cairo's \(cairoError)")
                #expect(worst <= 96, "\(name): a pixel is \(worst) levels off the true area")
                #expect(abs(ink - trueInk) <= max(255, trueInk * 0.02), "\(name): \(ink / 255) px of ink, \(trueInk / 255) true")
            } else {
                directTotal += directError
                cairoTotal += cairoError
                #expect(directError <= cairoError + 1, "\(name): RMS \(directError) against the true area, cairo's \(cairoError)")
                // A polygon that crosses itself errs at the vertices where the part it winds
                // twice meets the outside: the two windings are summed there.
                #expect(worst <= (name.hasPrefix("star") ? 64 : 40), "\(name): a pixel is \(worst) levels off the true area")
                #expect(abs(ink - trueInk) <= max(255, trueInk * 0.01), "\(name): \(ink / 255) px of ink, \(trueInk / 255) true")
            }
        }
        #expect(directTotal <= cairoTotal, "shapes clear of themselves: RMS \(directTotal) against cairo's \(cairoTotal)")
    }

    @Test func solidFillsHaveCairosColours() throws {
        let colors = [Color(hex: "#7fa65a")!.withAlpha(0.6), Color(hex: "#1f5fbf")!, Color(red: 0.3, green: 0.2, blue: 0.9, alpha: 0.35)]
        for background in [Color.clear, .white, Color(hex: "#203040")!.withAlpha(0.5)] {
            var images = [RGBAImage]()
            for cairoOnly in [false, true] {
                let canvas = try Canvas(width: 32, height: 32, background: background)
                canvas.drawsWithCairoOnly = cairoOnly
                for (index, color) in colors.enumerated() {
                    let at = Double(index * 6)
                    canvas.fill(.rectangle(x: at, y: at, width: 16, height: 16), with: .color(color))
                }
                images.append(canvas.makeImage())
            }
            #expect(images[0] == images[1], "whole pixels over \(background) differ from cairo's")
        }
    }

    @Test func hostileCoordinatesStayOnTheCanvas() throws {
        let canvas = try Canvas(width: 40, height: 30)
        // Far beyond the canvas on every side: the whole canvas is inside.
        canvas.fill(.polygon([[P(-1e8, -1e8), P(1e8, -1e8), P(1e8, 1e8), P(-1e8, 1e8)]]), with: .color(.black))
        #expect(canvas.makeImage().pixels.enumerated().allSatisfy { $0.offset % 4 != 3 || $0.element == 255 })
        // Wholly outside, reaching far beyond cairo's ±8 million px (cairo's fixed point wraps
        // and floods the canvas), beyond ±1e15 (cairo's), a stroke of no width or of infinite
        // width: no trap, and nothing drawn on the canvas.
        let clear = try Canvas(width: 40, height: 30)
        for ring in [[P(-50, -50), P(-10, -50), P(-10, -10)], [P(100, 5), P(200, 5), P(150, 25)],
                     [P(-1e300, -5), P(1e300, -5), P(0, -1e300)],
                     [P(0, 40), P(40, 40), P(20, 1e12)], [P(-1e8, 40), P(1e8, 40), P(0, 1e8)]] {
            clear.fill(.polygon([ring]), with: .color(.black))
            clear.stroke(.polyline(ring), with: .color(.black), style: StrokeStyle(width: 3, cap: .round, join: .round))
        }
        clear.stroke(.polyline([P(10, 10), P(20, 10)]), with: .color(.black), style: StrokeStyle(width: .infinity, join: .round))
        clear.stroke(.polyline([P(10, 10), P(20, 10)]), with: .color(.black), style: StrokeStyle(width: 0, join: .round))
        #expect(clear.makeImage().pixels.allSatisfy { $0 == 0 })
        // Not finite: cairo's, as before.
        clear.fill(.polygon([[P(.nan, 5), P(10, .infinity), P(3, 3)]]), with: .color(.black))
    }

    @Test func segmentsOfNoLengthDrawTheirCapsAsCairoDoes() throws {
        for cap in [StrokeStyle.Cap.round, .square, .butt] {
            var images = [RGBAImage]()
            for cairoOnly in [false, true] {
                let canvas = try Canvas(width: 20, height: 20)
                canvas.drawsWithCairoOnly = cairoOnly
                canvas.stroke(.polyline([P(10, 10), P(10, 10)]), with: .color(.black), style: StrokeStyle(width: 8, cap: cap, join: .round))
                images.append(canvas.makeImage())
            }
            let ink = images.map { $0.pixels.enumerated().filter { $0.offset % 4 == 3 }.map { Double($0.element) }.reduce(0, +) / 255 }
            #expect(abs(ink[0] - ink[1]) < 1.5, "\(cap) cap: \(ink[0]) px of ink, cairo \(ink[1])")
        }
    }

    @Test func arcsTurnAsCairoReadsThemButAtMostOnce() {
        #expect(Path.arcSweep(from: 0, to: .pi) == .pi)
        #expect(Path.arcSweep(from: 0, to: 2 * .pi) == 2 * .pi)
        #expect(abs(Path.arcSweep(from: 1, to: 0)! - (2 * .pi - 1)) < 1e-12)    // the end moved on a turn
        #expect(Path.arcSweep(from: 0, to: 1e12) == 2 * .pi)                     // many turns draw one
        #expect(Path.arcSweep(from: 1e12, to: 0)! <= 2 * .pi)                    // no loop adding turns
        #expect(Path.arcSweep(from: 0, to: .infinity) == nil)
        #expect(Path.arcSweep(from: .nan, to: 1) == nil)
        // A circle goes through the canvas's rasterizer (flattened within 0.1 px, as cairo
        // flattens it) and has cairo's ink, a little under pi r^2 as the chords cut inside.
        var inks = [Double]()
        for cairoOnly in [false, true] {
            guard let canvas = try? Canvas(width: 40, height: 40) else { return }
            canvas.drawsWithCairoOnly = cairoOnly
            canvas.fill(.circle(center: P(20, 20), radius: 15), with: .color(.black))
            inks.append(canvas.makeImage().pixels.enumerated().filter { $0.offset % 4 == 3 }.map { Double($0.element) }.reduce(0, +) / 255)
        }
        #expect(abs(inks[0] - inks[1]) < 1, "a circle of radius 15: \(inks[0]) px of ink, cairo \(inks[1])")
        #expect(abs(inks[0] - .pi * 225) < 7, "a circle of radius 15: \(inks[0]) px of ink")
    }

    /// A ring whose closing point misses its first by rounding (an arc's end: sin 2π is not
    /// 0) is still one ring that fills exactly; it used to fail the check and go to cairo.
    @Test func aRingClosedWithinRoundingFillsExactly() {
        let ring = (0..<12).map { k in P(20 + 9 * cos(Double(k) * .pi / 6), 15.621038670418784 + 9 * sin(Double(k) * .pi / 6)) }
        let open = Subpath(points: ring + [P(ring[0].x, ring[0].y.nextDown)], closed: true)
        #expect(!Subpath.separated([open], reach: Subpath.samePoint, otherSubpathReach: 1.5))  // as it was
        let rings = Subpath.deduplicated([open])
        #expect(rings[0].points.count == 12)
        #expect(Subpath.fillsExactly(rings))
        // Points a thousandth of a pixel apart stay two.
        #expect(Subpath.deduplicated([Subpath(points: [P(0, 0), P(0.001, 0), P(5, 5)], closed: false)])[0].points.count == 3)
    }

    /// A marker's ring filled as `Path.ring` covers what cairo's stroke of the circle covers
    /// (within flattening), through the canvas's rasterizer: the same pixels on a tile as on
    /// a larger canvas that holds it at an offset.
    @Test func aRingFilledIsTheCirclesStroke() throws {
        for (radius, width) in [(10.0, 2.0), (20.0, 4.0), (7.0, 1.12)] {
            let filled = try Canvas(width: 64, height: 64), stroked = try Canvas(width: 64, height: 64)
            stroked.drawsWithCairoOnly = true
            filled.fill(.ring(center: P(32, 32), radius: radius, width: width), with: .color(.black), rule: .evenOdd)
            stroked.stroke(.circle(center: P(32, 32), radius: radius), with: .color(.black), style: StrokeStyle(width: width))
            let ink = [filled, stroked].map { canvas in
                canvas.makeImage().pixels.enumerated().filter { $0.offset % 4 == 3 }.map { Double($0.element) }.reduce(0, +) / 255
            }
            let area = Double.pi * ((radius + width / 2) * (radius + width / 2) - (radius - width / 2) * (radius - width / 2))
            #expect(abs(ink[0] - ink[1]) < 0.01 * area + 0.5, "radius \(radius), width \(width): \(ink[0]) px of ink, cairo's stroke \(ink[1])")
        }
        // Cut by a tile's edge: the tile's pixels are the larger canvas's.
        let tile = try Canvas(width: 256, height: 256), larger = try Canvas(width: 512, height: 256)
        tile.fill(.ring(center: P(250.3, 100.6), radius: 20, width: 4), with: .color(.white), rule: .evenOdd)
        larger.fill(.ring(center: P(250.3, 100.6), radius: 20, width: 4), with: .color(.white), rule: .evenOdd)
        #expect(tile.makeImage().pixels == larger.makeImage().cropped(x: 0, y: 0, width: 256, height: 256).pixels)
    }

    /// A raster goes from a canvas to the next (`CoverageRaster.take`, `giveBack`): its cells
    /// are zero after every fill, so a shape drawn with a used raster is the shape drawn with
    /// a new one, byte for byte.
    @Test func aUsedRasterDrawsAsANewOne() throws {
        func fill(_ raster: CoverageRaster, _ pieces: [CoverageRaster.Piece], size: Int) -> [UInt8] {
            var pixels = [UInt8](repeating: 0, count: size * size * 4)
            pixels.withUnsafeMutableBufferPointer { buffer in
                _ = raster.fill(pieces: pieces, rule: .nonZero, word: 0xFF00_0000, into: buffer.baseAddress!, stride: size * 4, width: size, height: size)
            }
            return pixels
        }
        let used = CoverageRaster()
        // A large shape, and one in two pieces (the raster's mask), leave it grown and used.
        _ = fill(used, [CoverageRaster.Piece(contours: [[P(1, 1), P(500, 3), P(250, 499)]])], size: 512)
        _ = fill(used, [CoverageRaster.Piece(contours: [[P(1, 1), P(60, 3), P(30, 50)]]),
                        CoverageRaster.Piece(contours: [[P(10, 1), P(70, 30), P(20, 60)]], overlapsPrevious: (P(20, 20), 5))], size: 64)
        let star = [CoverageRaster.Piece(contours: [(0..<10).map { k in
            let r = k % 2 == 0 ? 30.0 : 12.0, a = Double(k) * .pi / 5
            return P(40 + r * cos(a), 40 + r * sin(a))
        }])]
        #expect(fill(used, star, size: 80) == fill(CoverageRaster(), star, size: 80))
        // The pool keeps no more than its bound.
        for _ in 0..<(CoverageRaster.maximumSpare + 2) { CoverageRaster.giveBack(CoverageRaster()) }
        #expect(CoverageRaster.spareCount <= CoverageRaster.maximumSpare)
    }

    /// `fast` draws shapes that keep clear of themselves exactly as `best` does, and sums the
    /// overlap of a line that doubles back (more ink at its edges) where `best` unites it.
    @Test func fastSumsOverlapsThatBestUnites() throws {
        func draw(_ antialias: Canvas.Antialias, _ body: (Canvas) -> Void) throws -> RGBAImage {
            let canvas = try Canvas(width: 64, height: 64)
            canvas.setAntialias(antialias)
            body(canvas)
            return canvas.makeImage()
        }
        let clear: (Canvas) -> Void = { canvas in
            canvas.fill(.polygon([[P(5, 5), P(50, 12), P(30, 55)]]), with: .color(Color.black.withAlpha(0.6)))
            canvas.stroke(.polyline([P(4, 60), P(30, 40), P(60, 58)]), with: .color(.black), style: StrokeStyle(width: 2, cap: .round, join: .round))
        }
        #expect(try draw(.fast, clear) == draw(.best, clear))
        let doubling: (Canvas) -> Void = { canvas in
            canvas.stroke(.polyline([P(8, 30.3), P(50, 30.3), P(20, 30.3)]), with: .color(.black), style: StrokeStyle(width: 3, cap: .round, join: .round))
        }
        func ink(_ image: RGBAImage) -> Double { image.pixels.enumerated().filter { $0.offset % 4 == 3 }.map { Double($0.element) }.reduce(0, +) / 255 }
        let fast = ink(try draw(.fast, doubling)), best = ink(try draw(.best, doubling))
        #expect(fast > best + 10, "doubled back: \(fast) px of ink at fast, \(best) at best")
        #expect(abs(best - (42 * 3 + .pi * 2.25)) < 2, "best draws the union: \(best) px of ink")
    }

    /// Segments that keep a stroke's width and 2 px off the canvas are dropped before the
    /// outline is made: a line that leaves and comes back becomes two lines, a ring that
    /// leaves becomes a line; the pixels on the canvas do not change.
    @Test func segmentsOffTheCanvasAreDroppedWithoutAVisibleChange() throws {
        let leaving = Subpath(points: [P(10, 10), P(40, -30), P(60, -40), P(30, 50)], closed: false)
        let kept = Subpath.culled([leaving], width: 64, height: 64, margin: 4)
        #expect(kept.map(\.points) == [[P(10, 10), P(40, -30)], [P(60, -40), P(30, 50)]])
        let ring = Subpath(points: [P(10, 10), P(100, -50), P(120, 10), P(50, 50)], closed: true)
        #expect(Subpath.culled([ring], width: 64, height: 64, margin: 4).map(\.points) == [[P(120, 10), P(50, 50), P(10, 10), P(100, -50)]])
        #expect(Subpath.culled([ring], width: 64, height: 64, margin: 4).allSatisfy { !$0.closed })
        let inside = Subpath(points: [P(1, 1), P(60, 60), P(1, 60)], closed: true)
        #expect(Subpath.culled([inside], width: 64, height: 64, margin: 0).map(\.closed) == [true])
        #expect(Subpath.culled([Subpath(points: [P(-100, -100), P(-50, -90)], closed: false)], width: 64, height: 64, margin: 4).isEmpty)

        // Drawn on a canvas and, whole, on one five times its size.
        let paths: [(Path, StrokeStyle)] = [
            (.polyline([P(10, 10), P(40, -30), P(100, -40), P(150, 20), P(30, 50)]), StrokeStyle(width: 3, cap: .round, join: .round)),
            (.polygon([[P(10, 10), P(100, -50), P(120, 10), P(50, 50)]]), StrokeStyle(width: 2, cap: .butt, join: .round)),
            (.polyline([P(-20, 30), P(-20, -20), P(70, -3.5), P(20, 62)]), StrokeStyle(width: 6, cap: .square, join: .round)),
            // A segment just off the edge whose ink reaches onto the canvas is kept.
            (.polyline([P(30, 30), P(-2, 10), P(-2, 50), P(30, 40)]), StrokeStyle(width: 6, cap: .round, join: .round)),
        ]
        for (path, style) in paths {
            let small = try Canvas(width: 64, height: 64)
            small.stroke(path, with: .color(.black), style: style)
            let large = try Canvas(width: 320, height: 320)
            large.stroke(path.applying(.translation(x: 128, y: 128)), with: .color(.black), style: style)
            let a = small.makeImage(), b = large.makeImage().cropped(x: 128, y: 128, width: 64, height: 64)
            let worst = zip(a.pixels, b.pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 1, "\(style): pixels differ by up to \(worst)")
            #expect(a.pixels.contains { $0 > 0 })
        }
    }

    @Test func clipsTransformsAndLayersStillApply() throws {
        let canvas = try Canvas(width: 20, height: 20)
        canvas.withClip(.rectangle(x: 0, y: 0, width: 10, height: 20)) {
            canvas.fill(.rectangle(x: 0, y: 0, width: 20, height: 20), with: .color(.black))
        }
        canvas.withTransform(.translation(x: 10, y: 10)) {
            canvas.fill(.rectangle(x: 0, y: 0, width: 10, height: 10), with: .color(.black))
        }
        let image = canvas.makeImage()
        #expect(image[5, 5].alpha == 255 && image[15, 5].alpha == 0 && image[15, 15].alpha == 255)
    }

    /// The rasterizer's loops are C (tk_coverage.c) since 6eade9b, ported from Swift operation
    /// for operation: every shape above, with a polygon and a line that run off the canvas,
    /// drawn in three colours (two translucent) over a background, at both antialias settings,
    /// on a 64 px canvas and stretched nine times across a 600 px one (rows longer than the C
    /// loops' chunks), gives the premultiplied bytes the Swift loops gave (digests taken with
    /// them, at 33d8a71).
    @Test func pixelsAreTheBytesTheSwiftLoopsDrew() throws {
        let colors = [Color(hex: "#7fa65a")!.withAlpha(0.6), Color(hex: "#1f5fbf")!, Color(hex: "#4a3520")!.withAlpha(0.85)]
        var shapes = Self.shapes().map(\.1)
        shapes.append(.fill([[P(-10, 20), P(80, 10), P(70, 70)]], .nonZero))
        shapes.append(.stroke([P(-20, 5), P(90, 60), P(30, -10)], closed: false, StrokeStyle(width: 2.5, cap: .round, join: .round)))
        var digests = [String]()
        for (width, stretch) in [(Self.size, 1.0), (600, 9.0)] {
            for antialias in Canvas.Antialias.allCases {
                let canvas = try Canvas(width: width, height: Self.size, background: Color(hex: "#f4ecd8")!)
                canvas.setAntialias(antialias)
                for (index, shape) in shapes.enumerated() {
                    let color = Paint.color(colors[index % colors.count])
                    func stretched(_ points: [PixelPoint]) -> [PixelPoint] { points.map { P($0.x * stretch, $0.y) } }
                    switch shape {
                    case .fill(let rings, let rule):
                        canvas.fill(.polygon(rings.map(stretched)), with: color, rule: rule)
                    case .stroke(let points, let closed, let style):
                        canvas.stroke(closed ? .polygon([stretched(points)]) : .polyline(stretched(points)), with: color, style: style)
                    }
                }
                // FNV-1a, 64 bits.
                var hash: UInt64 = 0xcbf2_9ce4_8422_2325
                for byte in canvas.surfaceBytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
                digests.append(String(hash, radix: 16))
            }
        }
        #expect(digests == ["31a731b379cc5612", "7f51687bf4a9b1c2", "be55bce838b4d3c1", "ef653a1e7ef6485a"], "\(digests)")
    }
}


extension SeededRandom {
    mutating func next(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * nextUnit()
    }
}
