import Foundation
import Testing
@testable import TileMath

@Suite struct TileIDTests {
    /// mercantile's own known answer.
    @Test func knownAnswer() {
        let tile = TileID(z: 10, x: 486, y: 332)
        #expect(tile.northWest.longitude == -9.140625)
        #expect(abs(tile.northWest.latitude - 53.33087298301705) < 1e-12)
        #expect(TileID(containing: Coordinate(latitude: 53.3, longitude: -9.1), zoom: 10) == tile)
    }

    /// Round trips at every zoom 0-22: a tile's corner maps back to the tile, the TMS row
    /// flips back, the quadkey parses back, each child's parent is the tile.
    @Test(arguments: 0...22)
    func roundTrips(zoom: Int) throws {
        var generator = SeededRandom(seed: UInt64(zoom) + 1)  // seeded: a failure reproduces
        let count = 1 << zoom
        for _ in 0..<200 {
            let tile = TileID(z: zoom, x: Int.random(in: 0..<count, using: &generator), y: Int.random(in: 0..<count, using: &generator))
            #expect(TileID(containing: tile.northWest, zoom: zoom) == tile)
            #expect(TileID(containing: tile.bounds.center, zoom: zoom) == tile)
            #expect(TileID(z: zoom, x: tile.x, tmsY: tile.tmsY) == tile)
            #expect(try TileID(quadkey: tile.quadkey) == tile)
            #expect(try TileID(parsing: tile.description) == tile)
            for child in tile.children { #expect(child.parent == tile) }
            #expect(tile.descendants(atZoom: zoom + 2)?.count == 16)
            #expect(tile.descendants(atZoom: zoom + 2)!.allSatisfy { $0.ancestor(atZoom: zoom) == tile })
            let p = MercatorPoint(tile.northWest)
            #expect(abs(p.easting - tile.mercatorBounds.west) < 1e-6 && abs(p.northing - tile.mercatorBounds.north) < 1e-6)
        }
    }

    @Test func extremes() {
        // The Mercator limit is the top edge of the world; beyond it clamps to row 0 or the last row.
        #expect(abs(TileID(z: 0, x: 0, y: 0).bounds.north - Coordinate.maxMercatorLatitude) < 1e-12)
        #expect(TileID(containing: Coordinate(latitude: 85.0511, longitude: 0), zoom: 5).y == 0)
        #expect(TileID(containing: Coordinate(latitude: 89.9, longitude: 0), zoom: 5).y == 0)
        #expect(TileID(containing: Coordinate(latitude: 90, longitude: 0), zoom: 5).y == 0)
        #expect(TileID(containing: Coordinate(latitude: -85.0511, longitude: 0), zoom: 5).y == 31)
        #expect(TileID(containing: Coordinate(latitude: -90, longitude: 0), zoom: 5).y == 31)
        // ±180°: west edge is column 0, east edge the last column.
        #expect(TileID(containing: Coordinate(latitude: 0, longitude: -180), zoom: 3).x == 0)
        #expect(TileID(containing: Coordinate(latitude: 0, longitude: 180), zoom: 3).x == 7)
        // Null island is the corner of four tiles: it belongs to the south-east one.
        #expect(TileID(containing: Coordinate(latitude: 0, longitude: 0), zoom: 1) == TileID(z: 1, x: 1, y: 1))
        #expect(TileID(containing: Coordinate(latitude: 0, longitude: 0), zoom: 22) == TileID(z: 22, x: 1 << 21, y: 1 << 21))
        // Deep zooms.
        let deep = TileID(containing: Coordinate(latitude: 40.767769, longitude: -73.971870), zoom: 30)
        #expect(deep.bounds.contains(Coordinate(latitude: 40.767769, longitude: -73.971870)))
        #expect(deep.children.isEmpty)
        #expect(TileID(z: 0, x: 0, y: 0).parent == nil && TileID(z: 0, x: 0, y: 0).siblings.isEmpty)
        #expect(TileID(z: 0, x: 0, y: 0).quadkey == "")
        #expect(TileID(z: 0, x: 0, y: 0).neighbors.isEmpty)
        #expect(TileID(z: 1, x: 0, y: 0).siblings == [TileID(z: 1, x: 1, y: 0), TileID(z: 1, x: 1, y: 1), TileID(z: 1, x: 0, y: 1)])
    }

    @Test(arguments: [(-1, 0, 0), (31, 0, 0), (99, 0, 0), (3, 8, 0), (3, 0, 8), (3, -1, 0)])
    func invalidTilesNameTheValue(z: Int, x: Int, y: Int) {
        #expect(throws: TileMathError.self) { try TileID(validating: z, x: x, y: y) }
        do {
            _ = try TileID(validating: z, x: x, y: y)
        } catch {
            let text = error.description
            #expect(text.contains(String(z == -1 || z > 30 ? z : (x < 0 || x > 7 ? x : y))), "\(text)")
        }
    }

    @Test func invalidQuadkeysAndPaths() {
        #expect(throws: TileMathError.invalidQuadkey("0124", reason: "unexpected digit \"4\" at position 4")) {
            try TileID(quadkey: "0124")
        }
        #expect(throws: TileMathError.self) { try TileID(quadkey: String(repeating: "1", count: 31)) }
        #expect(throws: TileMathError.self) { try TileID(parsing: "3/1") }
        #expect(throws: TileMathError.self) { try TileID(parsing: "a/b/c") }
        #expect(throws: TileMathError.self) { try TileID(parsing: "3/1/9") }
    }

    @Test func tileRangeIterationOrderAndCounts() {
        let range = TileRange(z: 2, minX: 1, maxX: 2, minY: 0, maxY: 1)
        #expect(Array(range).map(\.description) == ["2/1/0", "2/1/1", "2/2/0", "2/2/1"])
        #expect(range.count == 4 && range.contains(TileID(z: 2, x: 2, y: 1)) && !range.contains(TileID(z: 2, x: 0, y: 1)))
        // The world at z3 is 64 tiles; an antimeridian box splits into two column runs.
        #expect(TileRange.counts(covering: .world, zooms: 0...3) == [0: 1, 1: 4, 2: 16, 3: 64])
        let fiji = BoundingBox(west: 177, south: -19, east: -178, north: -16)
        #expect(fiji.crossesAntimeridian)
        let ranges = TileRange.covering(fiji, zoom: 6)
        #expect(ranges.count == 2 && ranges[0].minX == 0 && ranges[1].maxX == 63)
        // At zoom 0 both halves are the one tile, listed once.
        #expect(TileRange.covering(fiji, zoom: 0).map(\.count) == [1])
    }
}
