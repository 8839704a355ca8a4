import Foundation
import Testing
import TileMath
import Canvas

/// The library example in README.md, kept compiling and correct.
@Suite struct ReadmeExampleTests {
    @Test func readmeExample() throws {
        let zoo = Coordinate(latitude: 40.767769, longitude: -73.971870)
        let tile = TileID(containing: zoo, zoom: 16)                 // 16/19301/24627
        let box = tile.bounds                                         // degrees, W,S,E,N
        let zone = Geodesy.circle(center: zoo, radius: 10)           // a 10 m encounter zone, round in meters

        let canvas = try Canvas(width: 256, height: 256, background: Color(hex: "#f4e8c8")!)
        let origin = tile.northWest.pixel(zoom: 16)
        let ring = zone.map { c in
            let p = c.pixel(zoom: 16)
            return PixelPoint(x: p.x - origin.x, y: p.y - origin.y)
        }
        canvas.fill(.polygon([ring]), with: .color(Color(hex: "#b3261e")!.withAlpha(0.3)))
        canvas.drawText("Goblin", at: ring[0], style: TextStyle(font: Font(size: 14, weight: .bold), halo: Halo(),
                                                    anchor: PixelPoint(x: 0.5, y: 1)))  // above the zone
        let png = try canvas.encoded(.png(compressionLevel: 2))      // [UInt8], libpng

        #expect(tile.description == "16/19301/24627" && box.contains(zoo))
        let image = try RGBAImage(decoding: png)
        // The zone's centre is tinted red over the parchment.
        let centre = zoo.pixel(zoom: 16)
        let pixel = image[Int(centre.x - origin.x), Int(centre.y - origin.y)]
        #expect(Int(pixel.red) > Int(pixel.green) + 40, "\(pixel)")
    }
}
