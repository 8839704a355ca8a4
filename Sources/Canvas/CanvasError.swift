/// Errors of images and drawing; each names the format, file or value at fault.
public enum CanvasError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownFormat(firstBytes: String)
    case decodeFailed(format: ImageFormat, reason: String)
    case encodeFailed(format: ImageFormat, reason: String)
    case invalidSize(width: Int, height: Int)
    /// The image declares more pixels than `limit` allows (nothing was allocated for it).
    case imageTooLarge(width: Int, height: Int, limit: ImageLimits)
    case invalidOption(String)
    case file(path: String, underlying: String)

    public var description: String {
        switch self {
        case .unknownFormat(let bytes): return "not a PNG, JPEG or WebP image (starts with \(bytes))"
        case .decodeFailed(let format, let reason): return "cannot decode \(format.name): \(reason)"
        case .encodeFailed(let format, let reason): return "cannot encode \(format.name): \(reason)"
        case .invalidSize(let w, let h): return "invalid image size \(w)x\(h)"
        case .imageTooLarge(let w, let h, let limit): return "the image declares \(w)x\(h) pixels, more than allowed (\(limit))"
        case .invalidOption(let text): return text
        case .file(let path, let underlying): return "\(path): \(underlying)"
        }
    }
}
