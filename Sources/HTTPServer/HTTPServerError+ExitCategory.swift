import TileMath

extension HTTPServerError: CategorizedError {
    /// A host that is no address is usage; a port that cannot be bound is the machine's (I/O).
    public var exitCategory: ExitCategory {
        switch self {
        case .badHost: return .usage
        case .cannotStart: return .io
        }
    }
}
