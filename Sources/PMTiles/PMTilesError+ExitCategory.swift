import TileMath

extension PMTilesError: CategorizedError {
    /// What the file says is wrong is data; a failed read is I/O.
    public var exitCategory: ExitCategory {
        switch self {
        case .notPMTiles, .unsupportedVersion, .unsupportedCompression, .invalid, .corrupt: return .data
        case .io: return .io
        }
    }
}
