import TileMath

extension SnapshotError: CategorizedError {
    /// Every snapshot error is about the size or region the user asked for.
    public var exitCategory: ExitCategory {
        switch self {
        case .invalidSize, .tooManyPixels, .invalidRegion, .nothingToFit: return .usage
        }
    }
}
