import Compression
import TileMath

/// The Redis key of one encoded tile:
/// `tilekit:v1:{map}:{definition}:{layer}:{z}/{x}/{y}@{scale}x.{format}`, for example
/// `tilekit:v1:central-park:3f2a…:*:15/9649/12315@2x.png`.
///
/// Everything that changes a tile's bytes is in the key, so two instances share an entry
/// only when they would have drawn the same bytes, and an edited map never serves old
/// renders: the definition hash changes with the map (see `definitionHash`), and the old
/// entries simply expire. `{layer}` is `*` for the composed map. Map and layer names are
/// percent-escaped where they could be mistaken for a separator (`:`, `/`, `@`, `*`, `%`,
/// spaces and control characters), so no two different tiles share a key. `v1` is the
/// layout of the key and of the value; change it when either changes.
public struct TileCacheKey: Hashable, Sendable, CustomStringConvertible {
    public let map: String
    public let definition: String
    /// nil: the composed map (every layer); otherwise one layer alone.
    public let layer: String?
    public let tile: TileID
    public let scale: Int
    /// The file extension of the encoding (`png`, `jpg`, `webp`).
    public let format: String

    public init(map: String, definition: String, layer: String?, tile: TileID, scale: Int, format: String) {
        self.map = map
        self.definition = definition
        self.layer = layer
        self.tile = tile
        self.scale = scale
        self.format = format
    }

    public static let prefix = "tilekit:v1:"

    /// The key as sent to Redis.
    public var description: String {
        let layerPart = layer.map(Self.escaped) ?? "*"
        return "\(Self.prefix)\(Self.escaped(map)):\(Self.escaped(definition)):\(layerPart):\(tile.z)/\(tile.x)/\(tile.y)@\(scale)x.\(Self.escaped(format))"
    }

    /// The hash of a map's definition for `definition`: 32 hex digits over every part given,
    /// in order, each prefixed with its length so that parts cannot run into each other.
    /// Pass the map.json bytes and whatever else changes the drawing that the map.json does
    /// not hold itself (the bytes of overlay files, or the size and modification time of a
    /// large store). Built on `ContentDigest` (two 64-bit hashes and the length): not
    /// cryptographic, which is enough to tell one version of a map from the next.
    public static func definitionHash(_ parts: [[UInt8]]) -> String {
        var joined = [UInt8]()
        joined.reserveCapacity(parts.reduce(0) { $0 + $1.count + 8 })
        for part in parts {
            withUnsafeBytes(of: UInt64(part.count).littleEndian) { joined.append(contentsOf: $0) }
            joined.append(contentsOf: part)
        }
        let digest = ContentDigest(joined)
        return hex16(digest.hashA) + hex16(digest.hashB)
    }

    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `text` with separators, `%` and bytes outside printable ASCII percent-encoded.
    static func escaped(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "@"), UInt8(ascii: "*"), UInt8(ascii: "%"), 0...0x20, 0x7f...0xff:
                let digits = String(byte, radix: 16, uppercase: true)
                out += "%" + (digits.count == 1 ? "0" : "") + digits
            default:
                out.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return out
    }
}
