import Foundation
import Testing
import MapProjects
@testable import TileServer

/// A map project is read, checked and opened once: what `MapProjectReader.open` opened is
/// what the server serves, and `/play` never reads its route again.
@Suite struct MapOpenedOnceTests {
    @Test func playStreamsARouteWhoseFileIsGoneSinceTheMapOpened() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        try Data("""
        <gpx version="1.1" creator="test"><trk><trkseg><trkpt lat="40.7677" lon="-73.9719"/><trkpt lat="40.7686" lon="-73.9712"/></trkseg></trk></gpx>
        """.utf8).write(to: fixture.folder.appendingPathComponent("walk.gpx"))
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.97187,40.767769]},"properties":{"id":"goblin","kind":"monster"}}]}"#.utf8)
            .write(to: fixture.folder.appendingPathComponent("pois.geojson"))
        let file = fixture.folder.appendingPathComponent("game.json")
        try Data(#"""
        {"name": "game", "layers": [{"id": "grid", "type": "generated"}],
         "game": {"pois": "pois.geojson", "routes": {"walk": "walk.gpx"}, "tick": 1}}
        """#.utf8).write(to: file)
        let opened = try MapProjectReader.open(file)
        let server = try TileServer(maps: [try ServedMap(opened)])
        try FileManager.default.removeItem(at: fixture.folder.appendingPathComponent("walk.gpx"))
        try FileManager.default.removeItem(at: fixture.folder.appendingPathComponent("pois.geojson"))

        let response = await server.handle(HTTPRequest(method: "GET", path: "/maps/game/play", query: ["gpx": "walk", "time-warp": "1000"]))
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let producer = try #require(response.stream)
        let stream = ResponseStream()
        await producer(stream)
        stream.finish()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let count = buffer.withUnsafeMutableBytes { stream.pull(into: $0.baseAddress!, max: $0.count) } ?? 0
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        #expect(text.contains("event: position\ndata: {\"lat\":40.7677,\"lon\":-73.9719,\"t\":0}"), "\(text.prefix(300))")
        #expect(text.contains("event: end\ndata: {\"route\":\"walk\"}"), "\(text.suffix(300))")
    }
}
