import Foundation
public import TileSources

/// A tile source whose tiles draw labels placed by a `LabelIndex`, and says which: a
/// snapshot drawn from its tiles then reports those labels (text and box) too.
public protocol LabelledTileSource: TileSource {
    /// The indices its tiles draw labels from, each with the layer of it that is this
    /// source's (a composed map has several).
    var labelLayers: [(index: LabelIndex, layer: Int)] { get }
}

extension FeatureTileSource: LabelledTileSource {
    public var labelLayers: [(index: LabelIndex, layer: Int)] { [(labelIndex, labelLayer)] }
}
