import Foundation
public import Canvas
import TileMath
public import Features

/// Draws features onto a canvas through a projection: polygons (with holes) filled and
/// outlined, lines stroked, points with a `radius` as geodesic circles (round in meters at
/// any latitude), in the order given; then other points as markers, in the order given, above
/// them all; titles become labels (see `LabelIndex`), drawn over every shape.
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

    /// How far beyond a canvas a marker's icon can reach and still draw on it, in CSS
    /// pixels: tiles include markers this close so no icon is cut at an edge. (Labels are
    /// placed apart, by `LabelIndex`, and drawn into every tile their box crosses.)
    public static let reach = 96.0

    /// Draws the features, then their labels placed at the projection's zoom over these
    /// features alone (a snapshot's way; tiles share one `LabelIndex` instead).
    public func draw(_ features: [Feature], on canvas: Canvas, projection: MapProjection) {
        let placement = LabelIndex(layers: [LabelIndex.Layer(features: features, renderer: self)])
            .placement(zoom: projection.zoom, tileSize: projection.tileSize, scale: projection.scale)
        let view = PixelBox(minX: 0, minY: 0, maxX: Double(canvas.width), maxY: Double(canvas.height))
            .offset(x: projection.origin.x, y: projection.origin.y).grown(by: 4 * projection.scale)
        draw(features, on: canvas, projection: projection, labels: placement.labels(intersecting: view))
    }

    /// Draws the features (overlays in order, then markers in order), then the labels given
    /// (placed by a `LabelIndex` at the projection's zoom, tile size and scale) over them all.
    public func draw(_ features: [Feature], on canvas: Canvas, projection: MapProjection, labels: [PlacedLabel]) {
        drawShapes(features, on: canvas, projection: projection)
        drawLabels(labels, on: canvas, projection: projection)
    }

    /// Draws placed labels: world pixels made canvas pixels by the projection's origin.
    public func drawLabels(_ labels: [PlacedLabel], on canvas: Canvas, projection: MapProjection) {
        for label in labels {
            let center = PixelPoint(x: label.center.x - projection.origin.x, y: label.center.y - projection.origin.y)
            var style = label.style
            style.anchor = PixelPoint(x: 0.5, y: 0.5)
            if label.angle == 0 {
                canvas.drawText(label.text, at: center, style: style)
            } else {
                canvas.withTransform(AffineTransform.rotation(label.angle).concatenating(.translation(x: center.x, y: center.y))) {
                    _ = canvas.drawText(label.text, at: PixelPoint(x: 0, y: 0), style: style)
                }
            }
        }
    }

    /// How a label of a kind is drawn, in CSS pixels (the placement scales it): markers'
    /// names in `labelFont`, areas' in italics, paths' smaller.
    public func labelStyle(for kind: LabelKind) -> TextStyle {
        let halo = Halo(color: .white, width: 2)
        switch kind {
        case .poi, .station:
            return TextStyle(font: labelFont, color: Color(hex: "#222222")!, halo: halo)
        case .landmark:
            return TextStyle(font: Font(size: labelFont.size - 1, weight: .regular, italic: true), color: Color(hex: "#1f3b57")!, halo: halo)
        case .path:
            return TextStyle(font: Font(size: labelFont.size - 2), color: Color(hex: "#4a3520")!, halo: Halo(color: .white, width: 1.5))
        }
    }

    /// The box a feature's marker icon covers around its point, CSS pixels (as `marker`
    /// draws it; a pin's head only, which its label sits beside).
    public func iconBox(for feature: Feature) -> PixelBox {
        let radius = Self.markerRadiusPixels(feature)
        if let name = feature.style.markerImage, let image = images[name], image.height > 0 {
            let height = 2.4 * radius, width = height * Double(image.width) / Double(image.height)
            let anchor = feature.style.markerAnchor ?? (0.5, 0.5)
            return PixelBox(minX: -anchor.x * width, minY: -anchor.y * height, maxX: (1 - anchor.x) * width, maxY: (1 - anchor.y) * height)
        }
        if feature.style.markerSymbol.flatMap(MarkerIcon.init(symbol:)) == .pin {
            return PixelBox(minX: -radius, minY: -3.4 * radius, maxX: radius, maxY: -1.4 * radius)
        }
        return PixelBox(minX: -radius, minY: -radius, maxX: radius, maxY: radius)
    }

    static func markerRadiusPixels(_ feature: Feature) -> Double {
        switch feature.style.markerSize ?? .medium {
        case .small: return 7
        case .medium: return 10
        case .large: return 14
        }
    }

    func drawShapes(_ features: [Feature], on canvas: Canvas, projection: MapProjection) {
        drawShapes(features, indices: features.indices, on: canvas, projection: projection)
    }

    /// The features at `indices`, read in place: a tile draws a few hundred of thousands, and
    /// copying each (its properties and style) showed in a dense tile's profile (about 2%).
    /// Overlays first (lines, areas, circles, image overlays, custom renderers), in order, then
    /// the markers above them all, in order: MapKit draws annotations above overlays and
    /// Leaflet its marker pane above its overlay pane, so a route never crosses a pin.
    func drawShapes(_ features: [Feature], indices: some Sequence<Int>, on canvas: Canvas, projection: MapProjection) {
        var withMarkers = [Int]()
        for index in indices {
            if let overlay = features[index].imageOverlay, let image = images[overlay.image] {
                ImageOverlayRenderer.draw(image, placement: overlay.placement, opacity: overlay.opacity, on: canvas, projection: projection)
            }
            if let name = features[index].renderer, let custom = renderers[name] {
                custom.draw(features[index], on: canvas, projection: projection)
                continue
            }
            guard let geometry = features[index].geometry else { continue }
            if draw(geometry, of: features[index], on: canvas, projection: projection, layer: .overlays) { withMarkers.append(index) }
        }
        for index in withMarkers {
            guard let geometry = features[index].geometry else { continue }
            draw(geometry, of: features[index], on: canvas, projection: projection, layer: .markers)
        }
    }

    /// What one pass of `drawShapes` draws of a geometry.
    enum Layer { case overlays, markers }

    /// Draws the parts of a geometry in `layer`; true when it has a marker (drawn or not).
    @discardableResult
    func draw(_ geometry: Geometry, of feature: Feature, on canvas: Canvas, projection: MapProjection, layer: Layer) -> Bool {
        switch geometry {
        case .point(let c) where feature.radius == nil:
            if layer == .markers { marker(at: projection.point(for: c), feature: feature, on: canvas, scale: projection.scale) }
            return true
        case .multiPoint(let cs):
            if layer == .markers {
                for c in cs { marker(at: projection.point(for: c), feature: feature, on: canvas, scale: projection.scale) }
            }
            return !cs.isEmpty
        case .geometryCollection(let parts):
            var hasMarker = false
            for part in parts {
                if draw(part, of: feature, on: canvas, projection: projection, layer: layer) { hasMarker = true }
            }
            return hasMarker
        default:
            if layer == .overlays { drawOverlay(geometry, of: feature, on: canvas, projection: projection) }
            return false
        }
    }

    /// Lines, areas, and circles (a point with a radius in meters).
    private func drawOverlay(_ geometry: Geometry, of feature: Feature, on canvas: Canvas, projection: MapProjection) {
        let style = feature.style, scale = projection.scale
        let stroke = (style.stroke ?? defaultStroke).withAlpha(style.strokeOpacity ?? 1)
        let strokeStyle = StrokeStyle(width: (style.strokeWidth ?? defaultStrokeWidth) * scale, cap: .round, join: .round,
                                      dash: (style.dash ?? []).map { $0 * scale })
        let fill = (style.fill ?? defaultFill).withAlpha(style.fillOpacity ?? defaultFillOpacity)
        switch geometry {
        case .point(let c):
            // Not a number, or not above 0: no circle. Half the equator or more (1e300 m)
            // reaches every point of the Earth: the whole canvas, not a ring at the antipode.
            guard let radius = feature.radius, radius.isFinite || radius == .infinity, radius > 0 else { return }
            let path: Path
            if radius >= MercatorPoint.earthCircumference / 2 {
                path = .rectangle(x: -1, y: -1, width: Double(canvas.width) + 2, height: Double(canvas.height) + 2)
            } else {
                path = .polygon([Geodesy.circle(center: c, radius: radius, segments: 96).map(projection.point(for:))])
            }
            canvas.fill(path, with: .color(fill))
            canvas.stroke(path, with: .color(stroke), style: strokeStyle)
        case .lineString(let cs):
            canvas.stroke(.polyline(path(cs, of: feature).map(projection.point(for:))), with: .color(stroke), style: strokeStyle)
        case .multiLineString(let lines):
            for line in lines { canvas.stroke(.polyline(path(line, of: feature).map(projection.point(for:))), with: .color(stroke), style: strokeStyle) }
        case .polygon(let rings):
            polygon(rings, fill: fill, stroke: stroke, style: strokeStyle, canvas: canvas, projection: projection)
        case .multiPolygon(let polygons):
            for rings in polygons { polygon(rings, fill: fill, stroke: stroke, style: strokeStyle, canvas: canvas, projection: projection) }
        case .multiPoint, .geometryCollection:
            break  // markers and parts: `draw`
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
    /// radius), tinted by `marker-color`. Its title is a label, placed by `LabelIndex`.
    func marker(at point: PixelPoint, feature: Feature, on canvas: Canvas, scale: Double) {
        let radius = Self.markerRadiusPixels(feature)
        let color = feature.style.markerColor ?? defaultMarkerColor
        if let name = feature.style.markerImage, let image = images[name] {
            // A custom icon, 2.4 marker radii tall, its anchor on the point.
            let height = 2.4 * radius * scale, width = height * Double(image.width) / Double(image.height)
            let anchor = feature.style.markerAnchor ?? (0.5, 0.5)
            let origin = PixelPoint(x: point.x - anchor.x * width, y: point.y - anchor.y * height)
            canvas.draw(image, x: origin.x, y: origin.y, width: width, height: height, interpolation: .best)
        } else if let icon = feature.style.markerSymbol.flatMap(MarkerIcon.init(symbol:)) {
            icon.draw(on: canvas, at: point, radiusPixels: radius * scale, color: color)
        } else {
            let circle = Path.circle(center: point, radius: radius * scale)
            canvas.fill(circle, with: .color(color))
            // The white ring filled, not stroked: see Path.ring (through cairo, a marker took
            // twice as long).
            canvas.fill(.ring(center: point, radius: radius * scale, width: 2 * scale), with: .color(.white), rule: .evenOdd)
        }
    }
}
