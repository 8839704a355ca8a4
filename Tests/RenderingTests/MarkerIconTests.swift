import Foundation
import Testing
import Canvas
import TileMath
@testable import Rendering

@Suite struct MarkerIconTests {
    /// Every icon at 1x (radius 14) and 2x (radius 28), tinted: a golden image, plus pixels.
    @Test func iconSheet() throws {
        let icons = MarkerIcon.allCases
        let canvas = try Canvas(width: 70 * icons.count, height: 200, background: Color(hex: "#f4e8c8")!)
        let colors = ["#1f5fbf", "#e0a800", "#8e44ad", "#d35400", "#c0392b", "#27ae60", "#fccc0a", "#2c3e50", "#b8860b", "#16a085"]
        for (i, icon) in icons.enumerated() {
            let x = 35.0 + 70 * Double(i)
            icon.draw(on: canvas, at: PixelPoint(x: x, y: icon == .pin ? 70 : 40), radiusPixels: 14, color: Color(hex: colors[i])!)
            icon.draw(on: canvas, at: PixelPoint(x: x, y: icon == .pin ? 190 : 130), radiusPixels: 28, color: Color(hex: colors[i])!)
        }
        let image = canvas.makeImage()
        try Data(image.encoded()).write(to: URL(fileURLWithPath: "/tmp/tilekit-icons.png"))
        try expectIconGolden(image)
        // First aid (index 4): a white cross in the middle of a tinted disc.
        let firstAid = 35 + 70 * 4
        #expect(image[firstAid, 130] == Pixel(red: 255, green: 255, blue: 255))
        #expect(image[firstAid + 12, 130 + 12].distance(to: Pixel(Color(hex: "#c0392b")!)) < 4)  // beside the cross
        // The pin's tip is at its anchor: tinted 18 px above it, parchment 5 px below.
        #expect(image[35, 172].distance(to: Pixel(Color(hex: "#1f5fbf")!)) < 4)
        #expect(image[35, 195] == Pixel(Color(hex: "#f4e8c8")!))
    }

    @Test(arguments: [("restaurant", MarkerIcon.food), ("2", .food), ("0", .star), ("1", .ride), ("3", .firstAid),
                      ("rail-metro", .subway), ("monster", .monster), ("shop", .store), ("treasure", .treasure), ("hero", .hero), ("pin", .pin)])
    func symbolsMapToIcons(symbol: String, icon: MarkerIcon) {
        #expect(MarkerIcon(symbol: symbol) == icon)
    }

    @Test func unknownSymbolsAreNoIcon() {
        #expect(MarkerIcon(symbol: "zeppelin") == nil)
    }
}

/// The sheet against Goldens/icons.png (TILEKIT_RECORD_GOLDENS=1 rewrites it).
func expectIconGolden(_ image: RGBAImage, filePath: String = #filePath) throws {
    let golden = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Goldens/icons.png")
    if ProcessInfo.processInfo.environment["TILEKIT_RECORD_GOLDENS"] == "1" {
        try Data(image.encoded(.png(compressionLevel: 9, filter: .all))).write(to: golden)
        return
    }
    let expected = try RGBAImage(contentsOf: golden)
    var worst = 0
    for y in 0..<image.height { for x in 0..<image.width { worst = max(worst, image[x, y].distance(to: expected[x, y])) } }
    #expect(worst <= 2, "icons differ from the golden by up to \(worst); the actual sheet is /tmp/tilekit-icons.png")
}
