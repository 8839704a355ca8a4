import Foundation
import TileMath

/// A label as it landed on a snapshot: its text and box in CSS pixels from the image's
/// top-left corner (halo included; around the rotated text for a path label).
public struct SnapshotLabel: Hashable, Sendable {
    public let text: String
    public let kind: LabelKind
    public let box: PixelBox
    /// Radians, clockwise on screen.
    public let angle: Double

    public init(text: String, kind: LabelKind, box: PixelBox, angle: Double) {
        self.text = text
        self.kind = kind
        self.box = box
        self.angle = angle
    }
}

/// How many features have a label to place, and how many got one at a zoom.
public struct LabelCounts: Hashable, Sendable {
    public var named: Int
    public var labelled: Int

    public init(named: Int, labelled: Int) {
        self.named = named
        self.labelled = labelled
    }
}

extension SnapshotGeometry {
    /// A label placed at `zoom` (world pixels at this snapshot's tile size and scale) where
    /// it lands on this image: a base drawn from tiles of another zoom is scaled by 2^Δzoom.
    public func snapshotLabel(_ label: PlacedLabel, zoom labelZoom: Double) -> SnapshotLabel {
        let factor = Foundation.pow(2, zoom - labelZoom)
        let box = label.box.scaled(by: factor).offset(x: -projection.origin.x, y: -projection.origin.y).scaled(by: 1 / Double(scale))
        return SnapshotLabel(text: label.text, kind: label.kind, box: box, angle: label.angle)
    }

    /// The image as a box in world pixels at `zoom` (this snapshot's tile size and scale).
    public func worldBox(atZoom labelZoom: Double) -> PixelBox {
        let factor = Foundation.pow(2, labelZoom - zoom)
        return PixelBox(minX: 0, minY: 0, maxX: Double(width * scale), maxY: Double(height * scale))
            .offset(x: projection.origin.x, y: projection.origin.y).scaled(by: factor)
    }
}
