/// Errors of tile math: each names the value that was wrong.
public enum TileMathError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidCoordinate(Coordinate, reason: String)
    case invalidZoom(Int)
    case invalidTile(z: Int, x: Int, y: Int, reason: String)
    case invalidQuadkey(String, reason: String)
    case invalidBoundingBox(BoundingBox, reason: String)
    case invalidPolyline(String, reason: String)
    /// A shard spec (`I/N`) or a shard plan's split zoom that cannot be.
    case invalidShard(String, reason: String)
    case invalidSplitZoom(Int, reason: String)

    public var description: String {
        switch self {
        case .invalidCoordinate(_, let reason): return reason
        case .invalidZoom(let z): return "zoom \(z) is out of range [0, \(TileID.maxZoom)]"
        case .invalidTile(let z, let x, let y, let reason): return "tile \(z)/\(x)/\(y): \(reason)"
        case .invalidQuadkey(let key, let reason): return "quadkey \"\(key)\": \(reason)"
        case .invalidBoundingBox(_, let reason): return reason
        case .invalidPolyline(_, let reason): return "encoded polyline: \(reason)"
        case .invalidShard(let text, let reason): return "shard \"\(text)\": \(reason)"
        case .invalidSplitZoom(let z, let reason): return "shard zoom \(z) \(reason)"
        }
    }
}
