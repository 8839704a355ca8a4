import Testing
import TileMath

@Suite struct BoundingBoxUnionTests {
    @Test func theUnionHoldsBothBoxesEdgeByEdge() {
        let park = BoundingBox(west: -73.9819, south: 40.7644, east: -73.9493, north: 40.8006)
        let zoo = BoundingBox(west: -73.9730, south: 40.7660, east: -73.9700, north: 40.7690)
        let harbour = BoundingBox(west: -74.05, south: 40.68, east: -74.0, north: 40.70)
        #expect(park.union(zoo) == park)
        #expect(zoo.union(park) == park)
        #expect(park.union(harbour) == BoundingBox(west: -74.05, south: 40.68, east: -73.9493, north: 40.8006))
    }
}
