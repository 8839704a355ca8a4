extension BoundingBox {
    /// The smallest box holding both, edge by edge (west and south the smaller, east and
    /// north the larger). Boxes that cross the antimeridian are not joined across it.
    public func union(_ other: BoundingBox) -> BoundingBox {
        BoundingBox(west: Swift.min(west, other.west), south: Swift.min(south, other.south),
                    east: Swift.max(east, other.east), north: Swift.max(north, other.north))
    }
}
