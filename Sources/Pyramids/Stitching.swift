import Foundation
public import Canvas
public import TileMath
public import TileSources

/// What `tilekit stitch` writes beside the image, so `split` (and `pyramid`) know exactly
/// which tiles it came from.
public struct StitchSidecar: Codable, Hashable, Sendable {
    public var zoom: Int
    public var minX: Int
    public var maxX: Int
    public var minY: Int
    public var maxY: Int
    public var tileSize: Int
    /// The store the tiles came from, as given to stitch.
    public var source: String
    public var crs = "EPSG:3857"

    enum CodingKeys: String, CodingKey {
        case zoom, minX = "min_x", maxX = "max_x", minY = "min_y", maxY = "max_y", tileSize = "tile_size", source, crs
    }

    public init(range: TileRange, tileSize: Int, source: String) {
        zoom = range.z
        minX = range.minX; maxX = range.maxX; minY = range.minY; maxY = range.maxY
        self.tileSize = tileSize
        self.source = source
    }

    public var range: TileRange { TileRange(z: zoom, minX: minX, maxX: maxX, minY: minY, maxY: maxY) }

    public static func load(_ path: String) throws(GeoreferenceError) -> StitchSidecar {
        guard let data = FileManager.default.contents(atPath: path) else { throw .sidecar(file: path, reason: "cannot be read") }
        let sidecar: StitchSidecar
        do { sidecar = try JSONDecoder().decode(StitchSidecar.self, from: data) } catch {
            throw .sidecar(file: path, reason: "not a tilekit stitch sidecar (zoom, min_x, max_x, min_y, max_y, tile_size)")
        }
        guard (0...TileID.maxZoom).contains(sidecar.zoom), sidecar.minX <= sidecar.maxX, sidecar.minY <= sidecar.maxY,
              sidecar.minX >= 0, sidecar.minY >= 0, sidecar.maxX < 1 << sidecar.zoom, sidecar.maxY < 1 << sidecar.zoom,
              [256, 512].contains(sidecar.tileSize) else {
            throw .sidecar(file: path, reason: "the zoom, tile range or tile size is out of range")
        }
        return sidecar
    }

    public func encoded() -> Data {
        ((try? sortedJSON([.prettyPrinted, .withoutEscapingSlashes])) ?? Data()) + Data("\n".utf8)
    }

    /// The stitched image's georeference: Web Mercator meters, exact to the tile grid.
    public func georeference(width: Int, height: Int) throws(GeoreferenceError) -> Georeference {
        let expected = (range.width * tileSize, range.height * tileSize)
        guard (width, height) == expected else {
            throw .sidecar(file: source, reason: "the image is \(width)x\(height) but the sidecar's tiles make \(expected.0)x\(expected.1)")
        }
        let half = Double.pi * MercatorPoint.earthRadius
        let pixel = 2 * half / (Double(tileSize) * pow(2, Double(zoom)))
        return try Georeference(a: pixel, b: 0, c: -half + Double(minX * tileSize) * pixel, d: 0, e: -pixel,
                                f: half - Double(minY * tileSize) * pixel, space: .meters, width: width, height: height)
    }
}

/// `stitch` and `split`: a zoom of tiles as one image to paint on, and back.
public enum Stitching {
    /// Most pixels a stitched image may have: 2^30 (4 GiB of RGBA, a 32768 px square).
    public static let maxPixels = 1 << 30

    /// Every tile of `range` drawn into one image (transparent where the store has none).
    /// Throws `PyramidError.tooLarge` naming the value when `tileSize` is outside
    /// `TileSetMetadata.tileSizes` or the image would exceed `maxPixels`, before allocating.
    public static func stitch(_ source: any TileSource, range: TileRange, tileSize: Int) async throws -> RGBAImage {
        let (width, height) = try imageSize(range: range, tileSize: tileSize)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for tile in range {
            guard let data = try await source.tile(TileRequest(tile)).data else { continue }
            let image = try TileLayer.resample(try RGBAImage(decoding: data.bytes, limits: .tile), to: tileSize)
            let ox = (tile.x - range.minX) * tileSize, oy = (tile.y - range.minY) * tileSize
            let rowBytes = tileSize * 4
            for row in 0..<tileSize {
                let to = ((oy + row) * width + ox) * 4
                pixels.replaceSubrange(to..<to + rowBytes, with: image.pixels[row * rowBytes..<(row + 1) * rowBytes])
            }
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }

    /// The stitched image's width and height in pixels, checked (tile sizes come from store
    /// metadata) without an arithmetic that could overflow.
    public static func imageSize(range: TileRange, tileSize: Int) throws(PyramidError) -> (width: Int, height: Int) {
        let sizes = TileSetMetadata.tileSizes
        guard sizes.contains(tileSize) else {
            throw .tooLarge("tile size \(tileSize) is outside \(sizes.lowerBound)-\(sizes.upperBound) pixels")
        }
        let (width, wide) = range.width.multipliedReportingOverflow(by: tileSize)
        let (height, tall) = range.height.multipliedReportingOverflow(by: tileSize)
        let (pixels, many) = width.multipliedReportingOverflow(by: height)
        guard !wide, !tall, !many, pixels <= maxPixels else {
            throw .tooLarge("\(range.width)x\(range.height) tiles of \(tileSize) px make an image larger than \(maxPixels) pixels")
        }
        return (width, height)
    }

    /// One tile cut from a stitched image.
    public static func crop(_ image: RGBAImage, tile: TileID, sidecar: StitchSidecar) -> RGBAImage {
        let size = sidecar.tileSize
        return image.cropped(x: (tile.x - sidecar.minX) * size, y: (tile.y - sidecar.minY) * size, width: size, height: size)
    }

    /// A parent drawn from its four children (top-left, top-right, bottom-left, bottom-right;
    /// nil where none), averaged as the pyramid's lower zooms are.
    public static func parent(from children: [RGBAImage?], size: Int) -> RGBAImage? {
        TileWarper.average(children, size: size)
    }
}
