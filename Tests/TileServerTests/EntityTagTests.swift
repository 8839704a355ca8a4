import CBodyDigest
import Testing
import TileMath
@testable import TileServer

/// The ETag digest: the same bytes give the same tag (every server of a cluster agrees), and
/// any change of a byte, of where the bytes end, of their order or of the count gives another.
@Suite struct EntityTagTests {
    /// Bytes of every value, the same each run.
    static func bytes(_ count: Int) -> [UInt8] {
        var random = SeededRandom(seed: 1689)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next() >> 24) }
    }

    @Test func sameBytesSameTagAndEveryChangeAnother() {
        let bytes = (0..<1_037).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(EntityTag.of(bytes) == EntityTag.of(Array(bytes)))
        var digests: Set<UInt64> = [EntityTag.digest(bytes)]
        // A byte in every lane of the first stripe, in a later stripe, in the last whole
        // stripe, in the words after it and in the bytes after those.
        let changedAt = [0, 8, 16, 24, 32, 40, 48, 56, 500, 1_023, 1_024, 1_031, 1_032, 1_036]
        for index in changedAt {
            var changed = bytes
            changed[index] ^= 0x01
            digests.insert(EntityTag.digest(changed))
        }
        // The digest itself counts the length (the tag also shows it).
        let prefixes = [0, 1, 8, 9, 64, 1_024, 1_032, 1_036]
        for count in prefixes { digests.insert(EntityTag.digest(Array(bytes.prefix(count)))) }
        digests.insert(EntityTag.digest(bytes + [0]))  // a trailing zero byte is not the same body
        #expect(digests.count == 1 + changedAt.count + prefixes.count + 1)
    }

    /// The tag is `"digest-length"` in lowercase hex without leading zeros, as
    /// String(_:radix:) writes them (the tags clients hold stay valid).
    @Test func theTagIsTheDigestAndLengthInHex() {
        for value: UInt64 in [0, 1, 9, 10, 15, 16, 255, 256, 0xABCDEF, 1 << 63, UInt64.max, UInt64.max - 1] {
            var text = [UInt8]()
            EntityTag.appendHex(value, to: &text)
            #expect(String(decoding: text, as: UTF8.self) == String(value, radix: 16))
        }
        for count in [0, 1, 17, 4_096] {
            let bytes = Self.bytes(count)
            #expect(EntityTag.of(bytes) == "\"" + String(EntityTag.digest(bytes), radix: 16) + "-" + String(count, radix: 16) + "\"")
        }
    }

    /// Two stripes of 64 bytes, or two words in the same lane, that trade places within one
    /// 1 KB block give another digest: each stripe's place has its own keys.
    @Test func theOrderOfTheBytesCounts() {
        let bytes = Self.bytes(4_096)
        var digests: Set<UInt64> = [EntityTag.digest(bytes)]
        var stripes = bytes
        stripes.replaceSubrange(64..<128, with: bytes[128..<192])
        stripes.replaceSubrange(128..<192, with: bytes[64..<128])
        digests.insert(EntityTag.digest(stripes))
        var words = bytes
        words.replaceSubrange(8..<16, with: bytes[72..<80])
        words.replaceSubrange(72..<80, with: bytes[8..<16])
        digests.insert(EntityTag.digest(words))
        var blocks = bytes
        blocks.replaceSubrange(0..<1_024, with: bytes[1_024..<2_048])
        blocks.replaceSubrange(1_024..<2_048, with: bytes[0..<1_024])
        digests.insert(EntityTag.digest(blocks))
        #expect(digests.count == 4)
        // Every single bit flipped in a body of zeros (repetitive bodies are where sums cancel).
        var zeros = [UInt8](repeating: 0, count: 4_096)
        var flipped: Set<UInt64> = [EntityTag.digest(zeros)]
        for bit in 0..<(4_096 * 8) {
            zeros[bit / 8] ^= 1 << (bit % 8)
            flipped.insert(EntityTag.digest(zeros))
            zeros[bit / 8] ^= 1 << (bit % 8)
        }
        #expect(flipped.count == 4_096 * 8 + 1)
    }

    @Test func aTagIsQuotedHex() {
        let tag = EntityTag.of(Array("tile".utf8))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("-4\"") && tag.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == "-" })
    }

    /// The AVX2 path and the portable one give the same digest, at every length (whole
    /// stripes, the 1 KB scramble, words and bytes after them) and alignment, so servers on
    /// different CPUs give the same tags. (On a CPU without AVX2 both calls take the portable
    /// path; `theDigestOfAKnownBodyIsKnown` still holds it to the same values.)
    @Test func everyCPUGetsTheSameDigest() {
        let bytes = Self.bytes(70_000)
        let lengths = Array(0..<1_200) + [1_023, 1_024, 1_025, 2_048, 4_096 + 63, 65_536, 69_990]
        bytes.withUnsafeBufferPointer { buffer in
            for count in lengths {
                for offset in 0..<8 {
                    let start = buffer.baseAddress! + offset
                    #expect(tk_body_digest(start, count) == tk_body_digest_portable(start, count), "\(count) bytes at offset \(offset)")
                }
            }
        }
    }

    /// A fixed body's tag, so that a change of the digest (which changes every tag a client
    /// holds, and splits a cluster running two versions) is seen and meant.
    @Test func theDigestOfAKnownBodyIsKnown() {
        let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(EntityTag.of(bytes) == "\"53e2088e15da9edc-1388\"")
    }
}
