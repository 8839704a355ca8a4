import Foundation
import Testing
import Canvas
import TileMath
import Features
@testable import Rendering

/// Every overlay kind in one scene around the zoo, rendered at two zooms and at @1x and @2x,
/// against golden images (TILEKIT_RECORD_GOLDENS=1 rewrites them; failures are written
/// to /tmp/tilekit-overlays-*.png).
@Suite struct OverlayGoldenTests {
    static func scene() -> (features: [Feature], images: [String: RGBAImage]) {
        var features = sampleFeatures()  // pond with an island, dashed route, 60 m zone, markers, a marker on a tile edge
        var checker = RGBAImage(width: 8, height: 8)
        for y in 0..<8 { for x in 0..<8 { checker[x, y] = (x + y) % 2 == 0 ? Pixel(red: 120, green: 60, blue: 20) : Pixel(red: 240, green: 220, blue: 170) } }
        var art = Feature(geometry: nil)
        art.imageOverlay = ImageOverlay(image: "art", placement: .corners(
            topLeft: Coordinate(latitude: 40.7705, longitude: -73.9705), topRight: Coordinate(latitude: 40.7712, longitude: -73.9685),
            bottomRight: Coordinate(latitude: 40.7697, longitude: -73.9678), bottomLeft: Coordinate(latitude: 40.7690, longitude: -73.9698)), opacity: 0.8)
        var water = Feature(geometry: .polygon([[(-73.9700, 40.7640), (-73.9680, 40.7640), (-73.9680, 40.7655), (-73.9700, 40.7655), (-73.9700, 40.7640)]
            .map { Coordinate(latitude: $0.1, longitude: $0.0) }]))
        water.renderer = "shimmer"
        var geodesic = Feature(geometry: .lineString([Coordinate(latitude: 40.7630, longitude: -73.9760), Coordinate(latitude: 40.7715, longitude: -73.9660)]))
        geodesic.properties["geodesic"] = .bool(true)
        geodesic.renderer = "gradient"
        var icons = [Feature]()
        for (i, symbol) in ["star", "ride", "food", "firstaid", "hero", "subway", "monster", "treasure", "store", "pin"].enumerated() {
            var f = Feature(geometry: .point(Coordinate(latitude: 40.7700 - Double(i) * 0.0005, longitude: -73.9750)))
            f.style.markerSymbol = symbol
            f.style.markerColor = Color(hex: ["#e0a800", "#8e44ad", "#d35400", "#c0392b", "#27ae60", "#fccc0a", "#2c3e50", "#b8860b", "#16a085", "#1f5fbf"][i])
            f.style.markerSize = .small
            icons.append(f)
        }
        var custom = Feature(geometry: .point(Coordinate(latitude: 40.7650, longitude: -73.9660)), title: "Custom")
        custom.style.markerImage = "art"
        custom.style.markerAnchor = (0.5, 1)
        features = [art, water] + features + [geodesic] + icons + [custom]
        return (features, ["art": checker])
    }

    @Test(arguments: [(16, 1), (17, 1), (17, 2)])
    func everyOverlayKind(zoom: Int, scale: Int) throws {
        let (features, images) = Self.scene()
        let size = 384 * scale
        let centre = Coordinate(latitude: 40.7675, longitude: -73.9710)
        let world = 256.0 * Double(scale) * pow(2, Double(zoom))
        let p = MapPoint(centre)
        let projection = MapProjection(zoom: Double(zoom), tileSize: 256, scale: Double(scale),
                                       origin: PixelPoint(x: (p.x * world - Double(size) / 2).rounded(), y: (p.y * world - Double(size) / 2).rounded()))
        let canvas = try Canvas(width: size, height: size, background: Color(hex: "#f4e8c8")!)
        FeatureRenderer(images: images).draw(features, on: canvas, projection: projection)
        let image = canvas.makeImage()
        let name = "overlays-z\(zoom)@\(scale)x"
        let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens/\(name).png")
        if ProcessInfo.processInfo.environment["TILEKIT_RECORD_GOLDENS"] == "1" {
            try Data(image.encoded(.png(compressionLevel: 9, filter: .all))).write(to: golden)
            return
        }
        let expected = try RGBAImage(contentsOf: golden)
        var off = 0
        for y in 0..<size { for x in 0..<size where image[x, y].distance(to: expected[x, y]) > 8 { off += 1 } }
        if off > 60 { try Data(image.encoded()).write(to: URL(fileURLWithPath: "/tmp/tilekit-\(name).png")) }
        #expect(off <= 60, "\(off) pixels differ from \(name).png by more than 8 (text antialiasing allows a few)")
        // Asserted pixels: the goblin marker's centre is its red; the island is bare parchment.
        let goblin = projection.point(for: zoo)
        #expect(image[Int(goblin.x), Int(goblin.y)].distance(to: Pixel(Color(hex: "#b3261e")!)) < 6)
        let island = projection.point(for: Coordinate(latitude: 40.76725, longitude: -73.9735))
        #expect(image[Int(island.x), Int(island.y)] == Pixel(Color(hex: "#f4e8c8")!))
    }
}
