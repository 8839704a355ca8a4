import TileMath

extension CanvasError: CategorizedError {
    /// An image whose bytes are wrong (or too large to decode) is data; so is `.file`, which
    /// wraps mostly decode failures of a named file (it does not tell a missing file apart);
    /// an option the caller gave is usage; a failed encode is ours.
    public var exitCategory: ExitCategory {
        switch self {
        case .unknownFormat, .decodeFailed, .invalidSize, .imageTooLarge, .file: return .data
        case .invalidOption: return .usage
        case .encodeFailed: return .software
        }
    }
}
