public import TileMath

/// What fills or strokes a path.
public enum Paint: Hashable, Sendable {
    case color(Color)
    /// Colour changes along the line from `start` to `end`.
    case linearGradient(start: PixelPoint, end: PixelPoint, stops: [GradientStop], extend: GradientExtend = .pad)
    /// Colour changes from the circle (`startCenter`, `startRadius`) to (`endCenter`, `endRadius`).
    case radialGradient(startCenter: PixelPoint, startRadius: Double, endCenter: PixelPoint, endRadius: Double,
                        stops: [GradientStop], extend: GradientExtend = .pad)
}

/// A colour at an offset in [0, 1] along a gradient.
public struct GradientStop: Hashable, Sendable {
    public var offset: Double
    public var color: Color
    public init(_ offset: Double, _ color: Color) {
        self.offset = offset
        self.color = color
    }
}

/// What a gradient does beyond its ends: keep the end colours, repeat, or mirror.
public enum GradientExtend: Hashable, Sendable {
    case pad, `repeat`, reflect
}

/// How a path's outline is drawn.
public struct StrokeStyle: Hashable, Sendable {
    public enum Cap: Hashable, Sendable { case butt, round, square }
    public enum Join: Hashable, Sendable { case miter, round, bevel }

    /// Line width in pixels.
    public var width: Double
    public var cap: Cap
    public var join: Join
    public var miterLimit: Double
    /// Alternating on and off lengths in pixels; empty for a solid line.
    public var dash: [Double]
    public var dashPhase: Double

    public init(width: Double = 1, cap: Cap = .butt, join: Join = .miter, miterLimit: Double = 10,
                dash: [Double] = [], dashPhase: Double = 0) {
        self.width = width
        self.cap = cap
        self.join = join
        self.miterLimit = miterLimit
        self.dash = dash
        self.dashPhase = dashPhase
    }
}

/// How an image is resampled when drawn scaled or rotated.
public enum Interpolation: Hashable, Sendable {
    case nearest, bilinear, best
}
