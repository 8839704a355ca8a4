import Foundation
public import Canvas
public import TileMath

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
}
