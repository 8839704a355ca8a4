import TileMath

extension PyramidError: CategorizedError {
    /// What the user asked for (zooms, a build too large, a set of shards that is not one
    /// build's) is usage; stores and tiles that do not fit together are data.
    public var exitCategory: ExitCategory {
        switch self {
        case .badZoom, .tooLarge, .incompleteShards: return .usage
        case .unexpectedTile, .shardRecord, .incompatible, .conflict, .strayTile: return .data
        }
    }
}

extension GeoreferenceError: CategorizedError {
    /// Bounds and corners the user gave are usage; a world file or sidecar that says
    /// something wrong is data.
    public var exitCategory: ExitCategory {
        switch self {
        case .badBounds, .degenerate, .outsideWorld, .beyondMercator: return .usage
        case .worldFile, .sidecar: return .data
        }
    }
}
