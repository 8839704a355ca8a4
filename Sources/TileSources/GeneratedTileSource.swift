import Foundation
public import Canvas
import TileMath

/// Tiles drawn by code on request, as Google's `GMSSyncTileLayer` does: the closure gets
/// a canvas of the requested pixel size and the request, and draws.
///
/// Drawing is synchronous: the canvas never crosses an `await`.
public struct GeneratedTileSource: TileSource {
    public let metadata: TileSetMetadata
    public let encoding: EncodingOptions
    let draw: @Sendable (Canvas, TileRequest) throws -> Void

    public init(metadata: TileSetMetadata, encoding: EncodingOptions = .png(),
                draw: @escaping @Sendable (Canvas, TileRequest) throws -> Void) {
        var metadata = metadata
        metadata.format = encoding.format
        self.metadata = metadata
        self.encoding = encoding
        self.draw = draw
    }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        let size = metadata.tileSize * request.scale
        let canvas = try Canvas(width: size, height: size)
        try draw(canvas, request)
        return .tile(TileData(bytes: try canvas.encoded(encoding), format: encoding.format))
    }

    /// A debug grid: each tile outlined and labelled with its z/x/y (the viewer's debug layer).
    public static func debugGrid(tileSize: Int = 256, color: Color = Color(red: 0.8, green: 0.1, blue: 0.1)) -> GeneratedTileSource {
        GeneratedTileSource(metadata: TileSetMetadata(name: "debug-grid", minZoom: 0, maxZoom: TileID.maxZoom, tileSize: tileSize)) { canvas, request in
            let size = Double(canvas.width), scale = Double(request.scale)
            canvas.stroke(.rectangle(x: 0.5 * scale, y: 0.5 * scale, width: size - scale, height: size - scale),
                          with: .color(color), style: StrokeStyle(width: scale, dash: [4 * scale, 4 * scale]))
            canvas.drawText(request.tile.description, at: PixelPoint(x: size / 2, y: size / 2),
                            style: TextStyle(font: Font(family: "DejaVu Sans Mono", size: 16 * scale, weight: .bold),
                                             color: color, halo: Halo(color: .white, width: 2 * scale)))
        }
    }

    /// Old paper: a warm ground with fibres and stains, seamless across tiles (the texture is
    /// a function of world pixels at each zoom), the same every time.
    public static func parchment(tileSize: Int = 256) -> GeneratedTileSource {
        GeneratedTileSource(metadata: TileSetMetadata(name: "parchment", minZoom: 0, maxZoom: TileID.maxZoom, tileSize: tileSize),
                            encoding: .jpeg(quality: 88)) { canvas, request in
            let size = canvas.width
            let ox = request.tile.x * size, oy = request.tile.y * size
            func hash(_ x: Int, _ y: Int) -> Double {
                var h = UInt64(bitPattern: Int64(x)) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: Int64(y)) &* 0xC2B2_AE3D_27D4_EB4F
                h ^= h >> 29; h = h &* 0xBF58_476D_1CE4_E5B9; h ^= h >> 32
                return Double(h & 0xFFFF) / 65535
            }
            func smooth(_ x: Int, _ y: Int, _ cell: Int) -> Double {
                let cx = Int((Double(x) / Double(cell)).rounded(.down)), cy = Int((Double(y) / Double(cell)).rounded(.down))
                let fx = Double(x - cx * cell) / Double(cell), fy = Double(y - cy * cell) / Double(cell)
                let sx = fx * fx * (3 - 2 * fx), sy = fy * fy * (3 - 2 * fy)
                let top = hash(cx, cy) * (1 - sx) + hash(cx + 1, cy) * sx
                let bottom = hash(cx, cy + 1) * (1 - sx) + hash(cx + 1, cy + 1) * sx
                return top * (1 - sy) + bottom * sy
            }
            var pixels = [UInt8](repeating: 255, count: size * size * 4)
            for j in 0..<size {
                for i in 0..<size {
                    let x = ox + i, y = oy + j
                    let stain = smooth(x, y, 96) * 0.6 + smooth(x, y, 23) * 0.4
                    let grain = hash(x, y) - 0.5
                    let fibre = smooth(x * 3, y / 2, 9) - 0.5
                    let shade = -18 * stain + 7 * grain + 5 * fibre
                    let p = (j * size + i) * 4
                    pixels[p] = UInt8(max(0, min(255, 240 + shade)))
                    pixels[p + 1] = UInt8(max(0, min(255, 226 + shade * 1.05)))
                    pixels[p + 2] = UInt8(max(0, min(255, 190 + shade * 1.2)))
                }
            }
            canvas.draw(RGBAImage(width: size, height: size, pixels: pixels), x: 0, y: 0, width: Double(size), height: Double(size))
        }
    }
}
