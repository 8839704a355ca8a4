/// A rectangle of tiles at one zoom, bounds included: columns `minX...maxX`, rows
/// `minY...maxY`. Iterates column by column (x outer, y inner), as mercantile's `tiles`.
public struct TileRange: Hashable, Sendable, Sequence {
    public let z: Int
    public let minX: Int
    public let maxX: Int
    public let minY: Int
    public let maxY: Int

    public init(z: Int, minX: Int, maxX: Int, minY: Int, maxY: Int) {
        precondition(minX <= maxX && minY <= maxY, "empty tile range")
        precondition(TileID.isValid(z: z, x: minX, y: minY) && TileID.isValid(z: z, x: maxX, y: maxY),
                     "tile range outside zoom \(z)")
        self.z = z
        self.minX = minX
        self.maxX = maxX
        self.minY = minY
        self.maxY = maxY
    }

    public var width: Int { maxX - minX + 1 }
    public var height: Int { maxY - minY + 1 }
    public var count: Int { width * height }
    public var underestimatedCount: Int { count }

    public func contains(_ tile: TileID) -> Bool {
        tile.z == z && (minX...maxX).contains(tile.x) && (minY...maxY).contains(tile.y)
    }

    /// The tiles that cover a box at a zoom (mercantile `tiles`): one range, or two when the
    /// box crosses the antimeridian and the halves do not share a column.
    ///
    /// Latitudes are clamped to ±85.051129° (mercantile's limit). The east and south edges
    /// are pulled in by 1e-11° so a box that ends exactly on a tile edge does not take the
    /// next tile.
    public static func covering(_ box: BoundingBox, zoom: Int) -> [TileRange] {
        precondition((0...TileID.maxZoom).contains(zoom), "zoom \(zoom) is out of range")
        let edgeEpsilon = 1e-11
        var ranges = [TileRange]()
        for part in box.splitAtAntimeridian {
            let limit = Coordinate.roundedMaxMercatorLatitude
            let west = Swift.max(-180.0, part.west), south = Swift.max(-limit, part.south)
            let east = Swift.min(180.0, part.east), north = Swift.min(limit, part.north)
            let upperLeft = TileID(containing: Coordinate(latitude: north, longitude: west), zoom: zoom)
            let lowerRight = TileID(containing: Coordinate(latitude: south + edgeEpsilon, longitude: east - edgeEpsilon), zoom: zoom)
            guard upperLeft.x <= lowerRight.x, upperLeft.y <= lowerRight.y else { continue }
            ranges.append(TileRange(z: zoom, minX: upperLeft.x, maxX: lowerRight.x, minY: upperLeft.y, maxY: lowerRight.y))
        }
        // At low zooms both halves of an antimeridian box can fall in the same columns:
        // join them so no tile is listed twice.
        if ranges.count == 2, ranges[0].maxX >= ranges[1].minX - 1 {
            let a = ranges[0], b = ranges[1]
            return [TileRange(z: zoom, minX: Swift.min(a.minX, b.minX), maxX: Swift.max(a.maxX, b.maxX),
                              minY: Swift.min(a.minY, b.minY), maxY: Swift.max(a.maxY, b.maxY))]
        }
        return ranges
    }

    /// Tiles needed to cover a box at each zoom of a range: `[zoom: count]`.
    public static func counts(covering box: BoundingBox, zooms: ClosedRange<Int>) -> [Int: Int] {
        var counts = [Int: Int]()
        for zoom in zooms {
            counts[zoom] = covering(box, zoom: zoom).reduce(0) { $0 + $1.count }
        }
        return counts
    }

    public func makeIterator() -> Iterator { Iterator(range: self) }

    public struct Iterator: IteratorProtocol {
        let range: TileRange
        var x: Int
        var y: Int

        init(range: TileRange) {
            self.range = range
            x = range.minX
            y = range.minY
        }

        public mutating func next() -> TileID? {
            guard x <= range.maxX else { return nil }
            let tile = TileID(z: range.z, x: x, y: y)
            if y == range.maxY {
                y = range.minY
                x += 1
            } else {
                y += 1
            }
            return tile
        }
    }
}
