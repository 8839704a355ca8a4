/// Bing Maps quadkeys: one base-4 digit per zoom level, most significant first.
/// See https://learn.microsoft.com/bingmaps/articles/bing-maps-tile-system.
extension TileID {
    /// The quadkey of the tile; the empty string at zoom 0.
    public var quadkey: String {
        var digits = [Character]()
        digits.reserveCapacity(z)
        for level in stride(from: z, to: 0, by: -1) {
            let mask = 1 << (level - 1)
            var digit = 0
            if x & mask != 0 { digit += 1 }
            if y & mask != 0 { digit += 2 }
            digits.append(Character(String(digit)))
        }
        return String(digits)
    }

    /// The tile of a quadkey; throws naming a character that is not 0-3 or a key that is too long.
    public init(quadkey: String) throws(TileMathError) {
        guard quadkey.count <= Self.maxZoom else {
            throw .invalidQuadkey(quadkey, reason: "longer than \(Self.maxZoom) digits")
        }
        var x = 0, y = 0
        for (index, character) in quadkey.enumerated() {
            let mask = 1 << (quadkey.count - 1 - index)
            switch character {
            case "0": break
            case "1": x |= mask
            case "2": y |= mask
            case "3": x |= mask; y |= mask
            default: throw .invalidQuadkey(quadkey, reason: "unexpected digit \"\(character)\" at position \(index + 1)")
            }
        }
        self.init(z: quadkey.count, x: x, y: y)
    }
}
