import Foundation
import Testing
import TileMath
@testable import Canvas

func P(_ x: Double, _ y: Double) -> PixelPoint { PixelPoint(x: x, y: y) }

@Suite struct DrawingTests {
    @Test func polylineCapsJoinsDashAndAlpha() throws {
        let canvas = try Canvas(width: 200, height: 160, background: .white)
        let redColor = Color(red: 1, green: 0, blue: 0)
        // Three 10 px lines from x=30 to x=170 with each cap.
        for (row, cap) in [StrokeStyle.Cap.butt, .square, .round].enumerated() {
            let y = 20.0 + Double(row) * 25
            canvas.stroke(.polyline([P(30, y), P(170, y)]), with: .color(redColor), style: StrokeStyle(width: 10, cap: cap))
        }
        // A dashed 4 px blue line: 20 on, 10 off.
        canvas.stroke(.polyline([P(10, 95), P(190, 95)]), with: .color(Color(red: 0, green: 0, blue: 1)),
                      style: StrokeStyle(width: 4, dash: [20, 10]))
        // A half-transparent black zig-zag with round joins.
        canvas.stroke(.polyline([P(20, 150), P(60, 115), P(100, 150), P(140, 115), P(180, 150)]),
                      with: .color(Color.black.withAlpha(0.5)), style: StrokeStyle(width: 8, cap: .round, join: .round))
        let image = canvas.makeImage()
        try expectGolden(image, "polyline")
        // The middle of each line is red; butt ends at x=30, square and round reach x=25.
        expectPixel(image, 100, 20, red); expectPixel(image, 100, 45, red); expectPixel(image, 100, 70, red)
        expectPixel(image, 27, 20, white)                   // butt: nothing before the end
        expectPixel(image, 27, 45, red)                     // square: half the width beyond
        expectPixel(image, 27, 70, red)                     // round: the cap's middle
        expectPixel(image, 25, 65, white, tolerance: 10)    // round: not the corner a square cap has
        expectPixel(image, 100, 27, white)                  // 10 px wide: 5 px each side
        // Dash: on 10-30, off 30-40, on 40-60.
        expectPixel(image, 20, 95, blue); expectPixel(image, 35, 95, white); expectPixel(image, 50, 95, blue)
        // 50% black over white.
        expectPixel(image, 60, 117, Pixel(red: 128, green: 128, blue: 128), tolerance: 3)
    }

    @Test func polygonsWithHolesAndFillRules() throws {
        let canvas = try Canvas(width: 240, height: 100, background: .white)
        let outer = [P(10, 10), P(90, 10), P(90, 90), P(10, 90)]
        let sameWay = [P(30, 30), P(70, 30), P(70, 70), P(30, 70)]
        let green = Color(hex: "#2a9d3f")!
        // Left: even-odd cuts a hole from an inner ring wound either way.
        canvas.fill(.polygon([outer, sameWay]), with: .color(green), rule: .evenOdd)
        // Middle: non-zero fills an inner ring wound the same way.
        let shifted = { (ring: [PixelPoint], dx: Double) in ring.map { P($0.x + dx, $0.y) } }
        canvas.fill(.polygon([shifted(outer, 70), shifted(sameWay, 70)]), with: .color(green.withAlpha(0.6)), rule: .nonZero)
        // Right: non-zero with the hole wound the other way (RFC 7946 rings) cuts it.
        canvas.fill(.polygon([shifted(outer, 140), shifted(sameWay.reversed(), 140)]), with: .color(green), rule: .nonZero)
        canvas.stroke(.polygon([shifted(outer, 140), shifted(sameWay.reversed(), 140)]), with: .color(.black), style: StrokeStyle(width: 2))
        let image = canvas.makeImage()
        try expectGolden(image, "polygon")
        let g = Pixel(Color(hex: "#2a9d3f")!)
        expectPixel(image, 20, 50, g); expectPixel(image, 50, 50, white)     // even-odd hole
        expectPixel(image, 120, 50, Pixel(red: 127, green: 196, blue: 140), tolerance: 3)  // filled, 60%
        expectPixel(image, 160, 50, g); expectPixel(image, 190, 50, white)   // non-zero, reversed hole
        expectPixel(image, 150, 10, black)                                   // outline
    }

    @Test func linearAndRadialGradients() throws {
        let canvas = try Canvas(width: 200, height: 100)
        canvas.fill(.rectangle(x: 0, y: 0, width: 100, height: 100),
                    with: .linearGradient(start: P(0, 0), end: P(100, 0),
                                          stops: [GradientStop(0, Color(red: 1, green: 0, blue: 0)), GradientStop(1, Color(red: 0, green: 0, blue: 1))]))
        canvas.fill(.circle(center: P(150, 50), radius: 45),
                    with: .radialGradient(startCenter: P(150, 50), startRadius: 0, endCenter: P(150, 50), endRadius: 45,
                                          stops: [GradientStop(0, .white), GradientStop(1, Color.black.withAlpha(0))]))
        let image = canvas.makeImage()
        try expectGolden(image, "gradient")
        expectPixel(image, 0, 50, Pixel(red: 252, green: 0, blue: 3), tolerance: 4)
        expectPixel(image, 99, 50, Pixel(red: 3, green: 0, blue: 252), tolerance: 4)
        expectPixel(image, 50, 50, Pixel(red: 126, green: 0, blue: 129), tolerance: 4)
        expectPixel(image, 150, 50, white, tolerance: 4)
        #expect(image[150, 50 + 40].alpha < 40)    // fades out towards the rim
        expectPixel(image, 199, 0, transparent)    // outside the circle
    }

    @Test func imagesWithTransformAndOpacity() throws {
        // A 2x2 checker: red, blue / blue, red.
        let checker = RGBAImage(width: 2, height: 2, pixels: [255, 0, 0, 255, 0, 0, 255, 255, 0, 0, 255, 255, 255, 0, 0, 255])
        let canvas = try Canvas(width: 200, height: 100, background: .white)
        // Scaled 40x with nearest neighbour at (10, 10).
        canvas.draw(checker, x: 10, y: 10, width: 80, height: 80, interpolation: .nearest)
        // Rotated 90° clockwise about its centre, scaled 40x, at half opacity.
        let transform = AffineTransform.translation(x: -1, y: -1)
            .concatenating(.rotation(.pi / 2))
            .concatenating(.scale(x: 40, y: 40))
            .concatenating(.translation(x: 150, y: 50))
        canvas.draw(checker, transform: transform, opacity: 0.5, interpolation: .nearest)
        let image = canvas.makeImage()
        try expectGolden(image, "image")
        expectPixel(image, 20, 20, red); expectPixel(image, 80, 20, blue); expectPixel(image, 20, 80, blue)
        expectPixel(image, 5, 5, white)
        // After a 90° turn the top-left quadrant shows what was bottom-left (blue), at 50% over white.
        let halfBlue = Pixel(red: 128, green: 128, blue: 255)
        let halfRed = Pixel(red: 255, green: 128, blue: 128)
        expectPixel(image, 120, 20, halfBlue, tolerance: 3)
        expectPixel(image, 180, 20, halfRed, tolerance: 3)
        expectPixel(image, 180, 80, halfBlue, tolerance: 3)
    }

    @Test func affineTransformFromThreePoints() throws {
        let source = (P(0, 0), P(100, 0), P(0, 50))
        let destination = (P(10, 20), P(10, 120), P(-40, 20))  // rotated 90° and moved
        let t = try #require(AffineTransform(mapping: source, to: destination))
        #expect(t.apply(P(100, 50)) == P(-40, 120))
        let inverse = try #require(t.inverted)
        let back = inverse.apply(P(-40, 120))
        #expect(abs(back.x - 100) < 1e-9 && abs(back.y - 50) < 1e-9)
        #expect(AffineTransform(mapping: (P(0, 0), P(1, 1), P(2, 2)), to: destination) == nil)
    }

    @Test func clipping() throws {
        let canvas = try Canvas(width: 100, height: 100)
        canvas.withClip(.circle(center: P(50, 50), radius: 30)) {
            canvas.fill(.rectangle(x: 0, y: 0, width: 100, height: 100), with: .color(Color(red: 0, green: 0, blue: 1)))
        }
        // The clip ends with the block: this stroke is not clipped.
        canvas.stroke(.polyline([P(0, 95), P(100, 95)]), with: .color(.black), style: StrokeStyle(width: 4))
        let image = canvas.makeImage()
        try expectGolden(image, "clip")
        expectPixel(image, 50, 50, blue); expectPixel(image, 50, 21, blue)
        expectPixel(image, 10, 10, transparent); expectPixel(image, 50, 18, transparent)
        expectPixel(image, 5, 95, black)
        // Clip with even-odd: a ring.
        let ring = try Canvas(width: 100, height: 100)
        var path = Path.circle(center: P(50, 50), radius: 40)
        path.append(.circle(center: P(50, 50), radius: 20))
        ring.withClip(path, rule: .evenOdd) { ring.clear(.white) }
        // clear ignores the clip; fill respects it.
        let filled = try Canvas(width: 100, height: 100)
        filled.withClip(path, rule: .evenOdd) {
            filled.fill(.rectangle(x: 0, y: 0, width: 100, height: 100), with: .color(.black))
        }
        let ringImage = filled.makeImage()
        expectPixel(ringImage, 50, 50, transparent); expectPixel(ringImage, 50, 20, black)
        expectPixel(ring.makeImage(), 50, 50, white)
    }

    @Test func textWithHalo() throws {
        let canvas = try Canvas(width: 240, height: 80, background: Color(hex: "#3b6ea5")!)
        let style = TextStyle(font: Font(size: 28, weight: .bold), color: .black, halo: Halo(color: .white, width: 3))
        let box = canvas.drawText("Bethesda", at: P(120, 40), style: style)
        let image = canvas.makeImage()
        try expectGolden(image, "text", tolerance: 8, allowedMismatches: 40)
        // Centred on the point: the box's centre is (120, 40).
        #expect(abs(box.origin.x + box.size.width / 2 - 120) < 1 && abs(box.origin.y + box.size.height / 2 - 40) < 1)
        #expect(box.size.width > 100 && box.size.width < 200 && box.size.height > 25 && box.size.height < 45)
        // Ink: black glyph pixels and white halo pixels inside the box, the background outside.
        var blacks = 0, whites = 0
        for y in Int(box.origin.y)..<Int(box.origin.y + box.size.height) {
            for x in Int(box.origin.x)..<Int(box.origin.x + box.size.width) {
                if image[x, y].distance(to: black) < 30 { blacks += 1 }
                if image[x, y].distance(to: white) < 30 { whites += 1 }
            }
        }
        #expect(blacks > 300 && whites > 300, "black \(blacks), white \(whites)")
        expectPixel(image, 3, 3, Pixel(Color(hex: "#3b6ea5")!))
        // Measuring agrees with drawing; a larger font is wider.
        let measured = canvas.measureText("Bethesda", style: style)
        #expect(measured == box.size)
        var larger = style
        larger.font.size = 56
        #expect(canvas.measureText("Bethesda", style: larger).width > measured.width * 1.8)
    }

    @Test func premultipliedRoundTripKeepsStraightAlpha() throws {
        var image = RGBAImage(width: 4, height: 1)
        image[0, 0] = Pixel(red: 200, green: 100, blue: 50, alpha: 128)
        image[1, 0] = Pixel(red: 10, green: 250, blue: 130, alpha: 255)
        image[2, 0] = Pixel(red: 255, green: 255, blue: 255, alpha: 1)
        let canvas = try Canvas(image: image)
        let back = canvas.makeImage()
        expectPixel(back, 0, 0, image[0, 0], tolerance: 1)
        expectPixel(back, 1, 0, image[1, 0], tolerance: 0)
        #expect(back[2, 0].alpha == 1)
        expectPixel(back, 3, 0, transparent, tolerance: 0)
    }

    @Test func invalidCanvasSizes() {
        #expect(throws: CanvasError.invalidSize(width: 0, height: 10)) { try Canvas(width: 0, height: 10) }
        #expect(throws: CanvasError.self) { try Canvas(width: 40000, height: 10) }
    }
}
