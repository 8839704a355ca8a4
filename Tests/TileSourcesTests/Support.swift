import Foundation
import Synchronization
import Canvas
import TileMath
@testable import TileSources

/// A source that paints each tile with a colour chosen by a closure, records every
/// request, and can be told to be absent or unavailable for some tiles.
final class RecordingSource: TileSource {
    let metadata: TileSetMetadata
    let paint: @Sendable (TileID) -> RGBAImage?
    let unavailable: @Sendable (TileID) -> Bool
    private let log = Mutex([TileRequest]())

    init(metadata: TileSetMetadata, unavailable: @escaping @Sendable (TileID) -> Bool = { _ in false },
         paint: @escaping @Sendable (TileID) -> RGBAImage?) {
        self.metadata = metadata
        self.paint = paint
        self.unavailable = unavailable
    }

    var requests: [TileRequest] { log.withLock { $0 } }

    func tile(_ request: TileRequest) async throws -> TileResult {
        log.withLock { $0.append(request) }
        if unavailable(request.tile) { return .unavailable(retryAfter: .seconds(30)) }
        guard let image = paint(request.tile) else { return .noTile }
        return .tile(TileData(bytes: try image.encoded(), format: .png))
    }

    /// Solid tiles of one colour.
    static func solid(_ color: Color, name: String = "solid", minZoom: Int = 0, maxZoom: Int = 22,
                      bounds: BoundingBox? = nil, size: Int = 256) -> RecordingSource {
        RecordingSource(metadata: TileSetMetadata(name: name, format: .png, bounds: bounds, minZoom: minZoom, maxZoom: maxZoom, tileSize: size)) { _ in
            RGBAImage(width: size, height: size, color: color)
        }
    }
}

/// A tile whose four quadrants are red, green, blue and white (top-left, top-right,
/// bottom-left, bottom-right), to see which part of an ancestor was scaled up.
func quadrantTile(size: Int = 256) -> RGBAImage {
    var image = RGBAImage(width: size, height: size)
    let colors = [Pixel(red: 255, green: 0, blue: 0), Pixel(red: 0, green: 255, blue: 0),
                  Pixel(red: 0, green: 0, blue: 255), Pixel(red: 255, green: 255, blue: 255)]
    for y in 0..<size {
        for x in 0..<size {
            image[x, y] = colors[(y >= size / 2 ? 2 : 0) + (x >= size / 2 ? 1 : 0)]
        }
    }
    return image
}

func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

extension TileResult {
    var image: RGBAImage? { data.flatMap { try? RGBAImage(decoding: $0.bytes) } }
}

func near(_ a: Pixel, _ b: Pixel, _ tolerance: Int = 3) -> Bool { a.distance(to: b) <= tolerance }
