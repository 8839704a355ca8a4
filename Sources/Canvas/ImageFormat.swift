/// The encoded image formats of tiles and snapshots.
public enum ImageFormat: String, Hashable, Sendable, CaseIterable {
    case png, jpeg, webp

    public var name: String {
        switch self {
        case .png: return "PNG"
        case .jpeg: return "JPEG"
        case .webp: return "WebP"
        }
    }

    /// The MIME type for HTTP and the MBTiles `format` value's media type.
    public var mimeType: String {
        switch self {
        case .png: return "image/png"
        case .jpeg: return "image/jpeg"
        case .webp: return "image/webp"
        }
    }

    /// The usual file extension (without a dot).
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// Parses an extension or format name: png, jpg, jpeg, webp (any case).
    public init?(name: String) {
        switch name.lowercased() {
        case "png": self = .png
        case "jpg", "jpeg": self = .jpeg
        case "webp": self = .webp
        default: return nil
        }
    }

    /// Recognises encoded bytes by their signature; nil when none matches. Inlinable, so a
    /// caller in another module gets it specialized for its collection: every tile read from
    /// a file is sniffed, and the generic version spent 2.3% of a server's CPU answering
    /// tiles from SQLite on looking up generic metadata to copy 12 bytes.
    @inlinable
    public init?(sniffing bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if head.count == 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) {
            self = .webp
        } else {
            return nil
        }
    }
}

/// How to encode an image. Defaults suit map tiles: fast PNG, JPEG q85, lossy WebP q80.
public enum EncodingOptions: Hashable, Sendable {
    /// `compressionLevel` is zlib's 0-9; `filter` the PNG row filter. Level 2 with no
    /// filter encodes 256 px map tiles ~3x faster than cairo's level 6 with all filters,
    /// and flat map tiles come out no larger.
    case png(compressionLevel: Int = 2, filter: PNGFilter = .none)
    /// `quality` 1-100; 4:2:0 chroma subsampling. Transparent areas are flattened onto `background`.
    case jpeg(quality: Int = 85, background: Color = .white)
    /// `quality` 0-100; `method` 0 (fastest) to 6 (smallest).
    case webp(quality: Double = 80, lossless: Bool = false, method: Int = 0)

    public var format: ImageFormat {
        switch self {
        case .png: return .png
        case .jpeg: return .jpeg
        case .webp: return .webp
        }
    }

    /// The default options of a format.
    public static func defaults(for format: ImageFormat) -> EncodingOptions {
        switch format {
        case .png: return .png()
        case .jpeg: return .jpeg()
        case .webp: return .webp()
        }
    }
}

/// PNG row filters (PNG spec §9); `all` lets libpng choose per row.
public enum PNGFilter: Hashable, Sendable {
    case none, sub, up, average, paeth, all

    /// libpng's PNG_FILTER_* mask (the macros do not import into Swift).
    var libpngMask: Int32 {
        switch self {
        case .none: return 0x08
        case .sub: return 0x10
        case .up: return 0x20
        case .average: return 0x40
        case .paeth: return 0x80
        case .all: return 0xF8
        }
    }
}
