import Foundation
public import Canvas
public import TileMath
public import Features
public import TileSources

/// Where a snapshot is: MKMapSnapshotter's options, with staticmap's "fit the overlays".
public enum SnapshotRegion: Hashable, Sendable {
    /// A centre and a (possibly fractional) zoom.
    case center(Coordinate, zoom: Double)
    /// A centre and the span in degrees to show at least.
    case span(center: Coordinate, longitudeDelta: Double, latitudeDelta: Double)
    /// A box to show whole (it may cross the antimeridian).
    case box(BoundingBox)
    /// Whatever the features cover, with `padding` pixels on every side.
    case fit(padding: Double)
}

/// How to take a snapshot.
public struct SnapshotOptions: Sendable {
    public var region: SnapshotRegion
    /// Size in CSS pixels; the image is `width × scale` by `height × scale`.
    public var width: Int
    public var height: Int
    public var scale: Int
    /// The base map; nil for a plain background.
    public var base: TileLayer?
    public var background: Color
    public var features: [Feature]
    /// Drawn in the bottom-right corner; nil for none.
    public var attribution: String?
    public var maxZoom: Double
    /// Images of the features' image overlays, by name.
    public var images: [String: RGBAImage] = [:]
    /// Whose labels to report when there is no `base` to draw (a static image's `.json`
    /// twin: where the map's labels would be, without drawing its tiles).
    public var reportedBaseLabels: (any LabelledTileSource)?
    /// False for the geometry alone (a static image's `.json` twin): no canvas of the image's
    /// size is made and nothing is drawn, so the report costs only the label placement;
    /// `Snapshot.image` is then 1x1.
    public var drawsImage = true

    public init(region: SnapshotRegion, width: Int, height: Int, scale: Int = 1, base: TileLayer? = nil,
                background: Color = Color(hex: "#f2efe9")!, features: [Feature] = [], attribution: String? = nil, maxZoom: Double = 19) {
        self.region = region
        self.width = width
        self.height = height
        self.scale = scale
        self.base = base
        self.background = background
        self.features = features
        self.attribution = attribution
        self.maxZoom = maxZoom
    }
}

/// Where everything in a snapshot landed: MKMapSnapshotter.Snapshot's `point(for:)`.
public struct SnapshotGeometry: Hashable, Sendable {
    public let center: Coordinate
    public let zoom: Double
    public let width: Int
    public let height: Int
    public let scale: Int
    let projection: MapProjection

    /// The box the image shows.
    public var bounds: BoundingBox { cssProjection.bounds(width: Double(width), height: Double(height)) }

    /// Where a coordinate lands, in CSS pixels from the top-left corner.
    public func point(for coordinate: Coordinate) -> PixelPoint { cssProjection.point(for: coordinate) }
    public func coordinate(for point: PixelPoint) -> Coordinate { cssProjection.coordinate(for: point) }

    private var cssProjection: MapProjection {
        MapProjection(zoom: zoom, tileSize: projection.tileSize, scale: 1,
                      origin: PixelPoint(x: projection.origin.x / Double(scale), y: projection.origin.y / Double(scale)))
    }
}

/// A marker as it landed in a snapshot, with what a callout shows (MKAnnotation's title and
/// subtitle), so a caller can put clickable callouts over the image.
public struct PlacedMarker: Hashable, Sendable {
    public let coordinate: Coordinate
    /// CSS pixels from the image's top-left corner.
    public let point: PixelPoint
    public let title: String?
    public let subtitle: String?
    public let symbol: String?
}

public struct Snapshot: Sendable {
    public let image: RGBAImage
    public let geometry: SnapshotGeometry
    /// Every marker drawn (points without a radius, each point of a multi-point), in drawing order.
    public let markers: [PlacedMarker]
    /// Every label drawn on the image (the features' own; a map base's are in its tiles).
    public var labels: [SnapshotLabel] = []
    /// The features' named count and how many got a label at this zoom, over the whole set.
    public var labelCounts = LabelCounts(named: 0, labelled: 0)
    /// Base tiles that could not be had now (the upstream stalled, failed or was unreachable):
    /// the image has a gap for each. `tilekit snapshot` writes the image and exits 75.
    public var unavailableTiles = 0
    /// Base tiles under the image, fetched or not.
    public var baseTileCount = 0

    /// Where it is, as JSON: centre, zoom, scale, size, bbox, and every marker's pixel
    /// (CSS pixels) with its title and subtitle.
    public var geometryJSON: Data { geometryJSON(markers: true) }

    /// The same without the markers (short enough for an HTTP header).
    public func geometryJSON(markers withMarkers: Bool) -> Data {
        SnapshotGeometryReport(self, markers: withMarkers).data
    }
}

public enum SnapshotError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidSize(width: Int, height: Int)
    /// `width x height` CSS pixels at `scale` is more than `limit` device pixels in all.
    case tooManyPixels(width: Int, height: Int, scale: Int, limit: Int)
    /// A centre, zoom, span, box or padding that is not a number or out of its range.
    case invalidRegion(String)
    case nothingToFit

    public var description: String {
        switch self {
        case .invalidSize(let w, let h): return "snapshot size \(w)x\(h) is out of range (1-4096 per side)"
        case .tooManyPixels(let w, let h, let scale, let limit):
            return "snapshot size \(w)x\(h)@\(scale)x is \(w * scale)x\(h * scale) pixels, more than \(limit) in all (4096x4096@2x)"
        case .invalidRegion(let text): return text
        case .nothingToFit: return "nothing to fit: give a centre and zoom, a box, or features"
        }
    }
}

/// Renders static map images: base tiles, then features, then the attribution.
public enum Snapshotter {
    /// The most device pixels (width x height x scale²) of one snapshot: 4096 x 4096 at @2x,
    /// a 256 MiB canvas. Each side is 1-4096 CSS pixels and the scale 1-4.
    public static let maxDevicePixels = 4096 * 4096 * 4

    public static func render(_ options: SnapshotOptions) async throws -> Snapshot {
        guard (1...4096).contains(options.width), (1...4096).contains(options.height), (1...4).contains(options.scale) else {
            throw SnapshotError.invalidSize(width: options.width, height: options.height)
        }
        // Within the ranges above nothing overflows: at most 4096 * 4096 * 16.
        guard options.width * options.height * options.scale * options.scale <= maxDevicePixels else {
            throw SnapshotError.tooManyPixels(width: options.width, height: options.height, scale: options.scale, limit: maxDevicePixels)
        }
        let (center, zoom) = try view(options)
        let scale = Double(options.scale)
        let tileSize = options.base?.tileSize ?? 256
        let world = MapPoint(center)
        let worldSize = Double(tileSize) * scale * pow(2, zoom)
        // Whole pixels: tiles then land 1:1, and every point within half a pixel of where
        // Web Mercator puts it.
        let origin = PixelPoint(x: (world.x * worldSize - Double(options.width) * scale / 2).rounded(),
                                y: (world.y * worldSize - Double(options.height) * scale / 2).rounded())
        let projection = MapProjection(zoom: zoom, tileSize: tileSize, scale: scale, origin: origin)
        let (pixelWidth, pixelHeight) = (options.width * options.scale, options.height * options.scale)
        // Every tile is fetched before the canvas exists: a cairo context never crosses an await.
        var baseTiles = [BaseTile](), unavailable = 0, underImage = 0
        if let base = options.base, options.drawsImage {
            (baseTiles, unavailable, underImage) = try await fetchBase(base, projection: projection, width: pixelWidth, height: pixelHeight)
        }
        let canvas = try Canvas(width: options.drawsImage ? pixelWidth : 1, height: options.drawsImage ? pixelHeight : 1, background: options.background)
        for tile in baseTiles {
            canvas.draw(tile.image, x: tile.x, y: tile.y, width: tile.size, height: tile.size, interpolation: tile.interpolation)
        }
        let geometry = SnapshotGeometry(center: center, zoom: zoom, width: options.width, height: options.height,
                                        scale: options.scale, projection: projection)
        // A labelled base's labels and icons (drawn in its tiles): the features' labels avoid them.
        var base = (labels: [SnapshotLabel](), counts: LabelCounts(named: 0, labelled: 0), obstacles: [PixelBox]())
        if let labelled = options.base?.source as? any LabelledTileSource ?? options.reportedBaseLabels {
            base = baseLabels(labelled, geometry: geometry)
        }
        let renderer = FeatureRenderer(images: options.images)
        let placement = LabelIndex(layers: [LabelIndex.Layer(features: options.features, renderer: renderer)])
            .placement(zoom: zoom, tileSize: tileSize, scale: scale, avoiding: base.obstacles)
        let view = PixelBox(minX: 0, minY: 0, maxX: Double(pixelWidth), maxY: Double(pixelHeight)).offset(x: origin.x, y: origin.y)
        let labels = placement.labels(intersecting: view.grown(by: 4 * scale))
        if options.drawsImage { renderer.draw(options.features, on: canvas, projection: projection, labels: labels) }
        if options.drawsImage, let attribution = options.attribution, !attribution.isEmpty {
            canvas.drawText(attribution, at: PixelPoint(x: Double(canvas.width) - 4 * scale, y: Double(canvas.height) - 3 * scale),
                            style: TextStyle(font: Font(size: 10 * scale), color: Color(hex: "#333333")!,
                                             halo: Halo(color: Color.white.withAlpha(0.8), width: 2 * scale), anchor: PixelPoint(x: 1, y: 1)))
        }
        return Snapshot(image: canvas.makeImage(), geometry: geometry, markers: placedMarkers(options.features, geometry: geometry),
                        labels: base.labels + labels.filter { $0.box.intersects(view) }.map { geometry.snapshotLabel($0, zoom: zoom) },
                        labelCounts: LabelCounts(named: placement.namedFeatures + base.counts.named,
                                                 labelled: placement.labelledFeatures + base.counts.labelled),
                        unavailableTiles: unavailable, baseTileCount: underImage)
    }

    /// The labels a base's tiles drew on the image (placed at the tiles' whole zoom, as
    /// `drawBase` chooses it), their counts over the whole base, and their boxes and the
    /// base's icons in the snapshot's world pixels (for the features' labels to avoid).
    static func baseLabels(_ source: any LabelledTileSource, geometry: SnapshotGeometry)
        -> (labels: [SnapshotLabel], counts: LabelCounts, obstacles: [PixelBox]) {
        let tileZoom = Double(max(0, min(TileID.maxZoom, Int(geometry.zoom.rounded()))))
        let window = geometry.worldBox(atZoom: tileZoom)
        let toSnapshot = pow(2, geometry.zoom - tileZoom)
        let tileSize = geometry.projection.tileSize, scale = Double(geometry.scale)
        var labels = [SnapshotLabel](), counts = LabelCounts(named: 0, labelled: 0), obstacles = [PixelBox]()
        var counted = Set<ObjectIdentifier>()
        for (index, layer) in source.labelLayers {
            let placement = index.placement(zoom: tileZoom, tileSize: tileSize, scale: scale)
            let drawn = placement.labels(intersecting: window, layer: layer)
            labels += drawn.map { geometry.snapshotLabel($0, zoom: tileZoom) }
            obstacles += drawn.map { $0.box.scaled(by: toSnapshot) }
            if counted.insert(ObjectIdentifier(index)).inserted {
                counts.named += placement.namedFeatures
                counts.labelled += placement.labelledFeatures
                obstacles += index.iconBoxes(zoom: tileZoom, tileSize: tileSize, scale: scale).filter { $0.intersects(window) }.map { $0.scaled(by: toSnapshot) }
            }
        }
        return (labels, counts, obstacles)
    }

    /// The markers among the features (the points FeatureRenderer draws as markers) and where they landed.
    static func placedMarkers(_ features: [Feature], geometry: SnapshotGeometry) -> [PlacedMarker] {
        features.flatMap { feature -> [PlacedMarker] in
            guard feature.radius == nil, feature.renderer == nil else { return [] }
            let points: [Coordinate]
            switch feature.geometry {
            case .point(let c): points = [c]
            case .multiPoint(let cs): points = cs
            default: return []
            }
            return points.map { PlacedMarker(coordinate: $0, point: geometry.point(for: $0), title: feature.title,
                                             subtitle: feature.subtitle, symbol: feature.style.markerSymbol) }
        }
    }

    /// The centre and zoom a region asks for, each checked: a NaN or a pole here would put
    /// the whole view at infinity.
    static func view(_ options: SnapshotOptions) throws(SnapshotError) -> (Coordinate, Double) {
        guard options.maxZoom.isFinite, options.maxZoom >= 0 else { throw .invalidRegion("max zoom \(options.maxZoom) is not a zoom") }
        let maxZoom = min(options.maxZoom, Double(TileID.maxZoom))
        let size = PixelSize(width: Double(options.width), height: Double(options.height))
        switch options.region {
        case .center(let c, let zoom):
            try check(c, "centre")
            guard zoom.isFinite, (0...Double(TileID.maxZoom)).contains(zoom) else {
                throw .invalidRegion("zoom \(zoom) is out of range [0, \(TileID.maxZoom)]")
            }
            return (clamped(c), zoom)
        case .span(let c, let dLon, let dLat):
            try check(c, "centre")
            guard dLon.isFinite, dLat.isFinite, dLon >= 0, dLat >= 0, dLon <= 360, dLat <= 180 else {
                throw .invalidRegion("span \(dLon),\(dLat) is not 0-360 degrees of longitude and 0-180 of latitude")
            }
            let box = BoundingBox(west: c.longitude - dLon / 2, south: c.latitude - dLat / 2, east: c.longitude + dLon / 2, north: c.latitude + dLat / 2)
            return (clamped(c), Zoom.fitting(box, in: size, maxZoom: maxZoom))
        case .box(let box):
            try check(Coordinate(latitude: box.north, longitude: box.west), "box corner")
            try check(Coordinate(latitude: box.south, longitude: box.east), "box corner")
            guard box.south <= box.north else { throw .invalidRegion("box south \(box.south) is above north \(box.north)") }
            return (mercatorCenter(box), Zoom.fitting(box, in: size, maxZoom: maxZoom))
        case .fit(let padding):
            guard padding.isFinite, padding >= 0 else { throw .invalidRegion("padding \(padding) is not 0 or more pixels") }
            let overlayCorners = options.features.compactMap(\.imageOverlay).flatMap { overlay -> [Coordinate] in
                switch overlay.placement {
                case .box(let b): return [b.northWest, b.southEast]
                case .corners(let a, let b, let c, let d): return [a, b, c, d]
                }
            }
            let coordinates = (options.features.compactMap(\.geometry).flatMap(\.coordinates) + overlayCorners).filter(isOnEarth)
            guard let box = BoundingBox(covering: coordinates) else { throw .nothingToFit }
            // Circles reach their radius beyond their centre.
            var grown = box
            for feature in options.features { if let r = feature.radius, let b = feature.geometry?.bounds { grown = union(grown, FeatureTileSource.grow(b, meters: r)) } }
            // staticmap fits at a whole zoom; so do we, so tiles are drawn 1:1.
            let zoom = Zoom.fitting(grown, in: size, padding: padding, maxZoom: maxZoom).rounded(.down)
            return (mercatorCenter(grown), zoom)
        }
    }

    static func isOnEarth(_ c: Coordinate) -> Bool {
        c.latitude.isFinite && c.longitude.isFinite && abs(c.latitude) <= 90 && abs(c.longitude) <= 540
    }

    private static func check(_ c: Coordinate, _ what: String) throws(SnapshotError) {
        guard isOnEarth(c) else { throw .invalidRegion("\(what) \(c.longitude),\(c.latitude) is not a longitude and latitude") }
    }

    /// A centre beyond Mercator's latitudes shows the world's edge instead.
    static func clamped(_ c: Coordinate) -> Coordinate {
        let limit = Coordinate.maxMercatorLatitude
        return Coordinate(latitude: min(limit, max(-limit, c.latitude)), longitude: c.longitude)
    }

    /// The centre of a box in Mercator (the middle of the picture), not the middle latitude;
    /// a box reaching a pole is cut at Mercator's limit (it cannot show more).
    static func mercatorCenter(_ box: BoundingBox) -> Coordinate {
        let limit = Coordinate.maxMercatorLatitude
        let north = min(limit, max(-limit, box.north)), south = min(limit, max(-limit, box.south))
        let nw = MapPoint(Coordinate(latitude: north, longitude: box.west))
        let se = MapPoint(Coordinate(latitude: south, longitude: box.west + box.longitudeSpan))
        return MapPoint(x: (nw.x + se.x) / 2, y: (nw.y + se.y) / 2).coordinate.wrapped
    }

    static func union(_ a: BoundingBox, _ b: BoundingBox) -> BoundingBox {
        a.union(b)
    }

    /// A base tile and where it lands on the image, in device pixels from the top-left corner.
    struct BaseTile: Sendable {
        let image: RGBAImage
        let x: Double, y: Double, size: Double
        let interpolation: Interpolation
    }

    /// Base tiles fetched at once at most: enough to keep a remote source's connections busy,
    /// few enough that a large snapshot does not start hundreds of tasks.
    static let maxTileFetches = 8

    /// The base tiles under a view of `width` x `height` device pixels at the nearest whole
    /// zoom, wrapping columns around the antimeridian, fetched `maxTileFetches` at a time, in
    /// drawing order. `projection` comes from `view`, which checked it: a zoom of 0-30 and a finite origin
    /// (at most 2^42 px), so the conversions below are of bounded numbers.
    /// Also how many of them were unavailable, and how many there were.
    static func fetchBase(_ base: TileLayer, projection: MapProjection, width: Int, height: Int) async throws
        -> (tiles: [BaseTile], unavailable: Int, total: Int) {
        let tileZoom = max(0, min(TileID.maxZoom, Int(projection.zoom.rounded())))
        let factor = pow(2, projection.zoom - Double(tileZoom))
        let tilePixels = Double(projection.tileSize) * projection.scale * factor
        let count = 1 << tileZoom
        let minX = Int((projection.origin.x / tilePixels).rounded(.down)), maxX = Int(((projection.origin.x + Double(width)) / tilePixels).rounded(.up)) - 1
        let minY = max(0, Int((projection.origin.y / tilePixels).rounded(.down))), maxY = min(count - 1, Int(((projection.origin.y + Double(height)) / tilePixels).rounded(.up)) - 1)
        guard minY <= maxY else { return ([], 0, 0) }
        let scale = Int(projection.scale)
        var placed = [(x: Int, y: Int, tile: TileID)]()
        for x in minX...maxX { for y in minY...maxY { placed.append((x, y, TileID(z: tileZoom, x: ((x % count) + count) % count, y: y))) } }
        let answers = try await placed.map(\.tile).concurrentMap(maxInFlight: maxTileFetches) { tile -> (RGBAImage?, Bool) in
            switch try await base.render(TileRequest(tile, scale: scale)) {
            case .image(let image, _, _): return (image, false)
            case .unavailable: return (nil, true)
            case .noTile, .encoded: return (nil, false)
            }
        }
        let tiles = zip(placed, answers).compactMap { item, answer in
            answer.0.map { BaseTile(image: $0, x: Double(item.x) * tilePixels - projection.origin.x, y: Double(item.y) * tilePixels - projection.origin.y,
                                    size: tilePixels, interpolation: factor == 1 ? .nearest : .bilinear) }
        }
        return (tiles, answers.filter(\.1).count, placed.count)
    }
}
