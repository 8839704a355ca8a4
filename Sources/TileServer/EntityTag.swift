/// The ETag of a response body: a 64-bit digest of its bytes and their count, quoted.
///
/// Not `ContentDigest`, which takes a byte at a time (its values are kept in MBTiles files and
/// cannot change): that cost a third of serving a 117 KB tile that missed the memory cache.
/// This one takes 8 bytes a step in two independent lanes, several times faster. Every server
/// of a cluster computes the same tag for the same bytes (tiles shared through Redis keep it).
enum EntityTag {
    static func of(_ bytes: [UInt8]) -> String {
        "\"" + String(digest(bytes), radix: 16) + "-" + String(bytes.count, radix: 16) + "\""
    }

    static func digest(_ bytes: [UInt8]) -> UInt64 {
        var a: UInt64 = 0x9e37_79b9_7f4a_7c15, b: UInt64 = 0xc2b2_ae3d_27d4_eb4f
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 8
            var i = 0
            while i + 1 < words {
                a = mix(a ^ raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                b = mix(b ^ raw.loadUnaligned(fromByteOffset: i * 8 + 8, as: UInt64.self))
                i += 2
            }
            if i < words { a = mix(a ^ raw.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) }
            var tail: UInt64 = 0
            for offset in (words * 8)..<raw.count { tail = tail << 8 | UInt64(raw[offset]) }
            b = mix(b ^ tail)
        }
        return mix(a ^ (b &* 0xff51_afd7_ed55_8ccd) ^ UInt64(bytes.count))
    }

    /// A multiply and two xor-shifts: every input bit reaches every output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value &* 0xbf58_476d_1ce4_e5b9
        x ^= x >> 31
        x = x &* 0x94d0_49bb_1331_11eb
        return x ^ (x >> 29)
    }
}
