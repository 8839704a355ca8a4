import Foundation
import Canvas
public import TileMath
public import TileSources
public import Features
public import Rendering
public import Game

/// A layer ready to draw: its spec, its source behind its options, and for a feature
/// layer the features themselves (the viewer gets them as GeoJSON).
public struct ServedLayer: Sendable {
    public let spec: LayerSpec
    public let layer: TileLayer
    public let features: [Feature]
    /// The remote source behind a remote layer, for its counters (bad answers, deadlines).
    public var remote: RemoteTileSource? = nil
}

/// A map project opened: every layer's source, and the composed map (the first visible
/// base layer under every visible overlay, by z-index).
public struct ServedMap: Sendable {
    public let project: MapProject
    public let layers: [ServedLayer]
    public let composer: TileComposer
    /// The game's points of interest, when the map has a game.
    public let pois: [PointOfInterest]
    /// The game's routes by name, read once, at the game's speed and a time warp of 1.
    public let routes: [String: RoutePlayback]
    /// The box tiles are served in: the map's bounds, else the union of its layers' bounds
    /// when every layer has some, else the world (nil).
    public let bounds: BoundingBox?
    /// `Cache-Control: max-age` of the composed map: the shortest of its visible layers'.
    public let composedMaxAgeSeconds: Int
    /// The labels of the visible features layers, placed together once per zoom.
    public let labels: LabelIndex

    /// Opens a project built in code (a project read from a file comes opened: `init(_: OpenedProject)`).
    public init(_ project: MapProject) throws(ProjectProblems) {
        try self.init(OpenedProject(project))
    }

    /// Serves what the reader opened; opens only what it did not (remote sources and their
    /// caches). What fails to open is a problem naming the map's file and the JSON path of
    /// the layer (or game file) that failed, as the reader reports its own.
    public init(_ opened: OpenedProject) throws(ProjectProblems) {
        self.project = opened.project
        let file = opened.file
        var layers = [ServedLayer]()
        // Features layers' files, read once; the visible ones' labels are placed together
        // (one `LabelIndex`), so they avoid each other's.
        var loadedFeatures = [String: (features: [Feature], images: [String: RGBAImage])]()
        var labelLayers = [LabelIndex.Layer](), labelLayerIDs = [String]()
        for (index, spec) in project.layers.enumerated() {
            guard case .features(let files) = spec.source else { continue }
            var features = [Feature](), images = [String: RGBAImage]()
            for (fileIndex, featureFile) in files.enumerated() {
                let loaded: [Feature], fileImages: [String: RGBAImage]
                if let kept = opened.featureFiles[OpenedProject.featureKey(featureFile, overlayImage: spec.overlayImage)] {
                    (loaded, fileImages) = kept  // read by the reader's check
                } else {
                    (loaded, fileImages) = try Self.opening(file, "layers[\(index)].files[\(fileIndex)]") {
                        let loaded = try FeatureFiles.load(featureFile, overlayImage: spec.overlayImage)
                        return (loaded, try FeatureRenderer.loadImages(for: loaded, relativeTo: URL(fileURLWithPath: featureFile).deletingLastPathComponent()))
                    }
                }
                images.merge(fileImages) { a, _ in a }
                features += loaded
            }
            loadedFeatures[spec.id] = (features, images)
            if spec.visible {
                var renderer = FeatureRenderer(images: images)
                renderer.antialias = spec.antialias
                labelLayers.append(LabelIndex.Layer(features: features, renderer: renderer, priority: spec.labelPriority,
                                                    minZoom: spec.options.minZoom, maxZoom: spec.options.maxZoom, coversAreas: !spec.draws))
                labelLayerIDs.append(spec.id)
            }
        }
        let labels = LabelIndex(layers: labelLayers)
        self.labels = labels
        for (index, spec) in project.layers.enumerated() {
            // A layer that does not draw (`"draw": false`) only takes room in the label placement.
            guard spec.draws else { continue }
            var features = [Feature]()
            var remoteSource: RemoteTileSource?
            let source: any TileSource
            switch spec.source {
            case .store(let path, let scheme):
                if let kept = opened.stores[path] {
                    source = kept
                } else {
                    source = try Self.opening(file, "layers[\(index)].source") { try TileStore.open(path, scheme: scheme) }
                }
            case .remote(let template, let cache, let userAgent):
                let remote = try Self.opening(file, "layers[\(index)].source") {
                    try RemoteTileSource(template: template, metadata: TileSetMetadata(name: spec.id, format: spec.format),
                                         options: RemoteOptions(userAgent: userAgent))
                }
                if let cache {
                    source = try Self.opening(file, "layers[\(index)].cache") { try CachedTileSource(upstream: remote, cachePath: cache) }
                } else {
                    source = remote
                }
                remoteSource = remote
            case .generated(let name):
                source = name == "parchment" ? GeneratedTileSource.parchment(tileSize: spec.options.tileSize ?? 256)
                    : GeneratedTileSource.debugGrid(tileSize: spec.options.tileSize ?? 256)
            case .features:
                let loaded = loadedFeatures[spec.id] ?? ([], [:])
                features = loaded.features
                var renderer = FeatureRenderer(images: loaded.images)
                renderer.antialias = spec.antialias
                let shared = labelLayerIDs.firstIndex(of: spec.id).map { (index: labels, layer: $0) }
                source = FeatureTileSource(name: spec.id, features: features, renderer: renderer,
                                           tileSize: spec.options.tileSize ?? 256, encoding: .defaults(for: spec.format),
                                           labels: shared ?? (LabelIndex(layers: [LabelIndex.Layer(features: features, renderer: renderer,
                                                                                                   priority: spec.labelPriority)]), 0))
            }
            layers.append(ServedLayer(spec: spec, layer: TileLayer(name: spec.id, source: source, options: spec.options), features: features,
                                      remote: remoteSource))
        }
        self.layers = layers
        if let kept = opened.pois {
            pois = kept
        } else if let game = project.game {
            pois = try Self.opening(file, "game.pois") { try PointsOfInterest.load(game.pois) }
        } else {
            pois = []
        }
        var routes = opened.routes
        if let game = project.game {
            for (name, route) in game.routes.sorted(by: { $0.key < $1.key }) where routes[name] == nil {
                routes[name] = try Self.opening(file, "game.routes." + name) { try RoutePlayback.load(route, speed: game.speed) }
            }
        }
        self.routes = routes
        bounds = project.bounds ?? Self.union(layers.map(\.layer.bounds))
        composedMaxAgeSeconds = layers.filter { $0.spec.visible }.map(\.spec.maxAgeSeconds).min() ?? 3600
        let base = layers.first { $0.spec.isBase && $0.spec.visible }
        composer = TileComposer(layers: layers.filter { $0.spec.visible && (!$0.spec.isBase || $0.spec.id == base?.spec.id) }.map(\.layer))
    }

    /// One step of opening a map; its failure is the map's problem at `place` (I/O when the
    /// machine failed: a missing or unwritable file, a cache that cannot be created).
    static func opening<T>(_ file: String, _ place: String, _ open: () throws -> T) throws(ProjectProblems) -> T {
        do {
            return try open()
        } catch {
            let isIO = IOFailure.cause(of: error) != nil || (error as? any CategorizedError)?.exitCategory == .io
            throw ProjectProblems(problems: [ProjectProblem(file: file, place: place, reason: "\(error)", isIO: isIO)])
        }
    }

    public func layer(_ id: String) -> ServedLayer? { layers.first { $0.spec.id == id } }

    /// The composed map as one layer: the base of static images and `snapshot --base map.json`.
    public var composedLayer: TileLayer {
        TileLayer(name: project.name, source: ComposedSource(composer: composer, metadata: TileSetMetadata(
            name: project.title, bounds: bounds, minZoom: project.minZoom, maxZoom: project.maxZoom, attribution: project.attribution)))
    }

    /// The union of boxes, nil when any is nil (a layer without bounds covers the world).
    static func union(_ boxes: [BoundingBox?]) -> BoundingBox? {
        guard let first = boxes.first, var box = first else { return nil }
        for other in boxes.dropFirst() {
            guard let b = other else { return nil }
            box = box.union(b)
        }
        return box
    }

    /// `Cache-Control: max-age` for one layer's tiles, or the composed map's (nil).
    public func maxAgeSeconds(layer id: String?) -> Int {
        guard let id else { return composedMaxAgeSeconds }
        return layer(id)?.spec.maxAgeSeconds ?? composedMaxAgeSeconds
    }

    /// Where the viewer opens: the project's centre, else the middle of the bounds.
    public var center: Coordinate {
        project.center ?? bounds?.center ?? Coordinate(latitude: 0, longitude: 0)
    }

    public var initialZoom: Int {
        project.zoom ?? max(project.minZoom, min(project.maxZoom, bounds.map { Int(Zoom.fitting($0, in: PixelSize(width: 1024, height: 768))) } ?? 2))
    }
}

/// A composer as a tile source.
public struct ComposedSource: TileSource {
    public let composer: TileComposer
    public let metadata: TileSetMetadata

    public init(composer: TileComposer, metadata: TileSetMetadata) {
        self.composer = composer
        self.metadata = metadata
    }

    public func tile(_ request: TileRequest) async throws -> TileResult { try await composer.tile(request) }
}

extension ComposedSource: LabelledTileSource {
    /// The labels of its features layers: a snapshot of the composed map reports them.
    public var labelLayers: [(index: LabelIndex, layer: Int)] {
        composer.layers.flatMap { ($0.source as? any LabelledTileSource)?.labelLayers ?? [] }
    }
}
