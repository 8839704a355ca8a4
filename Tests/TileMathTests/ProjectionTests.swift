import Foundation
import Testing
@testable import TileMath

@Suite struct ProjectionTests {
    @Test func mapPointAndPixels() {
        #expect(MapPoint(Coordinate(latitude: 0, longitude: 0)) == MapPoint(x: 0.5, y: 0.5))
        let nw = MapPoint(Coordinate(latitude: Coordinate.maxMercatorLatitude, longitude: -180))
        #expect(abs(nw.x) < 1e-15 && abs(nw.y) < 1e-12)
        // The zoo at z16 with 256 and 512 px tiles: 512 px doubles every pixel coordinate.
        let zoo = Coordinate(latitude: 40.767769, longitude: -73.971870)
        let p256 = zoo.pixel(zoom: 16, tileSize: 256), p512 = zoo.pixel(zoom: 16, tileSize: 512)
        #expect(abs(p512.x - 2 * p256.x) < 1e-6 && abs(p512.y - 2 * p256.y) < 1e-6)
        let tile = TileID(containing: zoo, zoom: 16)
        #expect(Int(p256.x / 256) == tile.x && Int(p256.y / 256) == tile.y)
        let back = Coordinate(pixel: p256, zoom: 16)
        #expect(abs(back.latitude - zoo.latitude) < 1e-12 && abs(back.longitude - zoo.longitude) < 1e-12)
        // Mercator ↔ map point.
        let m = MercatorPoint(zoo)
        #expect(abs(MapPoint(m).x - MapPoint(zoo).x) < 1e-15 && abs(MapPoint(m).y - MapPoint(zoo).y) < 1e-12)
        #expect(abs(MapPoint(zoo).mercator.easting - m.easting) < 1e-6)
    }

    @Test func groundResolution() {
        // 156543.03392804097 m/px at z0 on the equator with 256 px tiles (the well-known figure).
        #expect(abs(Zoom.metersPerPixel(latitude: 0, zoom: 0) - 156_543.033_928_040_97) < 1e-6)
        #expect(abs(Zoom.metersPerPixel(latitude: 60, zoom: 1) - 156_543.033_928_040_97 / 4) < 1e-6)
        #expect(abs(Zoom.metersPerPixel(latitude: 0, zoom: 0, tileSize: 512) - 156_543.033_928_040_97 / 2) < 1e-6)
        #expect(Zoom.matching(metersPerPixel: 156_543.04) == 0)
        #expect(Zoom.matching(metersPerPixel: 2.4) == 16)  // z16 is 2.39 m/px at the equator
    }

    @Test func zoomForSpan() {
        // The world fits a 256 px square at zoom 0 and a 512 px one at zoom 1.
        #expect(abs(Zoom.fitting(.world, in: PixelSize(width: 256, height: 256))) < 1e-9)
        #expect(abs(Zoom.fitting(.world, in: PixelSize(width: 512, height: 512)) - 1) < 1e-9)
        // One tile fills the viewport exactly at its own zoom.
        let tile = TileID(z: 14, x: 4824, y: 6156)
        #expect(abs(Zoom.fitting(tile.bounds, in: PixelSize(width: 256, height: 256)) - 14) < 1e-9)
        #expect(abs(Zoom.fitting(tile.bounds, in: PixelSize(width: 532, height: 532), padding: 10) - 15) < 1e-9)
        // A point gets the maximum zoom; an antimeridian box uses its real span.
        #expect(Zoom.fitting(BoundingBox(west: 5, south: 5, east: 5, north: 5), in: PixelSize(width: 100, height: 100)) == 22)
        let fiji = BoundingBox(west: 177, south: -19, east: -178, north: -16)
        #expect(Zoom.fitting(fiji, in: PixelSize(width: 800, height: 600)) > 5)
    }

    @Test func boundingBoxes() throws {
        let fiji = BoundingBox(west: 177, south: -19, east: -178, north: -16)
        #expect(fiji.longitudeSpan == 5)
        #expect(fiji.center.longitude == 179.5)
        #expect(fiji.contains(Coordinate(latitude: -17, longitude: 179)))
        #expect(fiji.contains(Coordinate(latitude: -17, longitude: -179)))
        #expect(!fiji.contains(Coordinate(latitude: -17, longitude: 0)))
        #expect(fiji.intersects(BoundingBox(west: -179, south: -18, east: -170, north: 0)))
        #expect(!fiji.intersects(BoundingBox(west: 0, south: -18, east: 10, north: 0)))
        // Touching along an edge intersects but does not overlap.
        let beside = BoundingBox(west: 10, south: 0, east: 20, north: 10)
        #expect(BoundingBox(west: 0, south: 0, east: 10, north: 10).intersects(beside))
        #expect(!BoundingBox(west: 0, south: 0, east: 10, north: 10).overlaps(beside))
        #expect(BoundingBox(west: 0, south: 0, east: 10.5, north: 10).overlaps(beside))
        #expect(fiji.overlaps(BoundingBox(west: -179, south: -18, east: -170, north: 0)))
        #expect(throws: TileMathError.self) { try BoundingBox(west: 0, south: 10, east: 1, north: 5).validated() }
        #expect(throws: TileMathError.self) { try BoundingBox(west: 0, south: 0, east: 200, north: 5).validated() }
        #expect(try BoundingBox(west: 0, south: 0, east: 1, north: 1).validated().north == 1)
    }

    @Test func coordinateValidationSuggestsTheSwap() {
        do {
            _ = try Coordinate(latitude: -73.97, longitude: 40.77).validated()
            _ = try Coordinate(latitude: 95, longitude: 40.77).validated()
            Issue.record("latitude 95 was accepted")
        } catch {
            #expect(error.description.contains("latitude 95"))
            #expect(error.description.contains("did you mean 95,40.77"))
        }
    }
}
