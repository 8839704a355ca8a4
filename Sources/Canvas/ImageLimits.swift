/// How large an image a decoder accepts, checked on the dimensions an image declares
/// before a single pixel is allocated: a 1 MB PNG may declare 50000 x 50000 pixels (10 GB
/// as RGBA), and a tile from an upstream server may be anything.
///
/// Both bounds hold: each side at most `maxSide`, and `width * height` at most `maxPixels`
/// (computed without overflow). Memory for a whole image is `4 * maxPixels` bytes at most.
public struct ImageLimits: Hashable, Sendable, CustomStringConvertible {
    /// The largest width and the largest height, in pixels (each side on its own).
    public var maxSide: Int
    /// The largest `width * height`.
    public var maxPixels: Int

    public init(maxSide: Int, maxPixels: Int) {
        self.maxSide = maxSide
        self.maxPixels = maxPixels
    }

    /// Images decoded whole (`RGBAImage(decoding:)`, overlays, icons, `stitch` images):
    /// 16384 x 16384 pixels (1 GiB as RGBA) in all, at most 32768 on a side, so a
    /// 16384 px square scan and a 32768 x 8192 panorama pass and a 50000 x 50000 bomb
    /// does not.
    public static let `default` = ImageLimits(maxSide: 32_768, maxPixels: 16_384 * 16_384)

    /// Tiles (fetched from an upstream, read from a store): a tile is 256 or 512 px, 1024
    /// at @2x of 512; anything past 4096 px on a side is garbage (64 MiB as RGBA at most).
    public static let tile = ImageLimits(maxSide: 4_096, maxPixels: 4_096 * 4_096)

    /// Images read row by row (`ImageRowReader`, `tilekit pyramid`): only a window of rows
    /// is in memory, so more pixels pass, 2^32 (a 65536 px square); a row is at most
    /// 131072 px (512 KiB). Parts of such a file that cannot be streamed (a WebP, an
    /// interlaced PNG, a progressive JPEG, one huge TIFF strip) must still fit `default`.
    public static let scan = ImageLimits(maxSide: 131_072, maxPixels: 1 << 32)

    /// The tighter of two limits, bound by bound.
    public func intersection(_ other: ImageLimits) -> ImageLimits {
        ImageLimits(maxSide: min(maxSide, other.maxSide), maxPixels: min(maxPixels, other.maxPixels))
    }

    /// True when an image of this size is within the limits (a size of 0 or less is not).
    public func allows(width: Int, height: Int) -> Bool {
        guard width > 0, height > 0, width <= maxSide, height <= maxSide else { return false }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        // Four bytes a pixel must fit an Int too, whatever a custom limit says.
        return !overflow && pixels <= maxPixels && pixels <= Int.max / 4
    }

    /// Throws `imageTooLarge` (or `invalidSize` for an empty image) unless the size is allowed.
    public func check(width: Int, height: Int) throws(CanvasError) {
        guard width > 0, height > 0 else { throw .invalidSize(width: width, height: height) }
        guard allows(width: width, height: height) else { throw .imageTooLarge(width: width, height: height, limit: self) }
    }

    public var description: String { "at most \(maxSide) px a side and \(maxPixels) pixels" }
}
