import Foundation
public import TileMath

/// A 2-D affine transform mapping (x, y) to (a·x + c·y + tx, b·x + d·y + ty), as
/// CGAffineTransform and cairo_matrix_t define it.
public struct AffineTransform: Hashable, Sendable {
    public var a, b, c, d, tx, ty: Double

    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.tx = tx; self.ty = ty
    }

    public static let identity = AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)

    public static func translation(x: Double, y: Double) -> AffineTransform {
        AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: x, ty: y)
    }

    public static func scale(x: Double, y: Double) -> AffineTransform {
        AffineTransform(a: x, b: 0, c: 0, d: y, tx: 0, ty: 0)
    }

    /// Rotation by `radians`, clockwise on screen (y down).
    public static func rotation(_ radians: Double) -> AffineTransform {
        AffineTransform(a: cos(radians), b: sin(radians), c: -sin(radians), d: cos(radians), tx: 0, ty: 0)
    }

    /// The transform that maps three source points onto three destination points (solving
    /// the 6 unknowns); nil when the source points are collinear. Use it to pin an image by
    /// three of its corners.
    public init?(mapping source: (PixelPoint, PixelPoint, PixelPoint), to destination: (PixelPoint, PixelPoint, PixelPoint)) {
        let (p0, p1, p2) = source, (q0, q1, q2) = destination
        let det = (p1.x - p0.x) * (p2.y - p0.y) - (p2.x - p0.x) * (p1.y - p0.y)
        guard abs(det) > 1e-12 else { return nil }
        // Solve [p1-p0, p2-p0] M = [q1-q0, q2-q0] for the linear part, then the offset.
        let ux = p1.x - p0.x, uy = p1.y - p0.y, vx = p2.x - p0.x, vy = p2.y - p0.y
        let a = ((q1.x - q0.x) * vy - (q2.x - q0.x) * uy) / det
        let c = ((q2.x - q0.x) * ux - (q1.x - q0.x) * vx) / det
        let b = ((q1.y - q0.y) * vy - (q2.y - q0.y) * uy) / det
        let d = ((q2.y - q0.y) * ux - (q1.y - q0.y) * vx) / det
        self.init(a: a, b: b, c: c, d: d, tx: q0.x - a * p0.x - c * p0.y, ty: q0.y - b * p0.x - d * p0.y)
    }

    /// First this transform, then `next`.
    public func concatenating(_ next: AffineTransform) -> AffineTransform {
        AffineTransform(a: a * next.a + b * next.c, b: a * next.b + b * next.d,
                        c: c * next.a + d * next.c, d: c * next.b + d * next.d,
                        tx: tx * next.a + ty * next.c + next.tx, ty: tx * next.b + ty * next.d + next.ty)
    }

    public var inverted: AffineTransform? {
        let det = a * d - b * c
        guard abs(det) > 1e-15 else { return nil }
        return AffineTransform(a: d / det, b: -b / det, c: -c / det, d: a / det,
                               tx: (c * ty - d * tx) / det, ty: (b * tx - a * ty) / det)
    }

    public func apply(_ point: PixelPoint) -> PixelPoint {
        PixelPoint(x: a * point.x + c * point.y + tx, y: b * point.x + d * point.y + ty)
    }
}
