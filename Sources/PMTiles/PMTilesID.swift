public import TileMath

/// PMTiles v3 tile ids: tiles numbered zoom by zoom (all of zoom 0, then zoom 1, ...), and
/// within a zoom along a Hilbert curve, so tiles near each other on the map are near each
/// other in the file. See https://github.com/protomaps/PMTiles/blob/main/spec/v3/spec.md.
extension TileID {
    public var pmtilesID: UInt64 {
        // Tiles at all lower zooms: (4^z - 1) / 3.
        var id = (UInt64(1) << UInt64(2 * z) - 1) / 3
        var x = UInt64(self.x), y = UInt64(self.y)
        var level = z - 1
        while level >= 0 {
            let s = UInt64(1) << UInt64(level)
            let rx = s & x, ry = s & y
            id += ((3 * rx) ^ ry) << UInt64(level)
            (x, y) = Self.rotate(s, x, y, rx, ry)
            level -= 1
        }
        return id
    }

    /// The tile of a PMTiles id; nil beyond TileKit's deepest zoom.
    public init?(pmtilesID id: UInt64) {
        var z = 0
        while z <= Self.maxZoom, (UInt64(1) << UInt64(2 * (z + 1)) - 1) / 3 <= id { z += 1 }
        guard z <= Self.maxZoom else { return nil }
        var position = id - (UInt64(1) << UInt64(2 * z) - 1) / 3
        var x: UInt64 = 0, y: UInt64 = 0
        var s: UInt64 = 1
        let n = UInt64(1) << UInt64(z)
        while s < n {
            let rx = (position / 2) & s
            let ry = (position ^ rx) & s
            (x, y) = Self.rotate(s, x, y, rx, ry)
            x += rx
            y += ry
            position >>= 1
            s <<= 1
        }
        self.init(z: z, x: Int(x), y: Int(y))
    }

    private static func rotate(_ n: UInt64, _ x: UInt64, _ y: UInt64, _ rx: UInt64, _ ry: UInt64) -> (UInt64, UInt64) {
        guard ry == 0 else { return (x, y) }
        // With n the current bit (not the grid size) n - 1 - x can go below zero, as it does
        // in the reference's unbounded integers; only the low bits are used afterwards, so
        // wrapping arithmetic gives the same ids.
        if rx != 0 { return (n &- 1 &- y, n &- 1 &- x) }
        return (y, x)
    }
}

/// The ranges of PMTiles v3 tile ids, for checking ids and run lengths read from a file.
public enum PMTilesID {
    /// The deepest zoom the spec's 64-bit ids can number (4^32 - 1 ids would not fit).
    public static let maxZoom: UInt8 = 31

    /// The first id of zoom `z`, that is the number of tiles at all lower zooms,
    /// (4^z - 1) / 3; for z 32 (one past the deepest) the number of all ids.
    public static func first(ofZoom z: Int) -> UInt64 {
        // 4^32 - 1 is UInt64.max, whose shift form would overflow.
        z >= 32 ? UInt64.max / 3 : ((UInt64(1) << UInt64(2 * max(0, z))) - 1) / 3
    }

    /// The zoom of an id; nil for ids beyond zoom 31.
    public static func zoom(of id: UInt64) -> Int? {
        guard id < first(ofZoom: 32) else { return nil }
        var z = 0
        while first(ofZoom: z + 1) <= id { z += 1 }
        return z
    }
}
