import Testing
import TileMath
@testable import TileSources

/// The bounds a seeded store records hold every tile the seed fetched, the edge rows of the
/// Web Mercator world included, at every zoom.
@Suite struct SeederBoundsTests {
    @Test(arguments: [0, 10, 19, 20, 22])
    func theRecordedBoundsHoldTheEdgeRows(zoom: Int) throws {
        let seeder = Seeder(source: GeneratedTileSource.debugGrid(tileSize: 256), box: BoundingBox(west: -10, south: -90, east: 10, north: 90),
                            zooms: zoom...zoom)
        let stored = seeder.storedBounds
        let ranges = seeder.ranges
        let top = try #require(ranges.first), bottom = try #require(ranges.last)
        // Rows 0 and 2^z - 1 are seeded; their tiles must lie (in part) inside what the store says it holds.
        #expect(top.minY == 0 && bottom.maxY == (1 << zoom) - 1)
        let north = TileID(z: zoom, x: top.minX, y: 0).bounds, south = TileID(z: zoom, x: bottom.minX, y: bottom.maxY).bounds
        #expect(stored.north > north.south && stored.south < south.north, "\(stored) \(north) \(south)")
        // And the box is the limit as TileJSON writes it, the latitude the seeded ranges clamp to.
        #expect(stored.north == Coordinate.roundedMaxMercatorLatitude && stored.south == -Coordinate.roundedMaxMercatorLatitude)
    }
}
