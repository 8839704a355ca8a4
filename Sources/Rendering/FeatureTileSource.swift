import Foundation
public import Canvas
import TileMath
public import Features
public import TileSources

/// A layer of features as a tile source, so it stacks with other layers by z-index and
/// opacity. Each tile draws every feature within `reach` of it, so lines, circles and
/// markers that cross a tile edge are drawn on both sides and neighbouring tiles join
/// without a cut; and every label whose box crosses it, from one placement per zoom over
/// the whole layer (`labelIndex`, shared with the map's other feature layers when the map
/// gives one), so a label is whole and the same in every tile it touches.
public struct FeatureTileSource: TileSource {
    public let features: [Feature]
    public let renderer: FeatureRenderer
    public let metadata: TileSetMetadata
    public let encoding: EncodingOptions
    /// Each feature's extent, to skip those far from a tile.
    private let extents: [BoundingBox?]
    /// How far (CSS pixels) a marker can draw beyond its point: its icon.
    public let reach: Double
    /// The labels, placed once per zoom; this layer's are those of layer `labelLayer`.
    public let labelIndex: LabelIndex
    public let labelLayer: Int
    /// True for features that draw beyond their geometry by `reach` (markers and labels);
    /// lines and shapes only by half their stroke, `strokeReach`.
    private let marks: [Bool]
    /// How far the widest stroke (with a hand-drawn wobble) reaches beyond a line, in CSS pixels.
    private let strokeReach: Double

    public init(name: String, features: [Feature], renderer: FeatureRenderer = FeatureRenderer(),
                tileSize: Int = 256, encoding: EncodingOptions = .png(), labels: (index: LabelIndex, layer: Int)? = nil) {
        self.features = features
        self.renderer = renderer
        self.encoding = encoding
        reach = FeatureRenderer.reach
        labelIndex = labels?.index ?? LabelIndex(layers: [LabelIndex.Layer(features: features, renderer: renderer)])
        labelLayer = labels?.layer ?? 0
        marks = features.map { feature in
            switch feature.geometry {
            case .point, .multiPoint, .geometryCollection: return feature.radius == nil || feature.title != nil
            default: return false
            }
        }
        var widest = 0.0
        for feature in features {
            let half: Double = (feature.style.strokeWidth ?? renderer.defaultStrokeWidth) / 2
            widest = max(widest, half + (feature.renderer == nil ? 0 : 4))
        }
        strokeReach = 4 + widest
        extents = features.map { feature in
            switch feature.imageOverlay?.placement {
            case .box(let box): return box
            case .corners(let a, let b, let c, let d): return BoundingBox(covering: [a, b, c, d])
            case nil: return feature.geometry?.bounds
            }
        }
        let all = BoundingBox(covering: features.compactMap { $0.geometry?.coordinates }.flatMap { $0 })
        metadata = TileSetMetadata(name: name, format: encoding.format, bounds: nil, center: all?.center,
                                   minZoom: 0, maxZoom: 22, tileSize: tileSize)
    }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        guard let canvas = try draw(request) else { return .noTile }
        return .tile(TileData(bytes: try canvas.encoded(encoding), format: encoding.format))
    }

    /// The tile drawn but not encoded; nil when no feature reaches it.
    public func draw(_ request: TileRequest) throws(CanvasError) -> Canvas? {
        let projection = MapProjection(tile: request.tile, tileSize: metadata.tileSize, scale: Double(request.scale))
        let size = Double(metadata.tileSize * request.scale)
        let markReach = projection.bounds(width: size, height: size, margin: self.reach * Double(request.scale))
        // Lines and shapes only need their stroke's width around the tile: drawing those a
        // marker's reach away made three times the work on dense layers.
        let lineReach = projection.bounds(width: size, height: size, margin: strokeReach * Double(request.scale))
        // Indices first: copying 4,000 features per tile to filter them cost 10% of a tile.
        let nearby = features.indices.filter { i in
            guard let extent = extents[i] else { return false }
            // A circle reaches its radius beyond its centre.
            let grown = features[i].radius.map { Self.grow(extent, meters: $0) } ?? extent
            return grown.intersects(marks[i] ? markReach : lineReach)
        }
        let placement = labelIndex.placement(zoom: Double(request.tile.z), tileSize: metadata.tileSize, scale: Double(request.scale))
        // Grown by a few pixels: glyphs' ink may reach past their logical box (italics).
        let window = PixelBox(minX: 0, minY: 0, maxX: size, maxY: size).offset(x: projection.origin.x, y: projection.origin.y)
            .grown(by: 4 * Double(request.scale))
        let labels = placement.labels(intersecting: window, layer: labelLayer)
        guard !nearby.isEmpty || !labels.isEmpty else { return nil }
        let canvas = try Canvas(width: Int(size), height: Int(size))
        canvas.setAntialias(renderer.antialias)
        renderer.drawShapes(features, indices: nearby, on: canvas, projection: projection)
        renderer.drawLabels(labels, on: canvas, projection: projection)
        return canvas
    }

    /// The box grown by `meters` on every side, kept on the Earth: a radius of half the
    /// equator or more (1e300 m, infinity) reaches everywhere, and NaN reaches nothing.
    static func grow(_ box: BoundingBox, meters: Double) -> BoundingBox {
        guard meters > 0 else { return box }
        let reach = min(meters, MercatorPoint.earthCircumference / 2)
        let dLat = reach / 111_320
        let dLon = reach / (111_320 * max(0.01, cos(box.center.latitude * .pi / 180)))
        let south = max(-90, box.south - dLat), north = min(90, box.north + dLat)
        guard box.longitudeSpan + 2 * dLon < 360 else { return BoundingBox(west: -180, south: south, east: 180, north: north) }
        return BoundingBox(west: box.west - dLon, south: south, east: box.east + dLon, north: north)
    }
}
