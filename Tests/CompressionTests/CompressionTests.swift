import Testing
import Compression

@Suite struct GzipTests {
    @Test func roundTrips() throws {
        let text = Array(String(repeating: "parchment ", count: 1000).utf8)
        let packed = Gzip.compress(text)
        #expect(packed.count < text.count / 10 && packed.prefix(2) == [0x1f, 0x8b])
        #expect(try Gzip.decompress(packed) == text)
    }

    @Test func truncatedOrForeignBytesAreErrors() {
        let packed = Gzip.compress(Array(String(repeating: "parchment ", count: 1000).utf8))
        #expect(throws: CompressionError.self) { try Gzip.decompress(Array(packed.prefix(packed.count / 2))) }
        #expect(throws: CompressionError.self) { try Gzip.decompress(Array("not gzip at all".utf8)) }
    }

    @Test func outputBeyondTheLimitIsAnError() {
        let packed = Gzip.compress(Array(String(repeating: "parchment ", count: 1000).utf8))
        #expect(throws: CompressionError.self) { try Gzip.decompress(packed, limit: 100) }
    }
}

/// MBTiles stores write `ContentDigest.text` as their tile ids: these values must never change.
@Suite struct ContentDigestTests {
    @Test func knownDigests() {
        #expect(ContentDigest([]).text == "cbf29ce4842223259e3779b97f4a7c150")
        #expect(ContentDigest(Array("a".utf8)).text == "af63dc4c8601ec8cedc2f5810f2eb4d71")
        #expect(ContentDigest(Array("parchment".utf8)).text == "863da5aece2144bfbbab7ea93fc7a9da9")
    }

    @Test func oneByteChangesTheDigest() {
        #expect(ContentDigest(Array("tile-1".utf8)) != ContentDigest(Array("tile-2".utf8)))
    }
}
