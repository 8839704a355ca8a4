import TileMath

extension TileSourceError: CategorizedError {
    /// A store that cannot be found, read or written is I/O; a damaged one is data; a path or
    /// URL that names no kind of store (or a source asked for what it cannot do) is usage.
    public var exitCategory: ExitCategory {
        switch self {
        case .notFound, .unreadable, .unwritable: return .io
        case .corrupt: return .data
        case .invalid: return .usage
        }
    }
}

extension URLTemplateError: CategorizedError {
    /// A URL template is always something the user gave.
    public var exitCategory: ExitCategory { .usage }
}
