import Foundation
import Testing
import Canvas
import Colors
import TileMath
import TileSources
import MapProjects
import HTTPServer
@testable import TileServer

/// Tiles a local store holds as they are to be sent are read on the server's own thread
/// (`fast`), and answered exactly as the task would have answered them.
@Suite struct StoredTileFastPathTests {
    /// A one-layer map on an MBTiles file: tiles at zooms 0-1, white at 0, red at 1.
    func server(_ fixture: ProjectFixture) throws -> (TileServer, stored: [UInt8]) {
        let mbtiles = fixture.folder.appendingPathComponent("world.mbtiles").path
        let writer = try TileStore.writer(mbtiles)
        let stored = try Canvas(width: 256, height: 256, background: Color(red: 1, green: 0, blue: 0)).encoded(.png())
        try writer.write(TileID(z: 0, x: 0, y: 0), bytes: try Canvas(width: 256, height: 256, background: .white).encoded(.png()))
        try writer.write(TileID(z: 1, x: 0, y: 0), bytes: stored)
        try writer.finish(metadata: TileSetMetadata(name: "World", format: .png, minZoom: 0, maxZoom: 1))
        return (try TileServer(maps: [try ServedMap(try MapProjectReader.store(mbtiles))]), stored)
    }

    @Test func aStoredTileIsAnsweredOnTheCallingThreadAsTheTaskWould() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let (fast, stored) = try server(fixture)
        let (slow, _) = try server(fixture)
        let request = HTTPRequest(method: "GET", path: "/maps/world/1/0/0.png")
        let read = try #require(fast.fast(request))
        let made = await slow.handle(request)
        #expect(read.status == 200 && read.body == stored)
        for name in ["Content-Type", "ETag", "Cache-Control", "X-Tile-Provenance", "Cache-Status"] {
            #expect(read.header(name) == made.header(name), "\(name)")
        }
        // It is kept: the next request is a memory hit, and a matching ETag gets a 304.
        #expect(fast.fast(request)?.header("Cache-Status")?.contains("hit") == true)
        let etag = try #require(read.header("ETag"))
        #expect(fast.fast(HTTPRequest(method: "GET", path: "/maps/world/0/0/0.png", headers: ["if-none-match": "\"x\""]))?.status == 200)
        #expect(fast.fast(HTTPRequest(method: "GET", path: request.path, headers: ["if-none-match": etag]))?.status == 304)
    }

    /// What is not stored as it is to be sent is left to the task, which makes or refuses it.
    @Test func everythingElseIsLeftToTheTask() async throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let (server, _) = try server(fixture)
        for (path, expected) in [("/maps/world/1/1/1.png", 204),  // not stored: a plain store answers 204
                               ("/maps/world/2/0/0.png", 200),  // overzoomed from zoom 1
                               ("/maps/world/1/0/0.webp", 200),  // another format
                               ("/maps/world/1/0/0@2x.png", 200),  // another size
                               ("/maps/nowhere/1/0/0.png", 404)] {
            let request = HTTPRequest(method: "GET", path: path)
            #expect(server.fast(request) == nil, "\(path)")
            let status = await server.handle(request).status
            #expect(status == expected, "\(path): \(status)")
        }
    }

    /// What a connection thread reads never waits: a FIFO planted in a folder store is left
    /// to the task (which may wait on it, bounded by the handler's timeout).
    @Test func aFIFOInAFolderIsNotReadNow() throws {
        let fixture = try ProjectFixture()
        defer { fixture.remove() }
        let folder = fixture.folder.appendingPathComponent("fifo")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("1/0"), withIntermediateDirectories: true)
        try Data(try Canvas(width: 256, height: 256, background: .white).encoded(.png())).write(to: folder.appendingPathComponent("1/0/0.png"))
        #expect(mkfifo(folder.appendingPathComponent("1/0/1.png").path, 0o644) == 0)
        let source = try FolderTileSource(directory: folder)
        let started = ContinuousClock.now
        #expect(source.tileNow(TileRequest(TileID(z: 1, x: 0, y: 1))) == nil)
        #expect(ContinuousClock.now - started < .seconds(1))
        guard case .tile(let data)? = source.tileNow(TileRequest(TileID(z: 1, x: 0, y: 0))) else {
            Issue.record("the regular file was not read")
            return
        }
        #expect(data.format == .png)
        guard case .noTile? = source.tileNow(TileRequest(TileID(z: 1, x: 1, y: 1))) else {
            Issue.record("a missing file is no tile")
            return
        }
    }
}
