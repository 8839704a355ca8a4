internal import CBodyDigest

/// The ETag of a response body: a 64-bit digest of its bytes and their count, quoted.
///
/// Not `ContentDigest`, which takes a byte at a time (its values are kept in MBTiles files and
/// cannot change): that cost a third of serving a 117 KB tile that missed the memory cache.
/// The digest is `tk_body_digest` (CBodyDigest): eight lanes of 64 bytes a stripe, AVX2 where
/// the CPU has it, the same value either way. Every server of a cluster computes the same tag
/// for the same bytes (tiles shared through Redis keep it).
enum EntityTag {
    static func of(_ bytes: [UInt8]) -> String {
        "\"" + String(digest(bytes), radix: 16) + "-" + String(bytes.count, radix: 16) + "\""
    }

    static func digest(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { tk_body_digest($0.baseAddress, $0.count) }
    }
}
