internal import CBodyDigest

/// The ETag of a response body: a 64-bit digest of its bytes and their count, quoted.
///
/// Not `ContentDigest`, which takes a byte at a time (its values are kept in MBTiles files and
/// cannot change): that cost a third of serving a 117 KB tile that missed the memory cache.
/// The digest is `tk_body_digest` (CBodyDigest): eight lanes of 64 bytes a stripe, AVX2 where
/// the CPU has it, the same value either way. Every server of a cluster computes the same tag
/// for the same bytes (tiles shared through Redis keep it).
enum EntityTag {
    /// `"digest-length"`, both in lowercase hex without leading zeros.
    static func of(_ bytes: [UInt8]) -> String {
        // Written out here: String(_:radix:) went through generic integer code, 1% of a
        // server's CPU answering tiles from a file.
        var text = [UInt8]()
        text.reserveCapacity(36)
        text.append(UInt8(ascii: "\""))
        appendHex(digest(bytes), to: &text)
        text.append(UInt8(ascii: "-"))
        appendHex(UInt64(bytes.count), to: &text)
        text.append(UInt8(ascii: "\""))
        return String(decoding: text, as: UTF8.self)
    }

    static func appendHex(_ value: UInt64, to text: inout [UInt8]) {
        let digits = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
        for shift in stride(from: (digits - 1) * 4, through: 0, by: -4) {
            let nibble = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 15
            text.append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
        }
    }

    static func digest(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { tk_body_digest($0.baseAddress, $0.count) }
    }
}
