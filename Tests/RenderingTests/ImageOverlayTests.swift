import Foundation
import Testing
import Canvas
import TileMath
import Features
import TileSources
@testable import Rendering

@Suite struct ImageOverlayTests {
    /// A plate carrée image, 180 rows from 90°N to 90°S: each 10° band its own colour.
    static let bands: RGBAImage = {
        var image = RGBAImage(width: 36, height: 180)
        for y in 0..<180 {
            let band = y / 10
            for x in 0..<36 { image[x, y] = Pixel(red: UInt8(band * 14), green: UInt8(255 - band * 14), blue: 128) }
        }
        return image
    }()

    static func band(atLatitude latitude: Double) -> Pixel {
        let band = Int((90 - latitude) / 10)
        return Pixel(red: UInt8(band * 14), green: UInt8(255 - band * 14), blue: 128)
    }

    /// Rows land at their latitude in Mercator, not stretched linearly.
    @Test func boxesArePlateCarreeWarpedIntoMercator() throws {
        let canvas = try Canvas(width: 512, height: 512)
        let projection = MapProjection(zoom: 1, origin: PixelPoint(x: 0, y: 0))
        ImageOverlayRenderer.draw(Self.bands, placement: .box(BoundingBox(west: -180, south: -90, east: 180, north: 90)), opacity: 1,
                                  on: canvas, projection: projection)
        let image = canvas.makeImage()
        for latitude in [75.0, 65, 55, 45, 35, 15, 5, -5, -25, -45, -65, -75] {
            let y = Int(projection.point(for: Coordinate(latitude: latitude, longitude: 0)).y)
            #expect(image[256, y].distance(to: Self.band(atLatitude: latitude)) <= 2, "latitude \(latitude) at row \(y): \(image[256, y])")
        }
        // A linear stretch of the 170° between ±85° would put 60°N at row 75; Mercator puts it at row 148.
        #expect(Int(projection.point(for: Coordinate(latitude: 60, longitude: 0)).y) == 148)
    }

    /// An image pinned by four corners of a rotated quadrilateral: its middle lands in the middle.
    @Test func cornersPinTheImage() throws {
        var image = RGBAImage(width: 40, height: 40, color: Color(red: 0, green: 0, blue: 1))
        for y in 15..<25 { for x in 15..<25 { image[x, y] = Pixel(red: 255, green: 0, blue: 0) } }
        let tl = Coordinate(latitude: 34.4313, longitude: -118.6010), tr = Coordinate(latitude: 34.4330, longitude: -118.5893)
        let br = Coordinate(latitude: 34.4200, longitude: -118.5876), bl = Coordinate(latitude: 34.4183, longitude: -118.5993)
        let projection = MapProjection(tile: TileID(containing: Coordinate(latitude: 34.4257, longitude: -118.5943), zoom: 14))
        let canvas = try Canvas(width: 256, height: 256)
        ImageOverlayRenderer.draw(image, placement: .corners(topLeft: tl, topRight: tr, bottomRight: br, bottomLeft: bl), opacity: 0.5,
                                  on: canvas, projection: projection)
        let result = canvas.makeImage()
        let middle = Coordinate(latitude: (tl.latitude + tr.latitude + br.latitude + bl.latitude) / 4,
                                longitude: (tl.longitude + tr.longitude + br.longitude + bl.longitude) / 4)
        let m = projection.point(for: middle)
        #expect(result[Int(m.x), Int(m.y)].red > 200 && result[Int(m.x), Int(m.y)].alpha == 128)
        let nearCorner = projection.point(for: Coordinate(latitude: tl.latitude * 0.9 + br.latitude * 0.1, longitude: tl.longitude * 0.9 + br.longitude * 0.1))
        #expect(result[Int(nearCorner.x), Int(nearCorner.y)].blue > 200)
        // Outside the quadrilateral nothing is drawn.
        let outside = projection.point(for: Coordinate(latitude: tl.latitude + 0.002, longitude: tl.longitude))
        if (0..<256).contains(Int(outside.x)), (0..<256).contains(Int(outside.y)) { #expect(result[Int(outside.x), Int(outside.y)].alpha == 0) }
        // The inverse is exact at the corners.
        let inverse = InverseBilinear(tl, tr, br, bl)
        let (u, v) = inverse.parameters(of: br)!
        #expect(abs(u - 1) < 1e-9 && abs(v - 1) < 1e-9)
    }

    @Test func overlayTilesJoinWithoutSeams() async throws {
        var feature = Feature(geometry: nil)
        feature.imageOverlay = ImageOverlay(image: "bands", placement: .box(BoundingBox(west: -20, south: 30, east: 30, north: 60)))
        let renderer = FeatureRenderer(images: ["bands": Self.bands])
        let source = FeatureTileSource(name: "bands", features: [feature], renderer: renderer)
        let big = try Canvas(width: 512, height: 512)
        renderer.draw([feature], on: big, projection: MapProjection(tile: TileID(z: 3, x: 3, y: 2)))
        let whole = big.makeImage()
        var worst = 0
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            guard let data = try await source.tile(TileRequest(TileID(z: 3, x: 3 + dx, y: 2 + dy))).data else { continue }
            let tile = try RGBAImage(decoding: data.bytes)
            for y in 0..<256 { for x in 0..<256 { worst = max(worst, tile[x, y].distance(to: whole[dx * 256 + x, dy * 256 + y])) } }
        }
        #expect(worst <= 1)
    }
}
