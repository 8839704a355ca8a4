import Foundation
public import Canvas
public import TileMath

/// What a label names, which sets its default priority and style. Points of interest win
/// over stations, stations over landmarks, landmarks over paths.
public enum LabelKind: String, Hashable, Sendable, CaseIterable {
    /// A marker that is not a station (a quest, a store, a pin).
    case poi
    /// A marker whose symbol is a station (`subway`, `rail-metro`, `train`, `warp`, or any
    /// symbol containing "rail" or "station").
    case station
    /// A named area: a polygon, or a circle with a radius.
    case landmark
    /// A named line, labelled along it.
    case path

    /// Higher is placed first. A layer's `label-priority` in map.json, or a feature's
    /// `label-priority` property, replaces it.
    public var defaultPriority: Int {
        switch self {
        case .poi: return 40
        case .station: return 30
        case .landmark: return 20
        case .path: return 10
        }
    }
}

/// A label as placed at one zoom: its text, where it is in world pixels (at that zoom, tile
/// size and scale: the same numbers in every tile and snapshot), and the feature it names.
public struct PlacedLabel: Hashable, Sendable {
    public let text: String
    public let kind: LabelKind
    /// The layer (index in the `LabelIndex`) and the feature (index in that layer) it names.
    public let layer: Int
    public let feature: Int
    /// The middle of the text, world pixels.
    public let center: PixelPoint
    /// Rotation, radians clockwise on screen; 0 but for labels along a path.
    public let angle: Double
    /// The box the label covers, halo included (around the rotated text for a path label),
    /// world pixels. No two placed labels' boxes intersect, and none meets a marker's icon.
    public let box: PixelBox
    /// Font, colour and halo, at the placement's scale.
    public let style: TextStyle
}
