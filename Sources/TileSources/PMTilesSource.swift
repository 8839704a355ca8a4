import Foundation
public import Canvas
public import TileMath
public import PMTiles

/// A PMTiles v3 file as a tile source.
public struct PMTilesSource: TileSource {
    public let reader: PMTilesReader
    public let metadata: TileSetMetadata

    public init(path: String) throws(TileSourceError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .notFound(path: path) }
        do {
            reader = try PMTilesReader(path: path)
        } catch {
            throw .corrupt(path: path, reason: error.description)
        }
        let header = reader.header
        let json = (try? JSONSerialization.jsonObject(with: Data(reader.metadataJSON))) as? [String: Any] ?? [:]
        var metadata = TileSetMetadata(name: json["name"] as? String ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                                       scheme: .xyz, minZoom: Int(header.minZoom), maxZoom: Int(header.maxZoom))
        switch header.tileType {
        case .png: metadata.format = .png
        case .jpeg: metadata.format = .jpeg
        case .webp: metadata.format = .webp
        default: metadata.format = nil
        }
        metadata.bounds = try? BoundingBox(west: Double(header.minLonE7) / 1e7, south: Double(header.minLatE7) / 1e7,
                                           east: Double(header.maxLonE7) / 1e7, north: Double(header.maxLatE7) / 1e7).validated()
        metadata.center = try? Coordinate(latitude: Double(header.centerLatE7) / 1e7, longitude: Double(header.centerLonE7) / 1e7).validated()
        metadata.centerZoom = Int(header.centerZoom)
        metadata.attribution = json["attribution"] as? String
        metadata.description = json["description"] as? String
        if let size = json["tile_size"] as? Int { metadata.tileSize = size }
        self.metadata = metadata
    }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        let bytes: [UInt8]?
        do {
            bytes = try reader.tile(request.tile)
        } catch {
            throw TileSourceError.corrupt(path: reader.path, reason: error.description)
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
        header.minZoom = UInt8(metadata.minZoom)
        header.maxZoom = UInt8(metadata.maxZoom)
        let bounds = metadata.bounds ?? .world
        func e7(_ degrees: Double) -> Int32 { Int32((degrees * 1e7).rounded()) }
        header.minLonE7 = e7(bounds.west); header.minLatE7 = e7(bounds.south)
        header.maxLonE7 = e7(bounds.east); header.maxLatE7 = e7(bounds.north)
        let center = metadata.center ?? bounds.center
        header.centerLonE7 = e7(center.longitude); header.centerLatE7 = e7(center.latitude)
        header.centerZoom = UInt8(metadata.centerZoom ?? metadata.minZoom)
        var json: [String: Any] = ["name": metadata.name, "type": "overlay", "tile_size": metadata.tileSize]
        if let format = metadata.format { json["format"] = format.fileExtension }
        if let attribution = metadata.attribution { json["attribution"] = attribution }
        if let description = metadata.description { json["description"] = description }
        let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        try writer.finish(header: header, metadataJSON: Array(data))
    }
}
