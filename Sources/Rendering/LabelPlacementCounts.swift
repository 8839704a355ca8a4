/// A label placement's figures as JSON, for `validate --labels` and tilekit-bench: its zoom,
/// the named features and those that got a label, and the placement time in milliseconds,
/// rounded to 0.1 ms. Zooms go in an array of these (not an object keyed by zoom) so that
/// they keep numeric order.
public struct LabelPlacementCounts: Encodable, Sendable {
    public var zoom: Int
    public var named: Int
    public var labelled: Int
    public var ms: Double

    public init(_ placement: LabelPlacement) {
        zoom = Int(exactly: placement.zoom.rounded(.down)) ?? 0  // placements are made at whole zooms
        named = placement.namedFeatures
        labelled = placement.labelledFeatures
        ms = (placement.milliseconds * 10).rounded() / 10
    }
}
