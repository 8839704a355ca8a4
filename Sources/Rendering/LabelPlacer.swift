import Foundation
import Canvas
import TileMath
import Features

/// Places labels greedily, highest priority first, so none overlaps another or an icon.
///
/// - Every marker's icon is an obstacle (icons are always drawn: a marker is data).
/// - A marker's label tries right of its icon, then left, above, below.
/// - A named area (polygon, circle) is labelled at its centroid, then just above or below
///   it, when its drawn shape is at least half as wide as the label.
/// - A named line is labelled straight along its longest segments that hold the text
///   (rotated to the segment, never upside down).
/// - A path or area name is not repeated within `repeatDistance` of the same name.
/// - Order: priority (see `LabelKind.defaultPriority`), then layer order, then feature order.
/// - A label with no free candidate is dropped at that zoom; it comes back at zooms where
///   it fits. Collisions are found through a grid of cells (`SpatialGrid`), not by
///   comparing every pair.
struct LabelPlacer: Sendable {
    /// What a label hangs on, in map units (the world as a unit square).
    enum Anchor: Sendable {
        /// A marker's point and its icon's box around that point, CSS pixels.
        case marker(MapPoint, icon: PixelBox)
        /// An area's label point and its extent.
        case area(MapPoint, west: Double, east: Double)
        /// Each line of a path.
        case lines([[MapPoint]])
    }

    struct Entry: Sendable {
        let layer: Int
        let feature: Int
        let text: String
        let kind: LabelKind
        let priority: Int
        let anchor: Anchor
        let style: TextStyle
    }

    let entries: [Entry]
    /// Every marker's icon: its layer, its point and its box around it, CSS pixels.
    let icons: [(layer: Int, point: MapPoint, box: PixelBox)]
    /// The boxes (map units: minX west, minY north) of the filled areas of layers that cover
    /// the others (`LabelIndex.Layer.coversAreas`).
    let covers: [(layer: Int, box: PixelBox)]
    /// Each layer's zooms.
    let zooms: [ClosedRange<Int>]
    let namedFeatures: Int

    /// Space kept between labels, and between a label and an icon, CSS pixels.
    static let gap = 2.0
    /// Grid cell side, CSS pixels.
    static let cell = 64.0
    /// A path or area name is not written again closer than this to itself, CSS pixels
    /// (OpenStreetMap splits a street into many ways, each with the name).
    static let repeatDistance = 256.0
    /// Segments tried per line for a path label.
    static let segmentsPerLine = 4

    init(layers: [LabelIndex.Layer]) {
        var entries = [Entry]()
        var icons = [(layer: Int, point: MapPoint, box: PixelBox)]()
        var covers = [(layer: Int, box: PixelBox)]()
        var named = Set<[Int]>()
        for (layerIndex, layer) in layers.enumerated() {
            for (index, feature) in layer.features.enumerated() {
                if layer.coversAreas, let box = Self.coveredBox(feature) { covers.append((layerIndex, box)) }
                let markers = Self.markerPoints(feature)
                let icon = layer.renderer.iconBox(for: feature)
                for point in markers { icons.append((layerIndex, MapPoint(point), icon)) }
                guard let title = feature.title, let text = LabelText.clean(title), let geometry = feature.geometry else { continue }
                let kind: LabelKind
                var anchors = [Anchor]()
                if !markers.isEmpty {
                    kind = Self.isStation(feature.style.markerSymbol) ? .station : .poi
                    anchors = markers.map { .marker(MapPoint($0), icon: icon) }
                } else if let area = Self.area(geometry, radius: feature.radius) {
                    kind = .landmark
                    anchors = [area]
                } else if let lines = Self.lines(geometry) {
                    kind = .path
                    anchors = [.lines(lines)]
                } else {
                    continue
                }
                let priority = feature.properties["label-priority"]?.number.flatMap { $0.isFinite ? Int(exactly: $0.rounded()) : nil }
                    ?? layer.priority ?? kind.defaultPriority
                named.insert([layerIndex, index])
                for anchor in anchors {
                    entries.append(Entry(layer: layerIndex, feature: index, text: text, kind: kind, priority: priority, anchor: anchor,
                                         style: layer.renderer.labelStyle(for: kind)))
                }
            }
        }
        // Stable: equal priorities keep layer and feature order.
        self.entries = entries.enumerated().sorted { a, b in
            a.element.priority != b.element.priority ? a.element.priority > b.element.priority : a.offset < b.offset
        }.map(\.element)
        self.icons = icons
        self.covers = covers
        // Not a ClosedRange in the input: a layer made in code may have min above max (no zoom).
        zooms = layers.map { $0.minZoom <= $0.maxZoom ? $0.minZoom...$0.maxZoom : 1...0 }
        namedFeatures = named.count
    }

    /// A label's text in a font (scaled): its size is the same at every zoom.
    struct SizeKey: Hashable, Sendable {
        let text: String
        let font: Font
    }

    /// Places every label at a zoom, around `obstacles` (world pixels) as well as the icons;
    /// `sizes` keeps text sizes from one zoom to the next.
    func place(zoom: Double, tileSize: Int, scale: Double, obstacles: [PixelBox] = [], sizes: inout [SizeKey: PixelSize]) -> LabelPlacement {
        let started = ContinuousClock.now
        let world = Double(tileSize) * scale * pow(2, zoom)
        var grid = SpatialGrid(cell: Self.cell * scale)
        let shown = shownLayers(zoom: zoom)
        for box in iconBoxes(world: world, scale: scale, layers: shown) + obstacles { grid.insert(box) }
        var coverGrid = SpatialGrid(cell: Self.cell * scale)
        for cover in covers where shown[cover.layer] {
            coverGrid.insert(PixelBox(minX: cover.box.minX * world, minY: cover.box.minY * world,
                                      maxX: cover.box.maxX * world, maxY: cover.box.maxY * world))
        }
        let covering = Set(covers.map(\.layer))
        var labelGrid = SpatialGrid(cell: Self.cell * scale)
        var placed = [PlacedLabel]()
        var labelled = Set<[Int]>()
        var measurer: Canvas?
        let gap = Self.gap * scale
        // Where each path and area name is already written (a street split into many ways).
        var written = [String: [PixelPoint]]()
        let repeatDistance = Self.repeatDistance * scale
        for entry in entries where shown[entry.layer] {
            var style = entry.style
            style.font.size *= scale
            style.halo?.width *= scale
            let halo = style.halo?.width ?? 0
            let key = SizeKey(text: entry.text, font: style.font)
            let textSize: PixelSize
            if let known = sizes[key] {
                textSize = known
            } else {
                if measurer == nil { measurer = try? Canvas(width: 1, height: 1) }
                textSize = measurer?.measureText(entry.text, style: style) ?? PixelSize(width: 0, height: 0)
                sizes[key] = textSize
            }
            let size = PixelSize(width: textSize.width + 2 * halo, height: textSize.height + 2 * halo)
            guard size.width > 0, size.height > 0 else { continue }
            for (center, angle) in candidates(entry.anchor, size: size, world: world, scale: scale) {
                let box = Self.box(center: center, size: size, angle: angle)
                guard box.isValid, box.minY >= 0, box.maxY <= world, !grid.hits(box.grown(by: gap)) else { continue }
                if !covering.contains(entry.layer) && coverGrid.hits(box) { continue }
                if entry.kind == .path || entry.kind == .landmark {
                    let nearby = written[entry.text]?.contains { hypot($0.x - center.x, $0.y - center.y) < repeatDistance } ?? false
                    if nearby { continue }
                    written[entry.text, default: []].append(center)
                }
                grid.insert(box)
                labelGrid.insert(box)
                placed.append(PlacedLabel(text: entry.text, kind: entry.kind, layer: entry.layer, feature: entry.feature,
                                          center: center, angle: angle, box: box, style: style))
                labelled.insert([entry.layer, entry.feature])
                break
            }
        }
        let elapsed = ContinuousClock.now - started
        return LabelPlacement(zoom: zoom, tileSize: tileSize, scale: scale, labels: placed, namedFeatures: namedFeatures,
                              labelledFeatures: labelled.count,
                              milliseconds: elapsed.seconds * 1000,
                              grid: labelGrid)
    }

    /// Every marker's icon in world pixels (`world` pixels across), of the layers shown.
    func iconBoxes(world: Double, scale: Double, layers shown: [Bool]) -> [PixelBox] {
        icons.filter { shown[$0.layer] }.map { $0.box.scaled(by: scale).offset(x: $0.point.x * world, y: $0.point.y * world) }
    }

    /// Which layers are drawn at a zoom (the nearest whole one).
    func shownLayers(zoom: Double) -> [Bool] {
        let whole = zoom.isFinite && abs(zoom) < 1e6 ? Int(zoom.rounded()) : -1
        return zooms.map { $0.contains(whole) }
    }

    /// Where a label may go, best first: its centre (world pixels) and angle.
    func candidates(_ anchor: Anchor, size: PixelSize, world: Double, scale: Double) -> [(PixelPoint, Double)] {
        let gap = Self.gap * scale
        switch anchor {
        case .marker(let point, let iconBox):
            let icon = iconBox.scaled(by: scale).offset(x: point.x * world, y: point.y * world)
            let middle = icon.center
            return [(PixelPoint(x: icon.maxX + gap + size.width / 2, y: middle.y), 0),
                    (PixelPoint(x: icon.minX - gap - size.width / 2, y: middle.y), 0),
                    (PixelPoint(x: middle.x, y: icon.minY - gap - size.height / 2), 0),
                    (PixelPoint(x: middle.x, y: icon.maxY + gap + size.height / 2), 0)]
        case .area(let point, let west, let east):
            guard (east - west) * world >= size.width / 2 else { return [] }
            let c = PixelPoint(x: point.x * world, y: point.y * world)
            return [(c, 0), (PixelPoint(x: c.x, y: c.y - size.height), 0), (PixelPoint(x: c.x, y: c.y + size.height), 0)]
        case .lines(let lines):
            var out = [(length: Double, center: PixelPoint, angle: Double)]()
            for line in lines {
                var segments = [(length: Double, center: PixelPoint, angle: Double)]()
                for (a, b) in zip(line, line.dropFirst()) {
                    let dx = (b.x - a.x) * world, dy = (b.y - a.y) * world
                    let length = (dx * dx + dy * dy).squareRoot()
                    guard length.isFinite, length >= size.width + 2 * gap else { continue }
                    var angle = atan2(dy, dx)
                    if angle > .pi / 2 { angle -= .pi } else if angle <= -.pi / 2 { angle += .pi }  // upright
                    segments.append((length, PixelPoint(x: (a.x + b.x) / 2 * world, y: (a.y + b.y) / 2 * world), angle))
                }
                out += segments.sorted { $0.length > $1.length }.prefix(Self.segmentsPerLine)
            }
            return out.sorted { $0.length > $1.length }.map { ($0.center, $0.angle) }
        }
    }

    /// The axis-aligned box around a `size` box centred on `center` and rotated by `angle`.
    static func box(center: PixelPoint, size: PixelSize, angle: Double) -> PixelBox {
        guard angle != 0 else { return PixelBox(center: center, size: size) }
        let c = abs(cos(angle)), s = abs(sin(angle))
        return PixelBox(center: center, size: PixelSize(width: size.width * c + size.height * s, height: size.width * s + size.height * c))
    }

    static func isStation(_ symbol: String?) -> Bool {
        guard let symbol = symbol?.lowercased() else { return false }
        return MarkerIcon(symbol: symbol) == .subway || symbol.contains("rail") || symbol.contains("station")
    }

    /// The points a feature draws as markers (FeatureRenderer's rule): points without a
    /// radius, of a feature without a custom renderer.
    static func markerPoints(_ feature: Feature) -> [Coordinate] {
        guard feature.radius == nil, feature.renderer == nil, let geometry = feature.geometry else { return [] }
        func points(_ g: Geometry) -> [Coordinate] {
            switch g {
            case .point(let c): return [c]
            case .multiPoint(let cs): return cs
            case .geometryCollection(let parts): return parts.flatMap(points)
            default: return []
            }
        }
        return points(geometry).filter { $0.latitude.isFinite && $0.longitude.isFinite }
    }

    /// A named area's anchor: the centroid of its largest ring (by area), or a circle's centre.
    /// The box of a polygon filled at least half opaque (GeoJSON's default fill opacity is
    /// 0.6), map units; nil for anything else.
    static func coveredBox(_ feature: Feature) -> PixelBox? {
        guard (feature.style.fillOpacity ?? 0.6) >= 0.5, let geometry = feature.geometry, geometry.polygonRings != nil,
              let bounds = geometry.bounds else { return nil }
        // Mercator keeps the order of longitudes and latitudes: the box's corners are the corners.
        let northWest = MapPoint(Coordinate(latitude: bounds.north, longitude: bounds.west))
        let southEast = MapPoint(Coordinate(latitude: bounds.south, longitude: bounds.east))
        let box = PixelBox(minX: northWest.x, minY: northWest.y, maxX: southEast.x, maxY: southEast.y)
        return box.isValid ? box : nil
    }

    static func area(_ geometry: Geometry, radius: Double?) -> Anchor? {
        if case .point(let c) = geometry, let radius, radius.isFinite, radius > 0 {
            let box = FeatureTileSource.grow(BoundingBox(west: c.longitude, south: c.latitude, east: c.longitude, north: c.latitude), meters: radius)
            return .area(MapPoint(c), west: MapPoint(Coordinate(latitude: c.latitude, longitude: box.west)).x,
                         east: MapPoint(Coordinate(latitude: c.latitude, longitude: box.east)).x)
        }
        guard let rings = geometry.polygonRings else { return nil }
        var best: (area: Double, centroid: MapPoint, west: Double, east: Double)?
        for ring in rings where ring.count >= 3 {
            let points = ring.map(MapPoint.init)
            var area = 0.0, cx = 0.0, cy = 0.0
            for (a, b) in zip(points, points.dropFirst() + [points[0]]) {
                let cross = a.x * b.y - b.x * a.y
                area += cross
                cx += (a.x + b.x) * cross
                cy += (a.y + b.y) * cross
            }
            guard area.isFinite, abs(area) > 0 else { continue }
            let centroid = MapPoint(x: cx / (3 * area), y: cy / (3 * area))
            let xs = points.map(\.x)
            guard let west = xs.min(), let east = xs.max() else { continue }
            if abs(area) > (best?.area ?? 0) { best = (abs(area), centroid, west, east) }
        }
        return best.map { .area($0.centroid, west: $0.west, east: $0.east) }
    }

    static func lines(_ geometry: Geometry) -> [[MapPoint]]? {
        switch geometry {
        case .lineString(let cs): return [cs.map(MapPoint.init)]
        case .multiLineString(let lines): return lines.map { $0.map(MapPoint.init) }
        default: return nil
        }
    }
}
