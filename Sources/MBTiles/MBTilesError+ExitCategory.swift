import TileMath

extension MBTilesError: CategorizedError {
    /// A row the spec does not allow is something the file says: data.
    public var exitCategory: ExitCategory {
        switch self {
        case .invalidTile, .zoomLevelNotANumber: return .data
        }
    }
}
