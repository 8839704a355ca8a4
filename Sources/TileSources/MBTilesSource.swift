import Foundation
import Canvas
public import TileMath
public import MBTiles

/// An MBTiles file as a tile source.
///
/// Metadata is checked when the file is opened, field by field (MBTiles 1.3 makes every
/// field but `name` and `format` optional):
/// - `minzoom`, `maxzoom`: when present, whole numbers in 0-30 with minzoom ≤ maxzoom, or
///   opening fails: they decide which tiles are asked for and where overzoom starts, so a
///   wrong one silently changes the map. When absent, the zooms of the stored tiles, which
///   must then lie in 0-30 too.
/// - `tile_size` (TileKit's own key): when present, a whole number in 16-4096, or opening
///   fails (every tile would be scaled to it).
/// - `bounds`, `center` (and the center's zoom): informative; a value that is not finite,
///   out of range or malformed is ignored and named in `metadata.warnings`.
/// - `format`: an unknown format is left open (nil), the tiles' own bytes decide.
/// Rows of the `tiles` table are not scanned here (a large file would take seconds):
/// lookups only ask for valid tiles, and listing every tile (`convert`, `info`) fails on
/// the first row outside the pyramid, naming it.
public struct MBTilesSource: LocalTileSource {
    public let reader: MBTilesReader
    public let metadata: TileSetMetadata

    public init(path: String) throws(TileSourceError) {
        do {
            reader = try MBTilesReader(path: path)
        } catch {
            if !FileManager.default.fileExists(atPath: path) { throw .notFound(path: path) }
            throw .corrupt(path: path, reason: error.message)
        }
        let reader = reader
        metadata = try Self.metadata(from: reader.metadata, path: path, storedZooms: { try reader.storedZoomRange() })
    }

    /// TileKit's metadata from an MBTiles file's `metadata` table, checked as the type's
    /// documentation says; `storedZooms` gives the zooms of the stored tiles when the table
    /// lacks them. Errors are `.corrupt(path:reason:)` naming the field and its value.
    /// (An entry point for fuzzing MBTiles metadata without SQLite.)
    public static func metadata(from stored: MBTiles.Metadata, path: String,
                                storedZooms: () throws -> ClosedRange<Int>?) throws(TileSourceError) -> TileSetMetadata {
        func invalid(_ field: String, _ reason: String) -> TileSourceError {
            .corrupt(path: path, reason: "metadata \(field) \(reason)")
        }
        func zoom(_ key: String) throws(TileSourceError) -> Int? {
            guard let text = stored.values[key] else { return nil }
            guard let value = MetadataText.zoom(text) else {
                throw invalid(key, "\"\(text)\" is not a whole zoom in \(TileSetMetadata.zooms.lowerBound)-\(TileSetMetadata.zooms.upperBound)")
            }
            return value
        }
        var metadata = TileSetMetadata(name: stored.name ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                                       format: stored.format.flatMap(ImageFormat.init(name:)), scheme: .tms)
        var minZoom = try zoom("minzoom"), maxZoom = try zoom("maxzoom")
        if minZoom == nil || maxZoom == nil {
            let range: ClosedRange<Int>?
            do {
                range = try storedZooms()
            } catch let error as MBTilesError {
                throw .corrupt(path: path, reason: "\(error.reason) (and the metadata names no minzoom and maxzoom)")
            } catch {
                throw .unreadable(path: path, reason: "\(error)")
            }
            if let range {
                for value in [range.lowerBound, range.upperBound] where !TileSetMetadata.zooms.contains(value) {
                    throw .corrupt(path: path, reason: "tiles table: zoom_level \(value) is outside \(TileSetMetadata.zooms.lowerBound)-\(TileSetMetadata.zooms.upperBound) (and the metadata names no minzoom and maxzoom)")
                }
                minZoom = minZoom ?? range.lowerBound
                maxZoom = maxZoom ?? range.upperBound
            }
        }
        metadata.minZoom = minZoom ?? metadata.minZoom
        metadata.maxZoom = maxZoom ?? max(metadata.maxZoom, metadata.minZoom)
        guard metadata.minZoom <= metadata.maxZoom else {
            throw invalid("minzoom", "\(metadata.minZoom) is above maxzoom \(metadata.maxZoom)")
        }
        if let text = stored.values["tile_size"] {
            guard let size = MetadataText.wholeNumber(text), TileSetMetadata.tileSizes.contains(size) else {
                throw invalid("tile_size", "\"\(text)\" is not a tile size in \(TileSetMetadata.tileSizes.lowerBound)-\(TileSetMetadata.tileSizes.upperBound) pixels")
            }
            metadata.tileSize = size
        }
        if let text = stored.bounds {
            metadata.bounds = MetadataText.bounds(text)
            if metadata.bounds == nil { metadata.warnings.append("metadata bounds \"\(text)\" is not W,S,E,N in degrees; ignored") }
        }
        if let text = stored.center {
            if let (center, zoom) = MetadataText.center(text) {
                metadata.center = center
                metadata.centerZoom = zoom
                if zoom == nil, text.split(separator: ",").count > 2 {
                    metadata.warnings.append("metadata center \"\(text)\": the zoom is not a whole zoom in \(TileSetMetadata.zooms.lowerBound)-\(TileSetMetadata.zooms.upperBound); ignored")
                }
            } else {
                metadata.warnings.append("metadata center \"\(text)\" is not LON,LAT,ZOOM in degrees; ignored")
            }
        }
        metadata.attribution = stored.attribution
        metadata.description = stored.description
        metadata.shardRecord = stored.values[TileSetMetadata.shardRecordKey]
        return metadata
    }

    /// Fails at once when a writer holds the file, or after 50 ms of work.
    public func tileNow(_ request: TileRequest) -> TileResult? {
        try? read(request, immediately: true)
    }

    public func tile(_ request: TileRequest) async throws -> TileResult {
        try read(request, immediately: false)
    }

    /// The lookup both answer with, its errors naming the file.
    private func read(_ request: TileRequest, immediately: Bool) throws -> TileResult {
        let bytes: [UInt8]?
        do {
            bytes = try reader.tile(request.tile, immediately: immediately)
        } catch let error as SQLiteError {
            throw TileSourceError(error, path: reader.path)
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
            throw .unwritable(path: path, reason: IOFailure.cause(of: error) ?? error.message)
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
        if let record = metadata.shardRecord { values[TileSetMetadata.shardRecordKey] = record }
        try writer.finish(metadata: MBTiles.Metadata(values))
    }
}
