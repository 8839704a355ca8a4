import Foundation
import Testing
import Canvas
import TileMath
import TestSupport
import TileSources

/// The TileSources example in README.md, with the local test server standing in for
/// OpenStreetMap and temporary files for the paths.
@Suite struct SourcesReadmeExampleTests {
    @Test func readmeExample() async throws {
        let server = try TestTileServer()
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let parkPath = directory.appendingPathComponent("park.mbtiles").path
        let tile = TileID(z: 15, x: 9651, y: 12311)
        let writer = try MBTilesStoreWriter(path: parkPath)
        try writer.write(tile, bytes: RGBAImage(width: 512, height: 512, color: Color(red: 0, green: 0.5, blue: 0)).encoded())
        try writer.finish(metadata: TileSetMetadata(name: "park", format: .png, minZoom: 15, maxZoom: 15, tileSize: 256))

        let options = RemoteOptions(userAgent: "MapQuest/1.0 (you@example.com)")
        let osm = try RemoteTileSource(template: URLTemplate(server.url("/tiles/{z}/{x}/{y}.png")),
                                       metadata: TileSetMetadata(name: "osm", attribution: "© OpenStreetMap contributors"),
                                       options: options)
        let base = TileLayer(source: try CachedTileSource(upstream: osm, cachePath: directory.appendingPathComponent("cache/osm.mbtiles").path))

        var parkOptions = LayerOptions()
        parkOptions.zIndex = 1
        parkOptions.opacity = 0.7
        parkOptions.bounds = BoundingBox(west: -73.9819, south: 40.7644, east: -73.9493, north: 40.8006)
        let park = TileLayer(source: try MBTilesSource(path: parkPath), options: parkOptions)

        let result = try await TileComposer(layers: [base, park]).tile(TileRequest(tile, scale: 2))
        let image = try RGBAImage(decoding: try #require(result.data).bytes)
        // 512 px (@2x); the park's green at 70% over the server's colour for this tile.
        #expect(image.width == 512 && result.data?.provenance == .composed)
        let under = Pixel(red: UInt8((9651 * 37) % 256), green: UInt8((12311 * 59) % 256), blue: UInt8((15 * 23) % 256))
        let expected = Pixel(red: UInt8((Double(under.red) * 0.3).rounded()), green: UInt8((Double(under.green) * 0.3 + 128 * 0.7).rounded()),
                             blue: UInt8((Double(under.blue) * 0.3).rounded()))
        #expect(image[100, 100].distance(to: expected) <= 3, "\(image[100, 100]) vs \(expected)")
    }
}
