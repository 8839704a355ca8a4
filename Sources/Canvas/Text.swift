import Foundation
public import TileMath
internal import CCairo
internal import CPango

/// A font by family name (resolved by fontconfig; DejaVu Sans is TileKit's default,
/// from Debian's fonts-dejavu-core), size in pixels, weight and slant.
public struct Font: Hashable, Sendable {
    public enum Weight: Hashable, Sendable { case light, regular, bold }

    public var family: String
    /// Size in pixels (the em height), not points.
    public var size: Double
    public var weight: Weight
    public var italic: Bool

    public init(family: String = "DejaVu Sans", size: Double = 12, weight: Weight = .regular, italic: Bool = false) {
        self.family = family
        self.size = size
        self.weight = weight
        self.italic = italic
    }
}

/// An outline drawn around text so it reads on any background (map labels).
public struct Halo: Hashable, Sendable {
    public var color: Color
    /// Width in pixels outside the glyphs.
    public var width: Double
    public init(color: Color = .white, width: Double = 2) {
        self.color = color
        self.width = width
    }
}

/// How text is placed, drawn and wrapped.
public struct TextStyle: Hashable, Sendable {
    public enum Alignment: Hashable, Sendable { case left, center, right }

    public var font: Font
    public var color: Color
    public var halo: Halo?
    /// The point of the text's box that lands on the given position, as fractions of its
    /// width and height: (0.5, 0.5) centres it, (0, 0) puts its top-left corner there,
    /// (0.5, 1) its bottom-centre (a label above a marker).
    public var anchor: PixelPoint
    /// Wrap lines longer than this many pixels; nil for one line per `\n`.
    public var maxWidth: Double?
    public var alignment: Alignment

    public init(font: Font = Font(), color: Color = .black, halo: Halo? = nil,
                anchor: PixelPoint = PixelPoint(x: 0.5, y: 0.5), maxWidth: Double? = nil, alignment: Alignment = .center) {
        self.font = font
        self.color = color
        self.halo = halo
        self.anchor = anchor
        self.maxWidth = maxWidth
        self.alignment = alignment
    }
}

extension Canvas {
    /// Draws text (Pango: shaping, bidi, fallback fonts) with its anchor at `point`.
    /// Returns the box the text occupies on the canvas, halo excluded.
    @discardableResult
    public func drawText(_ text: String, at point: PixelPoint, style: TextStyle) -> (origin: PixelPoint, size: PixelSize) {
        guard !text.isEmpty else { return (point, PixelSize(width: 0, height: 0)) }
        let layout = makeLayout(text, style: style)
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(layout, &ink, &logical)
        let size = PixelSize(width: Double(logical.width), height: Double(logical.height))
        let origin = PixelPoint(x: point.x - size.width * style.anchor.x - Double(logical.x),
                                y: point.y - size.height * style.anchor.y - Double(logical.y))
        cairo_save(context)
        defer { cairo_restore(context) }
        if let halo = style.halo, halo.width > 0 {
            cairo_new_path(context)
            cairo_move_to(context, origin.x, origin.y)
            pango_cairo_layout_path(context, layout)
            cairo_set_source_rgba(context, halo.color.red, halo.color.green, halo.color.blue, halo.color.alpha)
            cairo_set_line_width(context, halo.width * 2)  // half of the stroke lies inside the glyph
            cairo_set_line_join(context, CAIRO_LINE_JOIN_ROUND)
            cairo_stroke(context)
        }
        cairo_new_path(context)
        cairo_move_to(context, origin.x, origin.y)
        cairo_set_source_rgba(context, style.color.red, style.color.green, style.color.blue, style.color.alpha)
        pango_cairo_show_layout(context, layout)
        return (origin, size)
    }

    /// The size of the text's box in pixels, as `drawText` would lay it out.
    public func measureText(_ text: String, style: TextStyle) -> PixelSize {
        guard !text.isEmpty else { return PixelSize(width: 0, height: 0) }
        let layout = makeLayout(text, style: style)
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        var logical = PangoRectangle()
        pango_layout_get_pixel_extents(layout, nil, &logical)
        return PixelSize(width: Double(logical.width), height: Double(logical.height))
    }

    private func makeLayout(_ text: String, style: TextStyle) -> OpaquePointer {
        let layout = pango_cairo_create_layout(context)!
        // No hinting: glyph shapes and advances then scale smoothly, so a label looks the
        // same on a @2x tile and in neighbouring tiles rendered apart.
        let options = cairo_font_options_create()
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        pango_cairo_context_set_font_options(pango_layout_get_context(layout), options)
        cairo_font_options_destroy(options)
        pango_layout_context_changed(layout)

        let description = pango_font_description_new()
        pango_font_description_set_family(description, style.font.family)
        pango_font_description_set_absolute_size(description, style.font.size * Double(PANGO_SCALE))
        pango_font_description_set_weight(description, style.font.weight == .bold ? PANGO_WEIGHT_BOLD
                                          : style.font.weight == .light ? PANGO_WEIGHT_LIGHT : PANGO_WEIGHT_NORMAL)
        pango_font_description_set_style(description, style.font.italic ? PANGO_STYLE_ITALIC : PANGO_STYLE_NORMAL)
        pango_layout_set_font_description(layout, description)
        pango_font_description_free(description)

        pango_layout_set_text(layout, text, -1)
        if let maxWidth = style.maxWidth {
            pango_layout_set_width(layout, Int32(maxWidth * Double(PANGO_SCALE)))
            pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
        }
        pango_layout_set_alignment(layout, style.alignment == .left ? PANGO_ALIGN_LEFT
                                   : style.alignment == .right ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_CENTER)
        return layout
    }
}
