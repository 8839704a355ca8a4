import Foundation
import Synchronization
import Canvas
import TileMath
public import Features

/// The labels of one or more feature layers, placed once per zoom over the whole map so a
/// label is the same in every tile it touches and in every snapshot.
///
/// A placement is computed the first time a zoom (with a tile size and scale) is asked for,
/// before that zoom's first tile is drawn, and kept; tiles drawn at the same time wait for
/// it (one computation per zoom, whatever the concurrency). See `LabelPlacer` for the rules.
public final class LabelIndex: Sendable {
    /// One layer's features, as its renderer draws them, with the layer's own priority.
    public struct Layer: Sendable {
        public var features: [Feature]
        public var renderer: FeatureRenderer
        /// Replaces every label's kind priority in this layer (map.json `label-priority`).
        public var priority: Int?
        /// The zooms the layer is drawn at (its `minzoom`-`maxzoom`): at other zooms its
        /// labels and icons take no room. A fractional zoom counts as the nearest whole one.
        public var minZoom: Int
        public var maxZoom: Int
        /// True for a layer drawn over the others by another map (map.json `"draw": false`):
        /// its filled areas hide what is under them, so other layers' labels keep off their
        /// boxes. Its own labels and icons take their room as usual.
        public var coversAreas: Bool

        public init(features: [Feature], renderer: FeatureRenderer = FeatureRenderer(), priority: Int? = nil,
                    minZoom: Int = 0, maxZoom: Int = Int.max, coversAreas: Bool = false) {
            self.features = features
            self.renderer = renderer
            self.priority = priority
            self.minZoom = minZoom
            self.maxZoom = maxZoom
            self.coversAreas = coversAreas
        }
    }

    struct Key: Hashable { let zoom: Double, tileSize: Int, scale: Double }

    /// Placements kept, at most: every whole zoom at two scales and some fractional
    /// zooms of snapshots. Past it the cache starts again (a placement is cheap to redo).
    static let cacheLimit = 64
    /// Text sizes kept, at most (a few scales of every label of a large map).
    static let sizeCacheLimit = 1_000_000

    let placer: LabelPlacer
    /// Placements by zoom, and the text sizes measured for them (the same at every zoom).
    private let cache = Mutex<(placements: [Key: LabelPlacement], sizes: [LabelPlacer.SizeKey: PixelSize])>(([:], [:]))

    public init(layers: [Layer]) {
        placer = LabelPlacer(layers: layers)
    }

    /// Every label that has some text (after `LabelText.clean`): features with a title.
    public var namedFeatureCount: Int { placer.namedFeatures }

    /// The labels at a zoom placed around `obstacles` too (world pixels: what is already
    /// drawn under them, a snapshot's base labels and icons), computed each time.
    public func placement(zoom: Double, tileSize: Int = 256, scale: Double = 1, avoiding obstacles: [PixelBox]) -> LabelPlacement {
        guard !obstacles.isEmpty else { return placement(zoom: zoom, tileSize: tileSize, scale: scale) }
        return cache.withLock { cache in
            placer.place(zoom: zoom, tileSize: tileSize, scale: scale, obstacles: obstacles, sizes: &cache.sizes)
        }
    }

    /// The boxes of every marker's icon at a zoom, world pixels.
    public func iconBoxes(zoom: Double, tileSize: Int = 256, scale: Double = 1) -> [PixelBox] {
        placer.iconBoxes(world: Double(tileSize) * scale * Foundation.pow(2, zoom), scale: scale, layers: placer.shownLayers(zoom: zoom))
    }

    /// The labels at a zoom, computed on first use and kept. Thread-safe.
    public func placement(zoom: Double, tileSize: Int = 256, scale: Double = 1) -> LabelPlacement {
        let key = Key(zoom: zoom, tileSize: tileSize, scale: scale)
        return cache.withLock { cache in
            if let placement = cache.placements[key] { return placement }
            let placement = placer.place(zoom: zoom, tileSize: tileSize, scale: scale, sizes: &cache.sizes)
            if cache.placements.count >= Self.cacheLimit { cache.placements.removeAll() }
            if cache.sizes.count > Self.sizeCacheLimit { cache.sizes.removeAll() }
            cache.placements[key] = placement
            return placement
        }
    }
}

/// The labels placed at one zoom, with an index to find those crossing a tile.
public struct LabelPlacement: Sendable {
    public let zoom: Double
    public let tileSize: Int
    public let scale: Double
    /// In placement order: the highest priority first.
    public let labels: [PlacedLabel]
    /// Features with a label to place, and those that got one at this zoom.
    public let namedFeatures: Int
    public let labelledFeatures: Int
    /// Milliseconds the placement took.
    public let milliseconds: Double
    let grid: SpatialGrid

    /// The labels whose box meets `box` (world pixels), in placement order; only those of
    /// `layer` when given.
    public func labels(intersecting box: PixelBox, layer: Int? = nil) -> [PlacedLabel] {
        grid.indices(intersecting: box).map { labels[$0] }.filter { layer == nil || $0.layer == layer }
    }
}
