import Foundation
import Testing
import Canvas
import TileMath
import Features
@testable import Rendering

@Suite struct CustomIconTests {
    @Test func iconsSitOnTheirAnchor() throws {
        let json = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[0,0]},"properties":{"marker-image":"hero.png","marker-anchor":[0.5,1],"marker-size":"medium"}}"#
        let feature = try #require(try GeoJSON.parse(Data(json.utf8)).first)
        #expect(feature.style.markerImage == "hero.png" && feature.style.markerAnchor?.x == 0.5 && feature.style.markerAnchor?.y == 1)
        let hero = RGBAImage(width: 10, height: 20, color: Color(red: 0, green: 0.6, blue: 0))
        let renderer = FeatureRenderer(images: ["hero.png": hero])
        let canvas = try Canvas(width: 200, height: 200)
        // Null island in the middle of the canvas.
        let projection = MapProjection(zoom: 0, tileSize: 256, scale: 1, origin: PixelPoint(x: 28, y: 28))
        renderer.draw([feature], on: canvas, projection: projection)
        let image = canvas.makeImage()
        let p = projection.point(for: Coordinate(latitude: 0, longitude: 0))
        #expect(p == PixelPoint(x: 100, y: 100))
        // Medium: 2.4 × 10 px = 24 px tall, 12 wide, bottom middle on the point.
        #expect(image[100, 95].green > 140 && image[100, 78].green > 140)   // inside, above the point
        #expect(image[100, 104].alpha == 0 && image[100, 72].alpha == 0)     // below the point; above the top
        #expect(image[110, 90].alpha == 0)                                    // beside it
    }

    @Test func badAnchorsAreNamed() {
        let json = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[0,0]},"properties":{"marker-image":"a.png","marker-anchor":[2,0]}}"#
        #expect {
            try GeoJSON.parse(Data(json.utf8), file: "pois.geojson")
        } throws: { error in
            (error as? FeatureError)?.place == "properties.marker-anchor"
        }
    }
}
