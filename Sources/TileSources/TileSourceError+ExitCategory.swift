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

extension RemoteTileError: CategorizedError {
    /// What an upstream answered, a refusal (401, 403, 400) or something that is not a good
    /// tile, is bad input data, as a broken file is (65, naming the URL); a URL TileKit cannot
    /// ask is the user's to mend (64). Without this, `snapshot` exited 1 ("other") on a
    /// truncated PNG from the upstream.
    public var exitCategory: ExitCategory {
        switch self {
        case .refused, .notAnImage, .undecodable, .tileTooLarge, .bodyTooLarge: return .data
        case .invalidURL, .missingUserAgent: return .usage
        }
    }
}
