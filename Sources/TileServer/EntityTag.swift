/// The ETag of a response body: a 64-bit digest of its bytes and their count, quoted.
///
/// Not `ContentDigest`, which takes a byte at a time (its values are kept in MBTiles files and
/// cannot change): that cost a third of serving a 117 KB tile that missed the memory cache.
/// This one takes 32 bytes a step in four independent lanes, several times faster. Every server
/// of a cluster computes the same tag for the same bytes (tiles shared through Redis keep it).
enum EntityTag {
    static func of(_ bytes: [UInt8]) -> String {
        "\"" + String(digest(bytes), radix: 16) + "-" + String(bytes.count, radix: 16) + "\""
    }

    static func digest(_ bytes: [UInt8]) -> UInt64 {
        // Four lanes of 8 bytes a step, each xxHash64's round (multiply-add by its second prime,
        // rotate, multiply by its first): the lanes' multiplies overlap, so a step costs about
        // what one lane's would.
        var lanes = (UInt64(0x9e37_79b9_7f4a_7c15), UInt64(0xc2b2_ae3d_27d4_eb4f), UInt64(0x1656_67b1_9e37_79f9), UInt64(0x85eb_ca77_c2b2_ae63))
        var a: UInt64 = 0, b: UInt64 = 0
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 8
            var i = 0
            while i + 3 < words {
                lanes.0 = round(lanes.0, raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                lanes.1 = round(lanes.1, raw.loadUnaligned(fromByteOffset: i * 8 + 8, as: UInt64.self))
                lanes.2 = round(lanes.2, raw.loadUnaligned(fromByteOffset: i * 8 + 16, as: UInt64.self))
                lanes.3 = round(lanes.3, raw.loadUnaligned(fromByteOffset: i * 8 + 24, as: UInt64.self))
                i += 4
            }
            a = mix(lanes.0 ^ mix(lanes.1)) ^ mix(lanes.2 ^ mix(lanes.3))
            while i < words {
                a = mix(a ^ raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                i += 1
            }
            var tail: UInt64 = 0
            for offset in (words * 8)..<raw.count { tail = tail << 8 | UInt64(raw[offset]) }
            b = mix(0xc2b2_ae3d_27d4_eb4f ^ tail)
        }
        return mix(a ^ (b &* 0xff51_afd7_ed55_8ccd) ^ UInt64(bytes.count))
    }

    @inline(__always)
    private static func round(_ lane: UInt64, _ word: UInt64) -> UInt64 {
        let sum = lane &+ word &* 0xc2b2_ae3d_27d4_eb4f
        return ((sum << 31) | (sum >> 33)) &* 0x9e37_79b1_85eb_ca87
    }

    /// A multiply and two xor-shifts: every input bit reaches every output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value &* 0xbf58_476d_1ce4_e5b9
        x ^= x >> 31
        x = x &* 0x94d0_49bb_1331_11eb
        return x ^ (x >> 29)
    }
}
