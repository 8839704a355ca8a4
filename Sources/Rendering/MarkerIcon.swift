import Foundation
public import Canvas
public import TileMath

/// TileKit's built-in marker icons, drawn as vectors so they are crisp at any scale and
/// tinted by the marker's colour: a coloured disc with a white glyph (a badge), except
/// `pin`, a teardrop whose tip is the anchor.
public enum MarkerIcon: String, CaseIterable, Sendable {
    case pin, star, ride, food, firstAid, hero, subway, monster, treasure, store

    /// The icon a `marker-symbol` (simplestyle/maki names, the MapKit tutorial's plist
    /// types 0-3) asks for; nil for a symbol TileKit does not draw.
    public init?(symbol: String) {
        switch symbol.lowercased().replacingOccurrences(of: "_", with: "-") {
        case "pin", "marker": self = .pin
        case "star", "misc", "0": self = .star
        case "ride", "amusement-park", "attraction", "1": self = .ride
        case "food", "restaurant", "fast-food", "2": self = .food
        case "firstaid", "first-aid", "hospital", "doctor", "3": self = .firstAid
        case "hero", "person", "player": self = .hero
        case "subway", "rail-metro", "train", "warp": self = .subway
        case "monster", "goblin": self = .monster
        case "treasure", "chest": self = .treasure
        case "store", "shop", "grocery": self = .store
        default: return nil
        }
    }

    /// Draws the icon with its anchor at `point`; `radiusPixels` is the badge's radius.
    public func draw(on canvas: Canvas, at point: PixelPoint, radiusPixels r: Double, color: Color) {
        let white = Paint.color(.white)
        if self == .pin {
            // A teardrop: a circle whose two tangents meet at the tip, 2.4 radii below its centre.
            let centre = PixelPoint(x: point.x, y: point.y - 2.4 * r)
            var path = Path()
            let angle = asin(1 / 2.4)
            path.move(to: point)
            path.arc(center: centre, radius: r, startAngle: .pi / 2 + angle, endAngle: .pi / 2 - angle + 2 * .pi)
            path.close()
            canvas.fill(path, with: .color(color))
            canvas.stroke(path, with: white, style: StrokeStyle(width: r * 0.18, join: .round))  // a miter would spike past the tip
            canvas.fill(.circle(center: centre, radius: r * 0.38), with: white)
            return
        }
        let disc = Path.circle(center: point, radius: r)
        canvas.fill(disc, with: .color(color))
        canvas.fill(.ring(center: point, radius: r, width: r * 0.16), with: white, rule: .evenOdd)  // see Path.ring
        // The glyph is drawn in a unit box [-1, 1]² scaled to 0.62 of the badge.
        let s = r * 0.62
        func p(_ x: Double, _ y: Double) -> PixelPoint { PixelPoint(x: point.x + x * s, y: point.y + y * s) }
        func poly(_ points: [(Double, Double)]) -> Path { .polygon([points.map { p($0.0, $0.1) }]) }
        let line = StrokeStyle(width: s * 0.22, cap: .round, join: .round)
        switch self {
        case .star:
            var points = [(Double, Double)]()
            for i in 0..<10 {
                let a = -Double.pi / 2 + Double(i) * .pi / 5
                let radius = i % 2 == 0 ? 1.0 : 0.42
                points.append((cos(a) * radius, sin(a) * radius + 0.08))
            }
            canvas.fill(poly(points), with: white)
        case .ride:
            // A coaster track with a loop.
            var track = Path()
            track.move(to: p(-1, 0.7))
            track.curve(to: p(0, 0.1), control1: p(-0.5, 0.7), control2: p(-0.4, 0.1))
            track.arc(center: p(0, -0.3), radius: 0.4 * s, startAngle: .pi / 2, endAngle: .pi / 2 + 2 * .pi)
            track.curve(to: p(1, 0.7), control1: p(0.4, 0.1), control2: p(0.5, 0.7))
            canvas.stroke(track, with: white, style: line)
        case .food:
            // Fork and knife.
            canvas.stroke(.polyline([p(-0.45, -0.9), p(-0.45, 0.9)]), with: white, style: line)
            for x in [-0.75, -0.45, -0.15] { canvas.stroke(.polyline([p(x, -0.9), p(x, -0.35)]), with: white, style: StrokeStyle(width: s * 0.14, cap: .round)) }
            canvas.stroke(.polyline([p(-0.75, -0.35), p(-0.15, -0.35)]), with: white, style: StrokeStyle(width: s * 0.14, cap: .round))
            canvas.fill(poly([(0.35, -0.95), (0.75, -0.6), (0.75, 0.05), (0.5, 0.05)]), with: white)
            canvas.stroke(.polyline([p(0.55, 0), p(0.55, 0.9)]), with: white, style: line)
        case .firstAid:
            canvas.fill(poly([(-0.28, -0.85), (0.28, -0.85), (0.28, -0.28), (0.85, -0.28), (0.85, 0.28), (0.28, 0.28), (0.28, 0.85),
                              (-0.28, 0.85), (-0.28, 0.28), (-0.85, 0.28), (-0.85, -0.28), (-0.28, -0.28)]), with: white)
        case .hero:
            canvas.fill(.circle(center: p(0, -0.55), radius: 0.32 * s), with: white)
            var body = Path()
            body.move(to: p(-0.7, 0.95))
            body.curve(to: p(0.7, 0.95), control1: p(-0.7, -0.35), control2: p(0.7, -0.35))
            body.close()
            canvas.fill(body, with: white)
        case .subway:
            var car = Path.rectangle(x: point.x - 0.62 * s, y: point.y - 0.9 * s, width: 1.24 * s, height: 1.45 * s)
            car.append(.rectangle(x: point.x - 0.45 * s, y: point.y - 0.7 * s, width: 0.9 * s, height: 0.5 * s))  // window
            canvas.fill(car, with: white, rule: .evenOdd)
            canvas.fill(.circle(center: p(-0.35, 0.3), radius: 0.11 * s), with: .color(color))
            canvas.fill(.circle(center: p(0.35, 0.3), radius: 0.11 * s), with: .color(color))
            canvas.stroke(.polyline([p(-0.4, 0.6), p(-0.7, 0.95)]), with: white, style: line)
            canvas.stroke(.polyline([p(0.4, 0.6), p(0.7, 0.95)]), with: white, style: line)
        case .monster:
            var blob = Path()
            blob.move(to: p(-0.8, 0.9))
            blob.line(to: p(-0.8, -0.2))
            blob.line(to: p(-0.95, -0.95))
            blob.line(to: p(-0.45, -0.6))
            blob.curve(to: p(0.45, -0.6), control1: p(-0.2, -0.8), control2: p(0.2, -0.8))
            blob.line(to: p(0.95, -0.95))
            blob.line(to: p(0.8, -0.2))
            blob.line(to: p(0.8, 0.9))
            blob.line(to: p(0.4, 0.65)); blob.line(to: p(0, 0.9)); blob.line(to: p(-0.4, 0.65))
            blob.close()
            canvas.fill(blob, with: white)
            canvas.fill(.circle(center: p(-0.32, -0.1), radius: 0.16 * s), with: .color(color))
            canvas.fill(.circle(center: p(0.32, -0.1), radius: 0.16 * s), with: .color(color))
        case .treasure:
            canvas.fill(poly([(-0.9, -0.1), (0.9, -0.1), (0.9, 0.8), (-0.9, 0.8)]), with: white)
            var lid = Path()
            lid.move(to: p(-0.9, -0.2))
            lid.curve(to: p(0.9, -0.2), control1: p(-0.9, -0.95), control2: p(0.9, -0.95))
            lid.close()
            canvas.fill(lid, with: white)
            canvas.fill(poly([(-0.15, -0.25), (0.15, -0.25), (0.15, 0.25), (-0.15, 0.25)]), with: .color(color))
        case .store:
            // An awning over a shop front with a door.
            canvas.fill(poly([(-0.95, -0.4), (-0.75, -0.9), (0.75, -0.9), (0.95, -0.4)]), with: white)
            var front = Path.rectangle(x: point.x - 0.75 * s, y: point.y - 0.3 * s, width: 1.5 * s, height: 1.2 * s)
            front.append(.rectangle(x: point.x - 0.2 * s, y: point.y + 0.2 * s, width: 0.4 * s, height: 0.7 * s))
            canvas.fill(front, with: white, rule: .evenOdd)
        case .pin:
            break
        }
    }
}
