import Foundation
public import Canvas
public import TileMath
public import MBTiles

/// An MBTiles file as a tile source.
public struct MBTilesSource: TileSource {
    public let reader: MBTilesReader
    public let metadata: TileSetMetadata

    public init(path: String) throws(TileSourceError) {
        do {
            reader = try MBTilesReader(path: path)
        } catch {
            if !FileManager.default.fileExists(atPath: path) { throw .notFound(path: path) }
            throw .corrupt(path: path, reason: error.message)
        }
        let stored = reader.metadata
        var metadata = TileSetMetadata(name: stored.name ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                                       format: stored.format.flatMap(ImageFormat.init(name:)), scheme: .tms)
        if let minZoom = stored.minZoom, let maxZoom = stored.maxZoom {
            metadata.minZoom = minZoom
            metadata.maxZoom = maxZoom
        } else if let range = try? reader.storedZoomRange() {
            metadata.minZoom = range.lowerBound
            metadata.maxZoom = range.upperBound
        }
        metadata.bounds = stored.bounds.flatMap(MetadataText.bounds)
        if let (center, zoom) = stored.center.flatMap(MetadataText.center) {
            metadata.center = center
            metadata.centerZoom = zoom
        }
        metadata.attribution = stored.attribution
        metadata.description = stored.description
        if let tileSize = stored.values["tile_size"].flatMap({ Int($0) }) { metadata.tileSize = tileSize }
        self.metadata = metadata
    }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        let bytes: [UInt8]?
        do {
            bytes = try reader.tile(request.tile)
        } catch {
            throw TileSourceError.unreadable(path: reader.path, reason: "\(error)")
        }
        return try TileResult.stored(bytes, in: reader.path, tile: request.tile)
    }
}

/// Writes an MBTiles file. Metadata follows MBTiles 1.3: `format` is `png`, `jpg` or `webp`,
/// `bounds` W,S,E,N, `center` LON,LAT,ZOOM.
public final class MBTilesStoreWriter: TileStoreWriter {
    public let writer: MBTilesWriter

    public init(path: String) throws(TileSourceError) {
        do {
            writer = try MBTilesWriter(path: path)
        } catch {
            throw .unwritable(path: path, reason: error.message)
        }
    }

    public func write(_ tile: TileID, bytes: [UInt8]) throws { try writer.write(tile, bytes: bytes) }
    public func contains(_ tile: TileID) throws -> Bool { try writer.contains(tile) }
    public func checkpoint() throws { try writer.commit() }

    public func finish(metadata: TileSetMetadata) throws {
        var values = ["name": metadata.name, "minzoom": "\(metadata.minZoom)", "maxzoom": "\(metadata.maxZoom)",
                      "type": "overlay", "version": "1.3", "tile_size": "\(metadata.tileSize)"]
        if let format = metadata.format { values["format"] = format.fileExtension }
        if let bounds = metadata.bounds { values["bounds"] = MetadataText.bounds(bounds) }
        let center = metadata.center ?? metadata.bounds?.center
        if let center {
            values["center"] = "\(center.longitude.shortDescription),\(center.latitude.shortDescription),\(metadata.centerZoom ?? metadata.minZoom)"
        }
        if let attribution = metadata.attribution { values["attribution"] = attribution }
        if let description = metadata.description { values["description"] = description }
        try writer.finish(metadata: MBTiles.Metadata(values))
    }
}
