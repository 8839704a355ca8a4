import Testing
import TileMath
@testable import SharedCache

@Suite struct TileCacheKeyTests {
    @Test func layoutOfAComposedAndALayerKey() {
        let tile = TileID(z: 15, x: 9649, y: 12315)
        let composed = TileCacheKey(map: "central-park", definition: "0123abcd", layer: nil, tile: tile, scale: 2, format: "png")
        #expect(composed.description == "tilekit:v1:central-park:0123abcd:*:15/9649/12315@2x.png")
        let layer = TileCacheKey(map: "central-park", definition: "0123abcd", layer: "paths", tile: tile, scale: 1, format: "webp")
        #expect(layer.description == "tilekit:v1:central-park:0123abcd:paths:15/9649/12315@1x.webp")
    }

    @Test(arguments: [
        ("a:b", "a%3Ab"), ("a/b", "a%2Fb"), ("*", "%2A"), ("50%", "50%25"), ("two words", "two%20words"),
        ("Zürich", "Z%C3%BCrich"), ("tab\t", "tab%09"), ("a@b", "a%40b"), ("plain-name_1.2", "plain-name_1.2"),
    ])
    func namesAreEscapedWhereTheyCouldBeSeparators(_ name: String, _ escaped: String) {
        #expect(TileCacheKey.escaped(name) == escaped)
    }

    @Test func namesThatLookAlikeGetDifferentKeys() {
        let tile = TileID(z: 1, x: 0, y: 1)
        let keys = [
            TileCacheKey(map: "a:b", definition: "d", layer: "c", tile: tile, scale: 1, format: "png"),
            TileCacheKey(map: "a", definition: "b:d", layer: "c", tile: tile, scale: 1, format: "png"),
            TileCacheKey(map: "a", definition: "d", layer: "*", tile: tile, scale: 1, format: "png"),
            TileCacheKey(map: "a", definition: "d", layer: nil, tile: tile, scale: 1, format: "png"),
            TileCacheKey(map: "a", definition: "d", layer: "", tile: tile, scale: 1, format: "png"),
        ]
        #expect(Set(keys.map(\.description)).count == keys.count)
    }

    @Test func definitionHashFollowsEveryByteAndPartBoundary() {
        let map = Array(#"{"name": "central-park", "layers": []}"#.utf8)
        let hash = TileCacheKey.definitionHash([map])
        #expect(hash.count == 32 && hash.allSatisfy(\.isHexDigit))
        #expect(TileCacheKey.definitionHash([map]) == hash, "the same map hashes the same in every process")
        var edited = map
        edited[10] ^= 1
        #expect(TileCacheKey.definitionHash([edited]) != hash)
        #expect(TileCacheKey.definitionHash([map, [1]]) != hash)
        #expect(TileCacheKey.definitionHash([[1, 2], [3]]) != TileCacheKey.definitionHash([[1], [2, 3]]))
        #expect(TileCacheKey.definitionHash([]) != TileCacheKey.definitionHash([[]]))
    }
}
