/// A 128-bit content key for deduplicating stored tiles: two independent 64-bit hashes
/// (FNV-1a and a multiply-xorshift mix) and the length, so a collision would need both
/// hashes and the size to agree. Not cryptographic; it only decides which bytes repeat.
public struct ContentDigest: Hashable, Sendable {
    public let hashA: UInt64
    public let hashB: UInt64
    public let length: Int

    public init(_ bytes: [UInt8]) {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x9e37_79b9_7f4a_7c15
        for byte in bytes {
            a = (a ^ UInt64(byte)) &* 0x100_0000_01b3
            b = (b ^ UInt64(byte)) &* 0xff51_afd7_ed55_8ccd
            b ^= b >> 29
        }
        hashA = a
        hashB = b
        length = bytes.count
    }

    /// The digest as text (MBTiles' `tile_id`).
    public var text: String { String(hashA, radix: 16) + String(hashB, radix: 16) + String(length, radix: 16) }
}
