import Foundation
import Canvas
public import TileMath
public import PMTiles

/// A PMTiles v3 file as a tile source.
///
/// The reader checks every offset, length and zoom of the file (`PMTilesReader`); here the
/// header and metadata become TileKit's: a minzoom beyond TileKit's deepest zoom (30) or a
/// `tile_size` that is not a whole number in 16-4096 fails; a maxzoom of 31 is served up to
/// 30; bounds, center and center zoom out of range, and metadata that is not a JSON object,
/// are ignored and named in `metadata.warnings`.
public struct PMTilesSource: LocalTileSource {
    public let reader: PMTilesReader
    public let metadata: TileSetMetadata

    public init(path: String) throws(TileSourceError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .notFound(path: path) }
        do {
            reader = try PMTilesReader(path: path)
        } catch {
            throw .corrupt(path: path, reason: error.reason)
        }
        metadata = try Self.metadata(of: reader, path: path)
    }

    /// Opens a PMTiles file held in memory (tests and fuzzing); `name` stands for its path.
    public init(bytes: [UInt8], name: String = "<memory>") throws(TileSourceError) {
        do {
            reader = try PMTilesReader(bytes: bytes, name: name)
        } catch {
            throw .corrupt(path: name, reason: error.reason)
        }
        metadata = try Self.metadata(of: reader, path: name)
    }

    static func metadata(of reader: PMTilesReader, path: String) throws(TileSourceError) -> TileSetMetadata {
        try metadata(header: reader.header, metadataJSON: reader.metadataJSON, path: path,
                     name: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent)
    }

    /// TileKit's metadata from a checked header and the file's metadata JSON; `name` is
    /// used when the JSON has none.
    static func metadata(header: PMTilesHeader, metadataJSON: [UInt8], path: String, name: String) throws(TileSourceError) -> TileSetMetadata {
        let zooms = TileSetMetadata.zooms
        guard zooms.contains(Int(header.minZoom)) else {
            throw .corrupt(path: path, reason: "minzoom \(header.minZoom) is beyond TileKit's deepest zoom \(zooms.upperBound)")
        }
        var metadata = TileSetMetadata(name: name, scheme: .xyz, minZoom: Int(header.minZoom), maxZoom: min(Int(header.maxZoom), zooms.upperBound))
        if Int(header.maxZoom) > zooms.upperBound {
            metadata.warnings.append("maxzoom \(header.maxZoom) is beyond TileKit's deepest zoom; served up to \(zooms.upperBound)")
        }
        var json = [String: Any]()
        if !metadataJSON.isEmpty {
            if let object = (try? JSONSerialization.jsonObject(with: Data(metadataJSON))) as? [String: Any] {
                json = object
            } else {
                metadata.warnings.append("metadata is not a JSON object; ignored")
            }
        }
        if let name = json["name"] as? String { metadata.name = name }
        switch header.tileType {
        case .png: metadata.format = .png
        case .jpeg: metadata.format = .jpeg
        case .webp: metadata.format = .webp
        default: metadata.format = nil
        }
        // E7 values are whole Int32s: finite; only their range can be wrong.
        let bounds = BoundingBox(west: Double(header.minLonE7) / 1e7, south: Double(header.minLatE7) / 1e7,
                                 east: Double(header.maxLonE7) / 1e7, north: Double(header.maxLatE7) / 1e7)
        do { metadata.bounds = try bounds.validated() } catch { metadata.warnings.append("header bounds ignored: \(error)") }
        let center = Coordinate(latitude: Double(header.centerLatE7) / 1e7, longitude: Double(header.centerLonE7) / 1e7)
        do { metadata.center = try center.validated() } catch { metadata.warnings.append("header center ignored: \(error)") }
        if zooms.contains(Int(header.centerZoom)) {
            metadata.centerZoom = Int(header.centerZoom)
        } else {
            metadata.warnings.append("header center zoom \(header.centerZoom) is beyond TileKit's deepest zoom; ignored")
        }
        metadata.attribution = json["attribution"] as? String
        metadata.description = json["description"] as? String
        metadata.shardRecord = json[TileSetMetadata.shardRecordKey] as? String
        if let value = json["tile_size"] {
            // JSON numbers arrive as NSNumber; 1e12 or 2.5 must not pass as a size.
            let size = (value as? NSNumber).flatMap { number in number.doubleValue.isFinite ? Int(exactly: number.doubleValue) : nil }
            guard let size, TileSetMetadata.tileSizes.contains(size) else {
                throw .corrupt(path: path, reason: "metadata tile_size \(value) is not a tile size in \(TileSetMetadata.tileSizes.lowerBound)-\(TileSetMetadata.tileSizes.upperBound) pixels")
            }
            metadata.tileSize = size
        }
        return metadata
    }

    /// The same read as `tile(_:)` (a local file's directories and data, bounded by the
    /// reader's checks); nil on an error, which `tile(_:)` then reports.
    public func tileNow(_ request: TileRequest) -> TileResult? {
        try? read(request)
    }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        try read(request)
    }

    /// The read both answer with, its errors naming the file.
    private func read(_ request: TileRequest) throws -> TileResult {
        let bytes: [UInt8]?
        do {
            bytes = try reader.tile(request.tile)
        } catch {
            if case .io(let reason) = error { throw TileSourceError.unreadable(path: reader.path, reason: reason) }
            throw TileSourceError.corrupt(path: reader.path, reason: error.reason)
        }
        return try TileResult.stored(bytes, in: reader.path, tile: request.tile)
    }
}

/// Writes a PMTiles file; repeated tiles are stored once and runs of them share one entry.
public final class PMTilesStoreWriter: TileStoreWriter {
    public let writer: PMTilesWriter

    public init(path: String) throws(TileSourceError) {
        do {
            writer = try PMTilesWriter(path: path)
        } catch {
            throw .unwritable(path: path, reason: error.description)
        }
    }

    public func write(_ tile: TileID, bytes: [UInt8]) throws { try writer.write(tile, bytes: bytes) }
    public func contains(_ tile: TileID) throws -> Bool { writer.contains(tile) }

    public func finish(metadata: TileSetMetadata) throws {
        var header = PMTilesHeader()
        switch metadata.format {
        case .png: header.tileType = .png
        case .jpeg: header.tileType = .jpeg
        case .webp: header.tileType = .webp
        case nil: header.tileType = .unknown
        }
        // Sources check their zooms when opened; metadata made in code is checked here.
        let zooms = TileSetMetadata.zooms
        guard zooms.contains(metadata.minZoom), zooms.contains(metadata.maxZoom), metadata.minZoom <= metadata.maxZoom else {
            throw TileSourceError.invalid("\(writer.path): zooms \(metadata.minZoom)-\(metadata.maxZoom) are not within \(zooms.lowerBound)-\(zooms.upperBound)")
        }
        header.minZoom = UInt8(metadata.minZoom)
        header.maxZoom = UInt8(metadata.maxZoom)
        let bounds = metadata.bounds.flatMap { try? $0.validated() } ?? .world
        // Validated degrees times 10^7 fit an Int32 (180e7 < 2^31).
        func e7(_ degrees: Double) -> Int32 { Int32(exactly: (degrees * 1e7).rounded()) ?? 0 }
        header.minLonE7 = e7(bounds.west); header.minLatE7 = e7(bounds.south)
        header.maxLonE7 = e7(bounds.east); header.maxLatE7 = e7(bounds.north)
        let center = metadata.center.flatMap { try? $0.validated() } ?? bounds.center
        header.centerLonE7 = e7(center.longitude); header.centerLatE7 = e7(center.latitude)
        header.centerZoom = UInt8(min(max(metadata.centerZoom ?? metadata.minZoom, zooms.lowerBound), zooms.upperBound))
        let data = try StoreMetadataJSON.pmtiles(metadata).sortedJSON()
        try writer.finish(header: header, metadataJSON: Array(data))
    }
}
