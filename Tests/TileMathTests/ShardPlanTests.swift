import Testing
@testable import TileMath

@Suite struct ShardSpecTests {
    @Test(arguments: [("0/3", 0, 3), ("2/3", 2, 3), ("0/1", 0, 1), ("99999/100000", 99999, 100000), ("007/8", 7, 8)])
    func parses(text: String, index: Int, count: Int) throws {
        let spec = try ShardSpec(parsing: text)
        #expect(spec.index == index && spec.count == count)
    }

    /// Numbered from 0: `3/3` is one past the end. Each error names the value given.
    @Test(arguments: [
        ("3/3", "the index 3 is not in 0-2 (shards are numbered from 0: 0/3, 1/3, 2/3)"),
        ("-1/3", "not I/N"), ("0/0", "the shard count 0 is not in 1-100000"), ("a/b", "not I/N"),
        ("1/3/4", "not I/N"), ("+1/3", "not I/N"), (" 1/3", "not I/N"), ("1/", "not I/N"), ("", "not I/N"),
        ("1/100001", "the shard count 100001 is not in 1-100000"), ("99999999999999999999/3", "not I/N"),
    ])
    func refuses(text: String, reason: String) {
        #expect {
            try ShardSpec(parsing: text)
        } throws: { error in
            guard let error = error as? TileMathError, case .invalidShard(let value, let message) = error else { return false }
            return value == text && message.hasPrefix(reason) && error.description.hasPrefix("shard \"\(text)\": ")
        }
    }
}

@Suite struct ShardPlanTests {
    /// Central Park's box at zooms 10-16: a few tiles at the top, thousands at the bottom.
    let box = BoundingBox(west: -73.9819, south: 40.7644, east: -73.9493, north: 40.8006)
    func ranges(_ zooms: ClosedRange<Int>) -> [Int: [TileRange]] {
        var ranges = [Int: [TileRange]]()
        for z in zooms { ranges[z] = TileRange.covering(box, zoom: z) }
        return ranges
    }

    /// The split is the lowest zoom with 8 tiles a shard (or the deepest zoom).
    @Test(arguments: [1, 2, 3, 7, 50, 100_000])
    func defaultSplitZoom(count: Int) throws {
        let zooms = 10...16
        let plan = try ShardPlan(count: count, zooms: zooms, ranges: ranges(zooms))
        let tiles = { (z: Int) in TileRange.covering(self.box, zoom: z).reduce(0) { $0 + $1.count } }
        let expected = zooms.first { tiles($0) >= 8 * count } ?? zooms.upperBound
        #expect(plan.splitZoom == expected)
        if expected > zooms.lowerBound { #expect(tiles(expected - 1) < 8 * count) }
    }

    /// At the split zoom every shard gets a contiguous block, the sizes within one of each
    /// other; below it every tile goes with its ancestor (whole subtrees); above it (work
    /// that needs no children, a seed) each zoom is shared out the same way.
    @Test(arguments: [2, 3, 5])
    func blocksAreBalancedAndSubtreesWhole(count: Int) throws {
        let zooms = 10...15
        let plan = try ShardPlan(count: count, zooms: zooms, ranges: ranges(zooms))
        for z in zooms {
            var sizes = [Int](repeating: 0, count: count)
            var last = 0
            for range in TileRange.covering(box, zoom: z) {
                for y in range.minY...range.maxY {
                    for x in range.minX...range.maxX {
                        let tile = TileID(z: z, x: x, y: y)
                        let owner = plan.owner(of: tile)
                        sizes[owner] += 1
                        if z <= plan.splitZoom {
                            #expect(owner >= last, "row-major blocks: \(tile) goes back to shard \(owner)")
                            last = owner
                        } else {
                            #expect(owner == plan.owner(of: tile.ancestor(atZoom: plan.splitZoom)!))
                        }
                    }
                }
            }
            if z <= plan.splitZoom, let most = sizes.max(), let least = sizes.min() {
                #expect(most - least <= 1, "zoom \(z): \(sizes)")
            }
        }
    }

    /// A tile outside the ranges still has one stable owner.
    @Test func tilesOutsideTheBuildHaveAnOwner() throws {
        let plan = try ShardPlan(count: 3, zooms: 10...14, ranges: ranges(10...14))
        let far = TileID(z: 14, x: 0, y: 0)
        #expect((0..<3).contains(plan.owner(of: far)) && plan.owner(of: far) == plan.owner(of: far))
    }

    @Test func aChosenSplitZoomMustBeBuilt() throws {
        #expect(try ShardPlan(count: 2, zooms: 10...14, ranges: ranges(10...14), splitZoom: 12).splitZoom == 12)
        #expect(throws: TileMathError.invalidSplitZoom(9, reason: "is outside the build's zooms 10-14")) {
            try ShardPlan(count: 2, zooms: 10...14, ranges: ranges(10...14), splitZoom: 9)
        }
    }
}
