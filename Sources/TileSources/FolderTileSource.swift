import Foundation
import Canvas
public import TileMath

/// A pyramid of tile files `DIR/{z}/{x}/{row}.{ext}`, rows in XYZ or TMS order.
///
/// Paths are built from validated integers, never from request text, so nothing outside
/// the directory can be read. Without a format, the extension of the first tile file
/// found decides it. A `metadata.json` beside the zoom folders (as mb-util writes) supplies
/// the name, bounds, attribution and scheme; otherwise zooms and bounds are read from the
/// folder names and the tiles at the lowest zoom, and the rows are XYZ unless a
/// `tilemapresource.xml` (TMS, as gdal2tiles writes by default) is present.
public struct FolderTileSource: LocalTileSource {
    public let directory: URL
    public let metadata: TileSetMetadata
    let fileExtension: String

    public init(directory: URL, scheme: TileScheme? = nil) throws(TileSourceError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .notFound(path: directory.path)
        }
        self.directory = directory
        let zooms = Self.zoomFolders(directory)
        guard let minZoom = zooms.first, let maxZoom = zooms.last else {
            throw .corrupt(path: directory.path, reason: "no zoom folders (0-30) with tiles")
        }
        guard let sample = Self.firstTile(directory, zoom: minZoom) else {
            throw .corrupt(path: directory.path, reason: "no tile files under \(minZoom)/")
        }
        fileExtension = sample.pathExtension
        let stored = Self.readMetadataJSON(directory)
        // A tilemapresource.xml is the TMS spec's own descriptor (gdal2tiles writes one only
        // in its default TMS mode), so without other word its rows count from the south.
        let hasTMSDescriptor = FileManager.default.fileExists(atPath: directory.appendingPathComponent("tilemapresource.xml").path)
        let resolvedScheme = scheme ?? stored.scheme ?? (hasTMSDescriptor ? .tms : .xyz)
        var metadata = TileSetMetadata(name: stored.name ?? directory.lastPathComponent,
                                       format: ImageFormat(name: fileExtension), scheme: resolvedScheme,
                                       minZoom: minZoom, maxZoom: maxZoom)
        metadata.bounds = stored.bounds ?? Self.scanBounds(directory, zoom: minZoom, scheme: resolvedScheme)
        metadata.attribution = stored.attribution
        metadata.description = stored.description
        metadata.shardRecord = stored.shardRecord
        if let data = try? Data(contentsOf: sample), let image = try? RGBAImage(decoding: data, limits: .tile) {
            if TileSetMetadata.tileSizes.contains(image.width) {
                metadata.tileSize = image.width
            } else {
                metadata.warnings.append("\(sample.path) is \(image.width) px wide, not a tile size in \(TileSetMetadata.tileSizes.lowerBound)-\(TileSetMetadata.tileSizes.upperBound); tiles are shown at \(metadata.tileSize) px")
            }
        }
        self.metadata = metadata
    }

    /// The file that holds a tile (it may not exist).
    public func url(for tile: TileID) -> URL {
        directory.appendingPathComponent("\(tile.z)/\(tile.x)/\(metadata.scheme.row(for: tile)).\(fileExtension)")
    }

    /// Only a regular file of at most 8 MiB, opened without blocking (a FIFO or a device
    /// planted in the folder is left to `tile(_:)`); a missing file is no tile.
    public func tileNow(_ request: TileRequest) -> TileResult? {
        let path = url(for: request.tile).path
        let file = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { return errno == ENOENT || errno == ENOTDIR ? .noTile : nil }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= Self.largestTileNow else { return nil }
        let size = Int(status.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        let read = bytes.withUnsafeMutableBytes { pread(file, $0.baseAddress, size, 0) }
        guard read == size else { return nil }
        return try? TileResult.stored(bytes, in: path, tile: request.tile)
    }

    /// The largest tile file `tileNow` reads.
    static let largestTileNow = 8 << 20

    public func tile(_ request: TileRequest) async throws -> TileResult {
        let url = url(for: request.tile)
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: url))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return .noTile
        } catch {
            throw TileSourceError.unreadable(path: url.path, reason: (error as NSError).localizedDescription)
        }
        return try TileResult.stored(bytes, in: url.path, tile: request.tile)
    }

    static func zoomFolders(_ directory: URL) -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { Int($0) }.filter { (0...TileID.maxZoom).contains($0) && String($0) == String($0) }.sorted()
    }

    static func firstTile(_ directory: URL, zoom: Int) -> URL? {
        let zoomURL = directory.appendingPathComponent("\(zoom)")
        for column in ((try? FileManager.default.contentsOfDirectory(atPath: zoomURL.path)) ?? []).sorted() where Int(column) != nil {
            let columnURL = zoomURL.appendingPathComponent(column)
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: columnURL.path)) ?? []).sorted()
            if let file = files.first(where: { ImageFormat(name: URL(fileURLWithPath: $0).pathExtension) != nil }) {
                return columnURL.appendingPathComponent(file)
            }
        }
        return nil
    }

    /// The union of the bounds of the tiles present at one zoom.
    static func scanBounds(_ directory: URL, zoom: Int, scheme: TileScheme) -> BoundingBox? {
        let zoomURL = directory.appendingPathComponent("\(zoom)")
        var corners = [Coordinate]()
        for column in (try? FileManager.default.contentsOfDirectory(atPath: zoomURL.path)) ?? [] {
            guard let x = Int(column) else { continue }
            for file in (try? FileManager.default.contentsOfDirectory(atPath: zoomURL.appendingPathComponent(column).path)) ?? [] {
                guard let row = Int(URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent),
                      TileID.isValid(z: zoom, x: x, y: row) else { continue }
                let bounds = scheme.tile(z: zoom, x: x, row: row).bounds
                corners.append(bounds.northWest)
                corners.append(bounds.southEast)
            }
        }
        return BoundingBox(covering: corners)
    }

    struct StoredMetadata {
        var name: String?
        var bounds: BoundingBox?
        var attribution: String?
        var description: String?
        var scheme: TileScheme?
        var shardRecord: String?
    }

    /// The shard record of a folder's metadata.json, read even when the folder has no tile
    /// (a shard that owned only empty tiles), which cannot be opened as a source.
    public static func shardRecord(in directory: URL) -> String? { readMetadataJSON(directory).shardRecord }

    static func readMetadataJSON(_ directory: URL) -> StoredMetadata {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("metadata.json")),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return StoredMetadata() }
        var stored = StoredMetadata()
        stored.name = object["name"] as? String
        stored.attribution = object["attribution"] as? String
        stored.description = object["description"] as? String
        stored.shardRecord = object[TileSetMetadata.shardRecordKey] as? String
        stored.scheme = (object["scheme"] as? String).flatMap(TileScheme.init(rawValue:))
        if let text = object["bounds"] as? String {
            stored.bounds = MetadataText.bounds(text)
        } else if let values = object["bounds"] as? [Double], values.count == 4 {
            stored.bounds = try? BoundingBox(west: values[0], south: values[1], east: values[2], north: values[3]).validated()
        }
        return stored
    }
}
