import Foundation
import Testing
import Canvas
import TileMath
@testable import TileSources

@Suite struct FolderTileSourceTests {
    @Test(arguments: [TileScheme.xyz, .tms])
    func writeThenReadBothSchemes(scheme: TileScheme) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try FolderTileWriter(directory: directory, scheme: scheme, fileExtension: "png")
        let tiles = [TileID(z: 2, x: 1, y: 0), TileID(z: 2, x: 1, y: 1), TileID(z: 3, x: 2, y: 1)]
        for (index, tile) in tiles.enumerated() {
            let color = Color(red: Double(index) / 3, green: 0.5, blue: 0.2)
            try writer.write(tile, bytes: RGBAImage(width: 256, height: 256, color: color).encoded())
        }
        try writer.finish(metadata: TileSetMetadata(name: "sample", attribution: "© test"))
        // The row on disk is flipped for TMS.
        let first = tiles[0]
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("2/1/\(scheme.row(for: first)).png").path))
        #expect(scheme == .xyz || !FileManager.default.fileExists(atPath: directory.appendingPathComponent("2/1/0.png").path))
        // No temporary file is left behind.
        let leftovers = FileManager.default.enumerator(atPath: directory.path)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)

        let source = try FolderTileSource(directory: directory)  // the scheme comes from metadata.json
        #expect(source.metadata.scheme == scheme)
        #expect(source.metadata.minZoom == 2 && source.metadata.maxZoom == 3)
        #expect(source.metadata.format == .png && source.metadata.tileSize == 256)
        #expect(source.metadata.name == "sample" && source.metadata.attribution == "© test")
        for (index, tile) in tiles.enumerated() {
            let image = try #require(try await source.tile(TileRequest(tile)).image)
            #expect(near(image[10, 10], Pixel(Color(red: Double(index) / 3, green: 0.5, blue: 0.2))))
        }
        #expect(try await source.tile(TileRequest(TileID(z: 2, x: 0, y: 0))) == .noTile)
    }

    @Test func boundsAreScannedWithoutMetadata() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tile = TileID(z: 5, x: 9, y: 12)
        let path = directory.appendingPathComponent("5/9/12.jpg")
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(RGBAImage(width: 512, height: 512, color: .white).encoded(.jpeg())).write(to: path)
        let source = try FolderTileSource(directory: directory)
        #expect(source.metadata.bounds == tile.bounds)
        #expect(source.metadata.format == .jpeg && source.metadata.tileSize == 512 && source.metadata.scheme == .xyz)
    }

    @Test func badFoldersAndTilesNameThePath() async throws {
        #expect(throws: TileSourceError.notFound(path: "/nonexistent/tiles")) {
            try FolderTileSource(directory: URL(fileURLWithPath: "/nonexistent/tiles"))
        }
        let empty = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(throws: TileSourceError.self) { try FolderTileSource(directory: empty) }
        // A tile file that is not an image.
        let path = empty.appendingPathComponent("1/0/0.png")
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("<html>not a tile</html>".utf8).write(to: path)
        let source = try FolderTileSource(directory: empty)
        await #expect(throws: TileSourceError.corrupt(path: path.path, reason: "tile 1/0/0 is not a PNG, JPEG or WebP image")) {
            try await source.tile(TileRequest(TileID(z: 1, x: 0, y: 0)))
        }
    }
}
