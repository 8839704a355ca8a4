import Foundation
import TileMath
internal import CCairo

/// A raster surface to draw on, over a cairo image surface (premultiplied ARGB32).
///
/// Not `Sendable`: a canvas belongs to one task from creation to `makeImage()`, and no
/// cairo object crosses an `await`. Coordinates are pixels, origin top-left, y down; the
/// pixel (0, 0) covers [0, 1) × [0, 1), so a 1 px line on a pixel row sits at y + 0.5.
public final class Canvas {
    public let width: Int
    public let height: Int
    let surface: OpaquePointer
    let context: OpaquePointer
    /// Fills and round-joined strokes in solid colours are drawn by `CoverageRaster` (at
    /// `best`, those whose parts keep clear of each other or can be cut so; see
    /// `StrokeOutline`), with no clip, transform or opacity layer in effect; all else by cairo.
    /// Taken from the rasters of canvases gone on the first such shape, given back at the end.
    private var heldRaster: CoverageRaster?
    private var raster: CoverageRaster {
        if let heldRaster { return heldRaster }
        let taken = CoverageRaster.take()
        heldRaster = taken
        return taken
    }
    private var antialias = Antialias.best
    /// How many clips, transforms and opacity layers are in effect.
    private var scopes = 0
    /// Everything through cairo (tests compare the two).
    var drawsWithCairoOnly = false

    /// A canvas filled with `background` (transparent by default).
    public init(width: Int, height: Int, background: Color = .clear) throws(CanvasError) {
        guard width > 0, height > 0, width <= 32767, height <= 32767 else {
            throw .invalidSize(width: width, height: height)
        }
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)),
              cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
            throw .invalidSize(width: width, height: height)
        }
        guard let context = cairo_create(surface), cairo_status(context) == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw .invalidSize(width: width, height: height)
        }
        self.width = width
        self.height = height
        self.surface = surface
        self.context = context
        if background.alpha > 0 { clear(background) }
    }

    /// A canvas that starts as a copy of an image.
    public convenience init(image: RGBAImage) throws(CanvasError) {
        try self.init(width: image.width, height: image.height)
        CairoPixels.write(image, into: surface)
    }

    deinit {
        cairo_destroy(context)
        cairo_surface_destroy(surface)
        if let heldRaster { CoverageRaster.giveBack(heldRaster) }
    }

    /// How shape edges are smoothed. Both give each pixel the exact area of the shape in it
    /// (`CoverageRaster`). `best` draws a line that crosses or doubles back on itself, and
    /// rings that touch, as their union (or through cairo); `fast` sums the overlap instead,
    /// so the edge pixels where a shape overlaps itself come out darker (AGG's, and so
    /// Mapnik's, way), for dense data layers. What cairo still draws (clipped, transformed,
    /// gradients, dashes) uses cairo's default at `best`, its 4x4 sampling at `fast`.
    public enum Antialias: String, Sendable, CaseIterable {
        case best, fast
    }

    public func setAntialias(_ antialias: Antialias) {
        self.antialias = antialias
        cairo_set_antialias(context, antialias == .fast ? CAIRO_ANTIALIAS_FAST : CAIRO_ANTIALIAS_DEFAULT)
    }

    /// Replaces every pixel with a colour (ignoring clip and transform).
    public func clear(_ color: Color = .clear) {
        cairo_save(context)
        cairo_reset_clip(context)
        cairo_identity_matrix(context)
        cairo_set_operator(context, CAIRO_OPERATOR_SOURCE)
        cairo_set_source_rgba(context, color.red, color.green, color.blue, color.alpha)
        cairo_paint(context)
        cairo_restore(context)
    }

    /// Fills the inside of a path.
    public func fill(_ path: Path, with paint: Paint, rule: FillRule = .nonZero) {
        if case .color(let color) = paint, drawsDirectly, let subpaths = Subpath.of(path) {
            let rings = Subpath.deduplicated(subpaths)
            if antialias == .fast || Subpath.fillsExactly(rings),
               fillDirectly([CoverageRaster.Piece(contours: rings.map(\.points))], rule: rule, color: color) { return }
        }
        cairo_save(context)
        defer { cairo_restore(context) }
        setPath(path)
        cairo_set_fill_rule(context, rule == .evenOdd ? CAIRO_FILL_RULE_EVEN_ODD : CAIRO_FILL_RULE_WINDING)
        setSource(paint)
        cairo_fill(context)
    }

    /// Draws the outline of a path.
    /// A width that is infinite or not a number draws nothing.
    public func stroke(_ path: Path, with paint: Paint, style: StrokeStyle = StrokeStyle()) {
        guard style.width.isFinite else { return }
        // Ink of a round-joined stroke lies within half its width of the line (a square cap's
        // corner within 0.71 widths): segments a width and 2 px off the canvas draw nothing.
        if case .color(let color) = paint, drawsDirectly, let subpaths = Subpath.of(path),
           let pieces = StrokeOutline.pieces(of: Subpath.culled(subpaths, width: Double(width), height: Double(height), margin: style.width + 2),
                                             style: style, exact: antialias == .best),
           fillDirectly(pieces, rule: .nonZero, color: color) { return }
        cairo_save(context)
        defer { cairo_restore(context) }
        setPath(path)
        apply(style)
        setSource(paint)
        cairo_stroke(context)
    }

    /// Draws an image through a transform that maps the image's pixel space (origin at its
    /// top-left corner) onto the canvas, with an opacity in [0, 1].
    public func draw(_ image: RGBAImage, transform: AffineTransform = .identity, opacity: Double = 1,
                     interpolation: Interpolation = .bilinear) {
        // An image placed 1:1 at whole pixels (a map tile) is composited here: cairo would
        // first copy it into a surface of its own, premultiplied, then composite that.
        if drawsDirectly, opacity >= 1, let x = Self.wholePixels(transform.tx), let y = Self.wholePixels(transform.ty),
           transform.a == 1, transform.b == 0, transform.c == 0, transform.d == 1 {
            cairo_surface_flush(surface)
            guard let data = cairo_image_surface_get_data(surface) else { return }
            CairoPixels.composite(image, x: x, y: y, into: data, stride: Int(cairo_image_surface_get_stride(surface)), width: width, height: height)
            cairo_surface_mark_dirty(surface)
            return
        }
        guard let source = CairoPixels.makeSurface(image) else { return }
        defer { cairo_surface_destroy(source) }
        cairo_save(context)
        defer { cairo_restore(context) }
        var matrix = cairo_matrix_t(xx: transform.a, yx: transform.b, xy: transform.c, yy: transform.d,
                                    x0: transform.tx, y0: transform.ty)
        cairo_transform(context, &matrix)
        cairo_set_source_surface(context, source, 0, 0)
        let pattern = cairo_get_source(context)
        cairo_pattern_set_filter(pattern, interpolation.cairoFilter)
        // PAD, not NONE: the image's edge pixels are not blended with transparency
        // when scaled up, so an image that fills a tile has no soft rim.
        cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
        cairo_rectangle(context, 0, 0, Double(image.width), Double(image.height))
        cairo_clip(context)
        cairo_paint_with_alpha(context, max(0, min(1, opacity)))
    }

    /// Draws an image stretched into a rectangle.
    public func draw(_ image: RGBAImage, x: Double, y: Double, width: Double, height: Double,
                     opacity: Double = 1, interpolation: Interpolation = .bilinear) {
        let transform = AffineTransform.scale(x: width / Double(image.width), y: height / Double(image.height))
            .concatenating(.translation(x: x, y: y))
        draw(image, transform: transform, opacity: opacity, interpolation: interpolation)
    }

    /// Runs `body` with drawing limited to the inside of a path.
    public func withClip<T>(_ path: Path, rule: FillRule = .nonZero, _ body: () throws -> T) rethrows -> T {
        cairo_save(context)
        scopes += 1
        defer { cairo_restore(context); scopes -= 1 }
        setPath(path)
        cairo_set_fill_rule(context, rule == .evenOdd ? CAIRO_FILL_RULE_EVEN_ODD : CAIRO_FILL_RULE_WINDING)
        cairo_clip(context)
        return try body()
    }

    /// Runs `body` with every coordinate mapped through a transform first (a renderer that
    /// works in its own units; a @2x tile that draws in 1x units).
    public func withTransform<T>(_ transform: AffineTransform, _ body: () throws -> T) rethrows -> T {
        cairo_save(context)
        scopes += 1
        defer { cairo_restore(context); scopes -= 1 }
        var matrix = cairo_matrix_t(xx: transform.a, yx: transform.b, xy: transform.c, yy: transform.d,
                                    x0: transform.tx, y0: transform.ty)
        cairo_transform(context, &matrix)
        return try body()
    }

    /// Runs `body` drawing into a layer that is then composited with an opacity, so
    /// overlapping shapes of one overlay do not darken each other.
    public func withOpacity<T>(_ opacity: Double, _ body: () throws -> T) rethrows -> T {
        cairo_push_group(context)
        scopes += 1
        defer { scopes -= 1 }
        let result: T
        do {
            result = try body()
        } catch {
            cairo_pattern_destroy(cairo_pop_group(context))
            throw error
        }
        cairo_pop_group_to_source(context)
        cairo_paint_with_alpha(context, max(0, min(1, opacity)))
        return result
    }

    /// The pixels drawn so far, with straight alpha.
    public func makeImage() -> RGBAImage {
        cairo_surface_flush(surface)
        return CairoPixels.read(surface, width: width, height: height)
    }

    /// The surface's premultiplied bytes as cairo holds them (for tests that compare two ways
    /// of drawing: straight alpha would hide differences in faint pixels).
    var surfaceBytes: [UInt8] {
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        guard let data = cairo_image_surface_get_data(surface) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: stride * height))
    }

    /// The pixels drawn so far, encoded.
    public func encoded(_ options: EncodingOptions = .png()) throws(CanvasError) -> [UInt8] {
        try makeImage().encoded(options)
    }

    // MARK: drawing without cairo

    private var drawsDirectly: Bool { scopes == 0 && !drawsWithCairoOnly }

    /// `value` as a whole number of pixels, if it is one within the canvas' reach.
    private static func wholePixels(_ value: Double) -> Int? {
        guard value.rounded() == value, value.magnitude <= Double(1 << 30) else { return nil }
        return Int(value)
    }

    /// Fills the pieces through `CoverageRaster` straight into the surface's pixels;
    /// false when the shape is too large for it (nothing drawn: cairo draws it instead).
    private func fillDirectly(_ pieces: [CoverageRaster.Piece], rule: FillRule, color: Color) -> Bool {
        cairo_surface_flush(surface)
        guard let data = cairo_image_surface_get_data(surface),
              raster.fill(pieces: pieces, rule: rule, word: CoverageRaster.premultipliedWord(color), into: data,
                          stride: Int(cairo_image_surface_get_stride(surface)), width: width, height: height) else { return false }
        cairo_surface_mark_dirty(surface)
        return true
    }

    // MARK: cairo state

    func setPath(_ path: Path) {
        cairo_new_path(context)
        for element in path.elements {
            switch element {
            case .move(let p): cairo_move_to(context, p.x, p.y)
            case .line(let p): cairo_line_to(context, p.x, p.y)
            case .curve(let c1, let c2, let e): cairo_curve_to(context, c1.x, c1.y, c2.x, c2.y, e.x, e.y)
            case .arc(let c, let r, let a0, let a1):
                // cairo cuts an arc into segments by its radius: 1e300 would be forever. Beyond
                // ±8 million px its fixed point wraps anyway.
                guard r.isFinite, abs(r) <= 1e7, let sweep = Path.arcSweep(from: a0, to: a1) else { continue }
                // cairo also halves an arc of more than π until the halves are smaller: from a
                // start of 6e16 radians, where a double's step is 8, a turn's middle rounds onto
                // its end and the halving never ends (a fuzzer's timeout). So a start that far
                // out is taken as its remainder of a turn, the same arc; below
                // `Path.farArcStart` (where the canvas's own rasterizer takes arcs) it is kept.
                let start = abs(a0) < Path.farArcStart ? a0 : a0.truncatingRemainder(dividingBy: 2 * .pi)
                cairo_arc(context, c.x, c.y, r, start, start + sweep)
            case .close: cairo_close_path(context)
            }
        }
    }

    func apply(_ style: StrokeStyle) {
        // cairo's pen has about sqrt(width / tolerance) vertices, so a stroke 1e12 px wide takes
        // minutes: beyond 1e6 px (30 times the widest canvas) it is drawn 1e6 px wide.
        cairo_set_line_width(context, min(style.width, 1e6))
        cairo_set_line_cap(context, style.cap == .round ? CAIRO_LINE_CAP_ROUND : style.cap == .square ? CAIRO_LINE_CAP_SQUARE : CAIRO_LINE_CAP_BUTT)
        cairo_set_line_join(context, style.join == .round ? CAIRO_LINE_JOIN_ROUND : style.join == .bevel ? CAIRO_LINE_JOIN_BEVEL : CAIRO_LINE_JOIN_MITER)
        cairo_set_miter_limit(context, style.miterLimit)
        // cairo puts the surface in an error state for an all-zero or negative dash.
        let dash = style.dash.allSatisfy({ $0 >= 0 }) && style.dash.contains(where: { $0 > 0 }) ? style.dash : []
        cairo_set_dash(context, dash, Int32(dash.count), style.dashPhase)
    }

    func setSource(_ paint: Paint) {
        switch paint {
        case .color(let color):
            cairo_set_source_rgba(context, color.red, color.green, color.blue, color.alpha)
        case .linearGradient(let start, let end, let stops, let extend):
            let pattern = cairo_pattern_create_linear(start.x, start.y, end.x, end.y)
            setGradient(pattern, stops: stops, extend: extend)
        case .radialGradient(let c0, let r0, let c1, let r1, let stops, let extend):
            let pattern = cairo_pattern_create_radial(c0.x, c0.y, r0, c1.x, c1.y, r1)
            setGradient(pattern, stops: stops, extend: extend)
        }
    }

    private func setGradient(_ pattern: OpaquePointer?, stops: [GradientStop], extend: GradientExtend) {
        for stop in stops {
            cairo_pattern_add_color_stop_rgba(pattern, stop.offset, stop.color.red, stop.color.green, stop.color.blue, stop.color.alpha)
        }
        cairo_pattern_set_extend(pattern, extend == .repeat ? CAIRO_EXTEND_REPEAT : extend == .reflect ? CAIRO_EXTEND_REFLECT : CAIRO_EXTEND_PAD)
        cairo_set_source(context, pattern)
        cairo_pattern_destroy(pattern)
    }
}

extension Interpolation {
    var cairoFilter: cairo_filter_t {
        switch self {
        case .nearest: return CAIRO_FILTER_NEAREST
        case .bilinear: return CAIRO_FILTER_BILINEAR
        case .best: return CAIRO_FILTER_BEST
        }
    }
}

/// Conversions between straight RGBA and cairo's premultiplied native-endian ARGB32
/// (bytes B, G, R, A on little-endian machines).
enum CairoPixels {
    static func read(_ surface: OpaquePointer, width: Int, height: Int) -> RGBAImage {
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = cairo_image_surface_get_data(surface)!
        var out = [UInt8](repeating: 0, count: width * height * 4)
        out.withUnsafeMutableBufferPointer { dst in
            for y in 0..<height {
                let row = data + y * stride
                for x in 0..<width {
                    let word = UnsafeRawPointer(row + x * 4).loadUnaligned(as: UInt32.self).littleEndian
                    let a = word >> 24
                    let o = (y * width + x) * 4
                    guard a > 0 else { continue }  // fully transparent stays 0,0,0,0
                    if a == 255 {
                        dst[o] = UInt8(truncatingIfNeeded: word >> 16)
                        dst[o + 1] = UInt8(truncatingIfNeeded: word >> 8)
                        dst[o + 2] = UInt8(truncatingIfNeeded: word)
                    } else {
                        func unpremultiply(_ v: UInt32) -> UInt8 { UInt8(min(255, ((v & 0xFF) * 255 + a / 2) / a)) }
                        dst[o] = unpremultiply(word >> 16)
                        dst[o + 1] = unpremultiply(word >> 8)
                        dst[o + 2] = unpremultiply(word)
                    }
                    dst[o + 3] = UInt8(a)
                }
            }
        }
        return RGBAImage(width: width, height: height, pixels: out)
    }

    static func write(_ image: RGBAImage, into surface: OpaquePointer) {
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = cairo_image_surface_get_data(surface)!
        image.pixels.withUnsafeBufferPointer { src in
            for y in 0..<image.height {
                let row = data + y * stride
                for x in 0..<image.width {
                    let o = (y * image.width + x) * 4
                    let a = UInt32(src[o + 3])
                    let word: UInt32
                    // Tiles are mostly opaque or empty: those need no division (the general
                    // formula gives the same words for them).
                    if a == 255 {
                        word = 0xFF00_0000 | UInt32(src[o]) << 16 | UInt32(src[o + 1]) << 8 | UInt32(src[o + 2])
                    } else if a == 0 {
                        word = 0
                    } else {
                        word = a << 24 | premultiplied(UInt32(src[o]), a) << 16 | premultiplied(UInt32(src[o + 1]), a) << 8
                            | premultiplied(UInt32(src[o + 2]), a)
                    }
                    UnsafeMutableRawPointer(row + x * 4).storeBytes(of: word.littleEndian, as: UInt32.self)
                }
            }
        }
        cairo_surface_mark_dirty(surface)
    }

    /// Composites `image` with its top left at (`x`, `y`) onto premultiplied ARGB32 pixels
    /// (cairo's OVER with pixman's rounding: the same bytes as painting it through cairo),
    /// clipped to `width` x `height`.
    static func composite(_ image: RGBAImage, x: Int, y: Int, into data: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int) {
        let left = max(0, x), right = min(width, x + image.width)
        let top = max(0, y), bottom = min(height, y + image.height)
        guard left < right, top < bottom else { return }
        image.pixels.withUnsafeBytes { src in
            guard let pixels = src.baseAddress else { return }
            for row in top..<bottom {
                let from = pixels + ((row - y) * image.width + (left - x)) * 4
                let to = UnsafeMutableRawPointer(data + row * stride + left * 4)
                for i in 0..<(right - left) {
                    let rgba = from.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self).littleEndian
                    let a = rgba >> 24
                    if a == 0 { continue }
                    let r = rgba & 0xFF, g = rgba >> 8 & 0xFF, b = rgba >> 16 & 0xFF
                    if a == 255 {
                        to.storeBytes(of: (0xFF00_0000 | r << 16 | g << 8 | b).littleEndian, toByteOffset: i * 4, as: UInt32.self)
                        continue
                    }
                    // Premultiplied as `write` does, then OVER: d * (255 - a) / 255 rounded
                    // (pixman's (t + (t >> 8)) >> 8 of t + 128), plus the source, saturated.
                    let destination = to.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self).littleEndian
                    // One channel: the byte of `destination` at `shift` under `source`.
                    func over(_ source: UInt32, _ shift: UInt32) -> UInt32 {
                        let t = (destination >> shift & 0xFF) * (255 - a) + 128
                        return min(255, ((t + (t >> 8)) >> 8) + source) << shift
                    }
                    let word = over(premultiplied(b, a), 0) | over(premultiplied(g, a), 8) | over(premultiplied(r, a), 16) | over(a, 24)
                    to.storeBytes(of: word.littleEndian, toByteOffset: i * 4, as: UInt32.self)
                }
            }
        }
    }

    /// A straight channel value times alpha, rounded: what cairo's premultiplied pixels hold.
    @inline(__always)
    static func premultiplied(_ value: UInt32, _ alpha: UInt32) -> UInt32 { (value * alpha + 127) / 255 }

    static func makeSurface(_ image: RGBAImage) -> OpaquePointer? {
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(image.width), Int32(image.height)),
              cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else { return nil }
        write(image, into: surface)
        return surface
    }
}
