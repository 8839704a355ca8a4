/// Parents, children, siblings and neighbours in the pyramid.
extension TileID {
    /// The tile one zoom up that contains this one; nil at zoom 0.
    public var parent: TileID? {
        z == 0 ? nil : TileID(z: z - 1, x: x >> 1, y: y >> 1)
    }

    /// The ancestor at a lower (or equal) zoom; nil when `zoom` is deeper than this tile or negative.
    public func ancestor(atZoom zoom: Int) -> TileID? {
        guard zoom >= 0, zoom <= z else { return nil }
        let shift = z - zoom
        return TileID(z: zoom, x: x >> shift, y: y >> shift)
    }

    /// The four tiles one zoom down, in mercantile's order: top-left, top-right,
    /// bottom-right, bottom-left. Empty at the deepest zoom.
    public var children: [TileID] {
        guard z < Self.maxZoom else { return [] }
        let (cx, cy, cz) = (x * 2, y * 2, z + 1)
        return [TileID(z: cz, x: cx, y: cy), TileID(z: cz, x: cx + 1, y: cy),
                TileID(z: cz, x: cx + 1, y: cy + 1), TileID(z: cz, x: cx, y: cy + 1)]
    }

    /// Every descendant at a deeper zoom, as a range (row-major when iterated).
    public func descendants(atZoom zoom: Int) -> TileRange? {
        guard zoom >= z, zoom <= Self.maxZoom else { return nil }
        let shift = zoom - z
        return TileRange(z: zoom, minX: x << shift, maxX: ((x + 1) << shift) - 1,
                         minY: y << shift, maxY: ((y + 1) << shift) - 1)
    }

    /// The other children of this tile's parent; empty at zoom 0.
    public var siblings: [TileID] {
        parent?.children.filter { $0 != self } ?? []
    }

    /// The up to eight tiles around this one at the same zoom (mercantile `neighbors`:
    /// column by column from the west, no wrapping across the antimeridian or the poles).
    public var neighbors: [TileID] {
        var result = [TileID]()
        for dx in -1...1 {
            for dy in -1...1 where !(dx == 0 && dy == 0) {
                if TileID.isValid(z: z, x: x + dx, y: y + dy) {
                    result.append(TileID(z: z, x: x + dx, y: y + dy))
                }
            }
        }
        return result
    }
}
