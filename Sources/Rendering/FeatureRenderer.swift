import Foundation
public import Canvas
import TileMath
public import Features

/// Draws features onto a canvas through a projection, in the order given: polygons (with
/// holes) filled and outlined, lines stroked, points with a `radius` as geodesic circles
/// (round in meters at any latitude), other points as markers with their title beside.
/// Widths are CSS pixels, multiplied by the projection's scale.
public struct FeatureRenderer: Sendable {
    /// Defaults for what a feature's style leaves unset (simplestyle-spec's defaults).
    public var defaultStroke = Color(hex: "#555555")!
    public var defaultStrokeWidth = 2.0
    public var defaultFill = Color(hex: "#555555")!
    public var defaultFillOpacity = 0.6
    public var defaultMarkerColor = Color(hex: "#7e7e7e")!
    public var labelFont = Font(size: 13, weight: .bold)
    /// Images of image overlays, by the name the data gives (see `loadImages`).
    public var images: [String: RGBAImage] = [:]
    /// Edge smoothing for tiles of this layer (`fast` for dense data layers).
    public var antialias: Canvas.Antialias = .best
    /// Custom renderers by the name a feature's `renderer` property gives.
    public var renderers: [String: any OverlayRenderer] = ["shimmer": ShimmerRenderer(), "gradient": GradientPolylineRenderer(),
                                                            "hatch": HatchRenderer(), "wobbly": WobblyLineRenderer()]

    public init(images: [String: RGBAImage] = [:]) {
        self.images = images
    }

    /// Loads every image the features' overlays name, relative to the data file's folder.
    public static func loadImages(for features: [Feature], relativeTo folder: URL) throws(CanvasError) -> [String: RGBAImage] {
        var images = [String: RGBAImage]()
        for name in Set(features.compactMap { $0.imageOverlay?.image } + features.compactMap { $0.style.markerImage }) {
            let url = name.hasPrefix("/") ? URL(fileURLWithPath: name) : folder.appendingPathComponent(name)
            images[name] = try RGBAImage(contentsOf: url)
        }
        return images
    }

    /// How far beyond a canvas a feature can reach and still draw on it (marker radius plus
    /// a label), in CSS pixels: tiles include features this close so nothing is cut at an edge.
    public static let reach = 96.0

    /// How far these features can reach beyond a tile: the marker and label reach, widened
    /// to the longest label (a label is drawn whole, into every tile it crosses).
    public func reach(for features: [Feature]) -> Double {
        let titles = Set(features.compactMap { feature -> String? in
            guard feature.radius == nil, let title = feature.title, !title.isEmpty else { return nil }
            switch feature.geometry {
            case .point, .multiPoint: return title
            default: return nil
            }
        })
        guard !titles.isEmpty, let canvas = try? Canvas(width: 1, height: 1) else { return Self.reach }
        let widest = titles.map { canvas.measureText($0, style: TextStyle(font: labelFont)).width }.max() ?? 0
        return max(Self.reach, 14 + 4 + widest + 8)
    }

    public func draw(_ features: [Feature], on canvas: Canvas, projection: MapProjection) {
        for feature in features {
            if let overlay = feature.imageOverlay, let image = images[overlay.image] {
                ImageOverlayRenderer.draw(image, placement: overlay.placement, opacity: overlay.opacity, on: canvas, projection: projection)
            }
            if let name = feature.renderer, let custom = renderers[name] {
                custom.draw(feature, on: canvas, projection: projection)
                continue
            }
            guard let geometry = feature.geometry else { continue }
            draw(geometry, of: feature, on: canvas, projection: projection)
        }
    }

    func draw(_ geometry: Geometry, of feature: Feature, on canvas: Canvas, projection: MapProjection) {
        let style = feature.style, scale = projection.scale
        let stroke = (style.stroke ?? defaultStroke).withAlpha(style.strokeOpacity ?? 1)
        let strokeStyle = StrokeStyle(width: (style.strokeWidth ?? defaultStrokeWidth) * scale, cap: .round, join: .round,
                                      dash: (style.dash ?? []).map { $0 * scale })
        let fill = (style.fill ?? defaultFill).withAlpha(style.fillOpacity ?? defaultFillOpacity)
        switch geometry {
        case .point(let c):
            if let radius = feature.radius {
                // Not a number, or not above 0: no circle. Half the equator or more (1e300 m)
                // reaches every point of the Earth: the whole canvas, not a ring at the antipode.
                guard radius.isFinite || radius == .infinity, radius > 0 else { return }
                let path: Path
                if radius >= MercatorPoint.earthCircumference / 2 {
                    path = .rectangle(x: -1, y: -1, width: Double(canvas.width) + 2, height: Double(canvas.height) + 2)
                } else {
                    path = .polygon([Geodesy.circle(center: c, radius: radius, segments: 96).map(projection.point(for:))])
                }
                canvas.fill(path, with: .color(fill))
                canvas.stroke(path, with: .color(stroke), style: strokeStyle)
            } else {
                marker(at: projection.point(for: c), feature: feature, on: canvas, scale: scale)
            }
        case .multiPoint(let cs):
            for c in cs { marker(at: projection.point(for: c), feature: feature, on: canvas, scale: scale) }
        case .lineString(let cs):
            canvas.stroke(.polyline(path(cs, of: feature).map(projection.point(for:))), with: .color(stroke), style: strokeStyle)
        case .multiLineString(let lines):
            for line in lines { canvas.stroke(.polyline(path(line, of: feature).map(projection.point(for:))), with: .color(stroke), style: strokeStyle) }
        case .polygon(let rings):
            polygon(rings, fill: fill, stroke: stroke, style: strokeStyle, canvas: canvas, projection: projection)
        case .multiPolygon(let polygons):
            for rings in polygons { polygon(rings, fill: fill, stroke: stroke, style: strokeStyle, canvas: canvas, projection: projection) }
        case .geometryCollection(let parts):
            for part in parts { draw(part, of: feature, on: canvas, projection: projection) }
        }
    }

    /// A line as drawn: along great circles when the feature says `"geodesic": true`.
    func path(_ coordinates: [Coordinate], of feature: Feature) -> [Coordinate] {
        feature.properties["geodesic"] == .bool(true) ? Geodesy.geodesicLine(coordinates) : coordinates
    }

    func polygon(_ rings: [[Coordinate]], fill: Color, stroke: Color, style: StrokeStyle, canvas: Canvas, projection: MapProjection) {
        let path = Path.polygon(rings.map { $0.map(projection.point(for:)) })
        canvas.fill(path, with: .color(fill), rule: .evenOdd)  // any inner ring is a hole, whatever its winding
        canvas.stroke(path, with: .color(stroke), style: style)
    }

    /// A marker: the built-in icon its `marker-symbol` names, or a plain disc (staticmap's
    /// marker) when it names none; sized by `marker-size` (small 7, medium 10, large 14 px
    /// radius), tinted by `marker-color`, with the title to its right in a halo.
    func marker(at point: PixelPoint, feature: Feature, on canvas: Canvas, scale: Double) {
        let radius: Double
        switch feature.style.markerSize ?? .medium {
        case .small: radius = 7
        case .medium: radius = 10
        case .large: radius = 14
        }
        let color = feature.style.markerColor ?? defaultMarkerColor
        var labelAt = PixelPoint(x: point.x + (radius + 4) * scale, y: point.y)
        if let name = feature.style.markerImage, let image = images[name] {
            // A custom icon, 2.4 marker radii tall, its anchor on the point.
            let height = 2.4 * radius * scale, width = height * Double(image.width) / Double(image.height)
            let anchor = feature.style.markerAnchor ?? (0.5, 0.5)
            let origin = PixelPoint(x: point.x - anchor.x * width, y: point.y - anchor.y * height)
            canvas.draw(image, x: origin.x, y: origin.y, width: width, height: height, interpolation: .best)
            labelAt = PixelPoint(x: origin.x + width + 4 * scale, y: origin.y + height / 2)
        } else if let icon = feature.style.markerSymbol.flatMap(MarkerIcon.init(symbol:)) {
            icon.draw(on: canvas, at: point, radius: radius * scale, color: color)
            if icon == .pin { labelAt.y -= 2.4 * radius * scale }  // beside the pin's head
        } else {
            let circle = Path.circle(center: point, radius: radius * scale)
            canvas.fill(circle, with: .color(color))
            canvas.stroke(circle, with: .color(.white), style: StrokeStyle(width: 2 * scale))
        }
        if let title = feature.title, !title.isEmpty {
            var font = labelFont
            font.size *= scale
            canvas.drawText(title, at: labelAt,
                            style: TextStyle(font: font, color: Color(hex: "#222222")!, halo: Halo(color: .white, width: 2 * scale),
                                             anchor: PixelPoint(x: 0, y: 0.5)))
        }
    }
}
