/// What the PNG readers and writers here, and the tests and fuzz targets that make PNGs of
/// every kind, share about rows (PNG spec §9, §11.2.2): samples a pixel by colour type, and
/// rows filtered each by its own filter type, through PNGWriter's filters.
@_spi(PNGDecoders) public enum PNGRows {
    /// Samples a pixel of an 8-bit image of colour type 0 (gray), 2 (RGB), 3 (palette),
    /// 4 (gray + alpha) or 6 (RGBA); nil for any other type.
    public static func channels(colorType: UInt8) -> Int? {
        switch colorType {
        case 0, 3: return 1
        case 4: return 2
        case 2: return 3
        case 6: return 4
        default: return nil
        }
    }

    /// `samples` (rows of `rowBytes`, `types.count` of them) filtered, each row after its
    /// filter-type byte. A type above 4 is written as it is over the unfiltered row: how a
    /// test makes a file that a reader must refuse.
    public static func filtered(_ samples: [UInt8], rowBytes: Int, bytesPerPixel: Int, types: [UInt8]) -> [UInt8] {
        let filters: [PNGFilter] = [.none, .sub, .up, .average, .paeth]
        var out = [UInt8](repeating: 0, count: (rowBytes + 1) * types.count)
        var raw = samples
        let zeros = [UInt8](repeating: 0, count: rowBytes)
        raw.withUnsafeMutableBufferPointer { rows in
            out.withUnsafeMutableBufferPointer { out in
                zeros.withUnsafeBufferPointer { zeros in
                    guard let rows = rows.baseAddress, let out = out.baseAddress, let zeros = zeros.baseAddress else { return }
                    for (y, type) in types.enumerated() {
                        let row = rows + y * rowBytes, into = out + y * (rowBytes + 1)
                        let above = y > 0 ? rows + (y - 1) * rowBytes : UnsafeMutablePointer(mutating: zeros)
                        into[0] = type
                        PNGWriter.apply(Int(type) < filters.count ? filters[Int(type)] : .none, row, above, rowBytes, bytesPerPixel,
                                        into: into + 1)
                    }
                }
            }
        }
        return out
    }
}
