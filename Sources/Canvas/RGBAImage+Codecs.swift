import Foundation
internal import CPNGCodec
internal import CTurboJPEG
internal import CWebP

extension RGBAImage {
    /// Decodes PNG, JPEG or WebP bytes, recognised by their signature. The size the image
    /// declares is checked against `limits` before any pixel is allocated (`.tile` for
    /// tiles from an upstream or a store); a truncated or damaged image is an error.
    public init(decoding data: some Collection<UInt8>, limits: ImageLimits = .default) throws(CanvasError) {
        let bytes = Array(data)
        let header = try ImageHeader(sniffing: bytes)
        try header.check(limits)
        switch header.format {
        case .png: self = try Self.decodePNG(bytes, header)
        case .jpeg: self = try Self.decodeJPEG(bytes, header)
        case .webp: self = try Self.decodeWebP(bytes, header)
        }
    }

    /// Reads and decodes an image file; errors name the path.
    public init(contentsOf url: URL, limits: ImageLimits = .default) throws(CanvasError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .file(path: url.path, underlying: (error as NSError).localizedDescription)
        }
        do {
            try self.init(decoding: data, limits: limits)
        } catch {
            throw .file(path: url.path, underlying: error.description)
        }
    }

    /// Encodes the image.
    public func encoded(_ options: EncodingOptions = .png()) throws(CanvasError) -> [UInt8] {
        switch options {
        case .png(let level, let filter): return try encodePNG(level: level, filter: filter)
        case .jpeg(let quality, let background): return try encodeJPEG(quality: quality, background: background)
        case .webp(let quality, let lossless, let method): return try encodeWebP(quality: quality, lossless: lossless, method: method)
        }
    }

    // MARK: PNG (PNGWriter and PNGReader over libdeflate; libpng, through the C shim that owns the setjmp, for large images and what PNGReader leaves)

    private func encodePNG(level: Int, filter: PNGFilter) throws(CanvasError) -> [UInt8] {
        guard (0...9).contains(level) else { throw .invalidOption("PNG compression level \(level) is out of range [0, 9]") }
        // An opaque tile loses nothing without its alpha channel and encodes faster.
        let opaque = isOpaque
        if PNGWriter.accepts(width: width, height: height, channels: opaque ? 3 : 4) {
            return try PNGWriter.encode(rgba: pixels, width: width, height: height, channels: opaque ? 3 : 4, level: level, filter: filter)
        }
        return try libpngEncoded(level: level, filter: filter, opaque: opaque)
    }

    /// The PNG from libpng, which streams the rows through zlib: for images too large for
    /// PNGWriter, which needs them whole.
    func libpngEncoded(level: Int, filter: PNGFilter, opaque: Bool) throws(CanvasError) -> [UInt8] {
        let rows = opaque ? rgbPixels() : pixels
        let channels: Int32 = opaque ? 3 : 4
        var buffer = tk_png_buffer(data: nil, length: 0, capacity: 0)
        var message = [CChar](repeating: 0, count: 256)
        let status = rows.withUnsafeBufferPointer { pixels in
            tk_png_encode(pixels.baseAddress, UInt32(width), UInt32(height), width * Int(channels), channels,
                          Int32(level), filter.libpngMask, &buffer, &message, message.count)
        }
        defer { tk_png_free(buffer.data) }
        guard status == 0, let data = buffer.data else {
            throw .encodeFailed(format: .png, reason: ImageRowReader.text(message))
        }
        return Array(UnsafeBufferPointer(start: data, count: buffer.length))
    }

    private func rgbPixels() -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeBufferPointer { src in
            rgb.withUnsafeMutableBufferPointer { dst in
                var j = 0
                for i in stride(from: 0, to: src.count, by: 4) {
                    dst[j] = src[i]; dst[j + 1] = src[i + 1]; dst[j + 2] = src[i + 2]
                    j += 3
                }
            }
        }
        return rgb
    }

    private static func decodePNG(_ bytes: [UInt8], _ header: ImageHeader) throws(CanvasError) -> RGBAImage {
        // PNGReader inflates with one libdeflate call, 2-3x zlib's speed, the files tiles
        // are; anything else, or damaged, is libpng's to decode or to refuse with its message.
        if let pixels = PNGReader.decode(bytes, width: header.width, height: header.height) {
            return RGBAImage(width: header.width, height: header.height, pixels: pixels)
        }
        return try libpngDecoded(bytes, header)
    }

    /// The PNG decoded by libpng's simplified API, whatever PNGReader would do with it.
    static func libpngDecoded(_ bytes: [UInt8], _ header: ImageHeader) throws(CanvasError) -> RGBAImage {
        var message = [CChar](repeating: 0, count: 256)
        // Sizes were checked against the limits (and are at most 2^31 - 1 each).
        let pixels = decodeInto(count: header.width * header.height * 4) { buffer in
            tk_png_decode(bytes, bytes.count, UInt32(header.width), UInt32(header.height), buffer.baseAddress, buffer.count,
                          &message, message.count) == 0
        }
        guard let pixels else { throw .decodeFailed(format: .png, reason: ImageRowReader.text(message)) }
        return RGBAImage(width: header.width, height: header.height, pixels: pixels)
    }

    /// PNG bytes decoded by PNGReader alone (nil where it declines: not a PNG, beyond
    /// `limits`, or a file it leaves to libpng), for the differential fuzz target `pngreader`
    /// and the tests that compare it with libpng.
    @_spi(PNGDecoders) public static func decodedByPNGReader(_ bytes: [UInt8], limits: ImageLimits = .default) -> RGBAImage? {
        guard let header = try? ImageHeader(sniffing: bytes), header.format == .png, limits.allows(width: header.width, height: header.height),
              let pixels = PNGReader.decode(bytes, width: header.width, height: header.height) else { return nil }
        return RGBAImage(width: header.width, height: header.height, pixels: pixels)
    }

    /// PNG bytes decoded by libpng alone, with the header and limit checks of
    /// `init(decoding:limits:)`: what `RGBAImage(decoding:)` did before PNGReader.
    @_spi(PNGDecoders) public static func decodedByLibpng(_ bytes: [UInt8], limits: ImageLimits = .default) throws(CanvasError) -> RGBAImage {
        let header = try ImageHeader(sniffing: bytes)
        guard header.format == .png else { throw .unknownFormat(firstBytes: ImageHeader.hex(bytes.prefix(8))) }
        try header.check(limits)
        return try libpngDecoded(bytes, header)
    }

    /// `count` bytes filled by `decode`, or nil when it fails. The buffer is not cleared first:
    /// a bomb that passes the limits but whose data ends early costs the pages written, not
    /// all of them.
    static func decodeInto(count: Int, _ decode: (UnsafeMutableBufferPointer<UInt8>) -> Bool) -> [UInt8]? {
        var succeeded = false
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            succeeded = decode(buffer)
            initialized = succeeded ? count : 0  // bytes are trivial: nothing to clean up
        }
        return succeeded ? pixels : nil
    }

    // MARK: JPEG (libjpeg-turbo's TurboJPEG API)

    private func encodeJPEG(quality: Int, background: Color) throws(CanvasError) -> [UInt8] {
        guard (1...100).contains(quality) else { throw .invalidOption("JPEG quality \(quality) is out of range [1, 100]") }
        guard let handle = tjInitCompress() else { throw .encodeFailed(format: .jpeg, reason: "tjInitCompress failed") }
        defer { tjDestroy(handle) }
        let source = isOpaque ? pixels : flattened(onto: background).pixels
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = source.withUnsafeBufferPointer { src in
            tjCompress2(handle, src.baseAddress, Int32(width), Int32(width * 4), Int32(height), Int32(TJPF_RGBA.rawValue),
                        &output, &size, Int32(TJSAMP_420.rawValue), Int32(quality), 0)
        }
        defer { tjFree(output) }
        guard status == 0, let output else {
            throw .encodeFailed(format: .jpeg, reason: String(cString: tjGetErrorStr2(handle)))
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    private static func decodeJPEG(_ bytes: [UInt8], _ header: ImageHeader) throws(CanvasError) -> RGBAImage {
        guard let handle = tjInitDecompress() else { throw .decodeFailed(format: .jpeg, reason: "tjInitDecompress failed") }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        var mutableBytes = bytes
        let status = tjDecompressHeader3(handle, &mutableBytes, UInt(bytes.count), &width, &height, &subsampling, &colorspace)
        guard status == 0 else {
            throw .decodeFailed(format: .jpeg, reason: String(cString: tjGetErrorStr2(handle)))
        }
        // TurboJPEG's own reading is what it will allocate for: it must be the checked size.
        guard Int(width) == header.width, Int(height) == header.height else {
            throw .decodeFailed(format: .jpeg, reason: "TurboJPEG reads \(width)x\(height) where the frame header says \(header.width)x\(header.height)")
        }
        // LIMITSCANS: a progressive file of thousands of scans is refused, not decoded for minutes.
        let flags = Int32(TJFLAG_LIMITSCANS)
        let pixels = decodeInto(count: header.width * header.height * 4) { dst in
            tjDecompress2(handle, &mutableBytes, UInt(bytes.count), dst.baseAddress, width, width * 4, height,
                          Int32(TJPF_RGBA.rawValue), flags) == 0
        }
        // A truncated file decodes with a warning (grey rows at the bottom): that is an error here.
        guard let pixels else {
            throw .decodeFailed(format: .jpeg, reason: String(cString: tjGetErrorStr2(handle)))
        }
        return RGBAImage(width: header.width, height: header.height, pixels: pixels)
    }

    // MARK: WebP (libwebp's advanced API, for the method setting)

    private func encodeWebP(quality: Double, lossless: Bool, method: Int) throws(CanvasError) -> [UInt8] {
        guard (0...100).contains(quality) else { throw .invalidOption("WebP quality \(quality) is out of range [0, 100]") }
        guard (0...6).contains(method) else { throw .invalidOption("WebP method \(method) is out of range [0, 6]") }
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw .encodeFailed(format: .webp, reason: "libwebp version mismatch") }
        config.quality = Float(quality)
        config.lossless = lossless ? 1 : 0
        config.method = Int32(method)
        if !lossless, isOpaque == false { config.alpha_quality = 100 }
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw .encodeFailed(format: .webp, reason: "libwebp version mismatch") }
        picture.use_argb = 1
        picture.width = Int32(width)
        picture.height = Int32(height)
        defer { WebPPictureFree(&picture) }
        let imported = pixels.withUnsafeBufferPointer { WebPPictureImportRGBA(&picture, $0.baseAddress, Int32(width * 4)) }
        guard imported != 0 else { throw .encodeFailed(format: .webp, reason: "out of memory importing \(width)x\(height) pixels") }
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let status = withUnsafeMutablePointer(to: &writer) { writerPointer in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(writerPointer)
            return WebPEncode(&config, &picture)
        }
        guard status != 0, let mem = writer.mem else {
            throw .encodeFailed(format: .webp, reason: "libwebp error code \(picture.error_code.rawValue)")
        }
        return Array(UnsafeBufferPointer(start: mem, count: writer.size))
    }

    private static func decodeWebP(_ bytes: [UInt8], _ header: ImageHeader) throws(CanvasError) -> RGBAImage {
        var width: Int32 = 0, height: Int32 = 0
        guard WebPGetInfo(bytes, bytes.count, &width, &height) != 0 else {
            throw .decodeFailed(format: .webp, reason: "libwebp cannot read the header of \(bytes.count) bytes")
        }
        guard Int(width) == header.width, Int(height) == header.height else {
            throw .decodeFailed(format: .webp, reason: "libwebp reads \(width)x\(height) where the header says \(header.width)x\(header.height)")
        }
        // Decoded into a buffer of the checked size: libwebp allocates no image of its own.
        let pixels = decodeInto(count: header.width * header.height * 4) { dst in
            WebPDecodeRGBAInto(bytes, bytes.count, dst.baseAddress, dst.count, width * 4) != nil
        }
        guard let pixels else {
            throw .decodeFailed(format: .webp, reason: "libwebp could not decode \(bytes.count) bytes (damaged or cut short)")
        }
        return RGBAImage(width: header.width, height: header.height, pixels: pixels)
    }

    /// The image composited over an opaque colour (for formats without alpha).
    public func flattened(onto background: Color) -> RGBAImage {
        let bg = Pixel(background.withAlpha(1))
        var out = pixels
        for i in stride(from: 0, to: out.count, by: 4) {
            let a = Int(out[i + 3])
            guard a < 255 else { continue }
            func mix(_ value: UInt8, _ under: UInt8) -> UInt8 { UInt8((Int(value) * a + Int(under) * (255 - a) + 127) / 255) }
            out[i] = mix(out[i], bg.red); out[i + 1] = mix(out[i + 1], bg.green); out[i + 2] = mix(out[i + 2], bg.blue)
            out[i + 3] = 255
        }
        return RGBAImage(width: width, height: height, pixels: out)
    }
}

extension String {
    func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
