import CBodyDigest
import Testing
@testable import TileServer

/// The ETag digest: the same bytes give the same tag (every server of a cluster agrees), and
/// any change of a byte, of where the bytes end, or of the count gives another.
@Suite struct EntityTagTests {
    @Test func sameBytesSameTagAndEveryChangeAnother() {
        let bytes = (0..<1_037).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(EntityTag.of(bytes) == EntityTag.of(Array(bytes)))
        var tags: Set<String> = [EntityTag.of(bytes)]
        for index in [0, 7, 8, 15, 16, 500, 1_031, 1_032, 1_036] {  // in each lane, the last whole word and the tail
            var changed = bytes
            changed[index] ^= 0x01
            tags.insert(EntityTag.of(changed))
        }
        for count in [0, 1, 8, 9, 1_032, 1_036] { tags.insert(EntityTag.of(Array(bytes.prefix(count)))) }
        tags.insert(EntityTag.of(bytes + [0]))  // a trailing zero byte is not the same body
        #expect(tags.count == 1 + 9 + 6 + 1)
    }

    @Test func aTagIsQuotedHex() {
        let tag = EntityTag.of(Array("tile".utf8))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("-4\"") && tag.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == "-" })
    }

    /// The AVX2 path and the portable one give the same digest, at every length (whole
    /// stripes, the 1 KB scramble, words and bytes after them) and alignment, so servers on
    /// different CPUs give the same tags.
    @Test func everyCPUGetsTheSameDigest() {
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15  // xorshift64: every byte value, the same each run
        let bytes = (0..<70_000).map { _ -> UInt8 in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        let lengths = Array(0..<1_200) + [1_023, 1_024, 1_025, 2_048, 4_096 + 63, 65_536, 69_990]
        bytes.withUnsafeBufferPointer { buffer in
            for (n, count) in lengths.enumerated() {
                let start = buffer.baseAddress! + n % 8
                #expect(tk_body_digest(start, count) == tk_body_digest_portable(start, count), "\(count) bytes at offset \(n % 8)")
            }
        }
    }

    /// A fixed body's tag, so that a change of the digest (which changes every tag a client
    /// holds, and splits a cluster running two versions) is seen and meant.
    @Test func theDigestOfAKnownBodyIsKnown() {
        let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(EntityTag.of(bytes) == "\"dd33a0e489ff0162-1388\"")
    }
}

