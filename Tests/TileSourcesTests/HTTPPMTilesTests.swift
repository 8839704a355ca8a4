import Foundation
import Testing
import Canvas
import TileMath
import TestSupport
@testable import PMTiles
@testable import TileSources

/// PMTiles over HTTP against nginx (Debian), which answers range requests, ETag and
/// If-Match as CDNs and object stores do, and against the fault-injecting server of
/// scripts/test-tile-server.py for what servers get wrong. Serialized: the fault server's
/// `/set-mode/` is one setting, and the machine has two cores.
@Suite(.serialized) struct HTTPPMTilesTests {
    static func options(timeout: Duration = .seconds(5)) -> RemoteOptions {
        var options = RemoteOptions.rangeReads(userAgent: "TileKitTests/1.0 (tests@tilekit.invalid)")
        options.retries = 1
        options.backoff = .milliseconds(10)
        options.timeout = timeout
        return options
    }

    /// A folder with `leafy.pmtiles` (leaf directories) served by nginx.
    struct Served {
        let directory: URL
        let path: String
        let tiles: [TileID: [UInt8]]
        let nginx: NginxProcess
        var url: String { nginx.url("/leafy.pmtiles") }

        init() throws {
            directory = temporaryDirectory()
            path = directory.appendingPathComponent("leafy.pmtiles").path
            tiles = try PMTilesArchiveFixture.write(to: path)
            nginx = try NginxProcess(root: directory)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Tiles from every leaf: all of z0-4 and every 7th of z5-6, plus tiles the file lacks.
    static func sample(_ tiles: [TileID: [UInt8]]) -> [TileID] {
        tiles.keys.sorted().enumerated().filter { $0.element.z <= 4 || $0.offset % 7 == 0 }.map(\.element)
    }

    static let absent = [TileID(z: 7, x: 3, y: 5), TileID(z: 12, x: 100, y: 200), TileID(z: 30, x: 1, y: 1)]

    @Test func tilesOverHTTPAreTheLocalFilesTiles() async throws {
        let served = try Served()
        defer { served.remove() }
        let local = try PMTilesSource(path: served.path)
        #expect(local.reader.header.leafDirectoryLength > 0 && local.reader.header.rootLength < 300)
        let remote = try await HTTPPMTilesSource.open(url: served.url, options: Self.options())
        #expect(remote.metadata == local.metadata && remote.metadata.name == "Leafy 0")
        // One request opened it: the header, root directory and metadata are in the first 16 KiB.
        #expect(served.nginx.requests(atLeast: 1) == [NginxProcess.Request(status: 206, method: "GET", path: "/leafy.pmtiles",
                                                                           range: "bytes=0-16383", ifMatch: "", bytesSent: 16384)])
        for tile in Self.sample(served.tiles) + Self.absent {
            let request = TileRequest(tile)
            #expect(try await remote.tile(request) == (try await local.tile(request)), "\(tile)")
        }
        #expect(try await remote.tile(TileRequest(TileID(z: 7, x: 3, y: 5))) == .noTile)
        // Every later request is a range of the version opened (If-Match with nginx's ETag).
        let logged = served.nginx.requests(atLeast: remote.rangeRequests)
        #expect(logged.count == remote.rangeRequests)
        #expect(logged.dropFirst().allSatisfy { $0.status == 206 && $0.range.hasPrefix("bytes=") && $0.ifMatch.hasPrefix("\\x22") }, "\(logged.prefix(3))")
    }

    @Test func onceTheDirectoriesAreWarmEachTileCostsOneRangeRequest() async throws {
        let served = try Served()
        defer { served.remove() }
        let remote = try await HTTPPMTilesSource.open(url: served.url, options: Self.options())
        let tiles = Self.sample(served.tiles)
        for tile in tiles { _ = try await remote.tile(TileRequest(tile)) }
        let leaves = remote.cachedDirectories.directories
        #expect(leaves >= 10, "the fixture should spread its entries over many leaves")
        let cold = served.nginx.requests(atLeast: remote.rangeRequests).count
        // Cold: the open, each leaf once, each tile once.
        #expect(cold == 1 + leaves + tiles.count, "\(cold) requests for \(tiles.count) tiles and \(leaves) leaves")

        for tile in tiles.reversed() { _ = try await remote.tile(TileRequest(tile)) }
        for tile in Self.absent { #expect(try await remote.tile(TileRequest(tile)) == .noTile) }
        let warm = served.nginx.requests(atLeast: cold + tiles.count)
        #expect(warm.count - cold == tiles.count, "\(warm.count - cold) requests for \(tiles.count) uncached tiles")
        #expect(remote.cachedDirectories.directories == leaves)
    }

    @Test func concurrentReadsOfOneTileShareOneRequest() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("leafy.pmtiles").path
        let tiles = try PMTilesArchiveFixture.write(to: path)
        let server = try TestTileServer()
        // Each answer comes 0.3 s late: every reader below asks while the first read is out.
        let remote = try await HTTPPMTilesSource.open(url: server.url("/pmtiles/slow/leafy.pmtiles?file=\(path)"), options: Self.options())
        try await server.resetStats()
        let tile = TileID(z: 6, x: 40, y: 17)
        let results = try await withThrowingTaskGroup(of: TileResult.self) { group in
            for _ in 0..<24 { group.addTask { try await remote.tile(TileRequest(tile)) } }
            return try await group.reduce(into: [TileResult]()) { $0.append($1) }
        }
        #expect(results.count == 24 && results.allSatisfy { $0.data?.bytes == tiles[tile] })
        // One leaf directory and one tile range, whatever the number of readers.
        #expect(try await server.stats().count == 2)
        #expect(remote.rangeRequests == 3)
    }

    /// nginx answers 412 to If-Match once the file was replaced: the header and directories
    /// are read again and the tile comes from the new file.
    @Test func aReplacedFileIsReadAgainNotMixedWithOldDirectories() async throws {
        let served = try Served()
        defer { served.remove() }
        let remote = try await HTTPPMTilesSource.open(url: served.url, options: Self.options())
        let tile = TileID(z: 6, x: 12, y: 33), other = TileID(z: 5, x: 30, y: 2)
        #expect(try await remote.tile(TileRequest(tile)).data?.bytes == served.tiles[tile])
        let before = served.nginx.requests(atLeast: remote.rangeRequests).count
        let replaced = try PMTilesArchiveFixture.replace(served.path, variant: 1)
        #expect(replaced[tile] != served.tiles[tile])
        #expect(try await remote.tile(TileRequest(tile)).data?.bytes == replaced[tile])
        #expect(try await remote.tile(TileRequest(other)).data?.bytes == replaced[other])
        let after = Array(served.nginx.requests(atLeast: remote.rangeRequests).dropFirst(before))
        #expect(after.first?.status == 412, "\(after)")
        #expect(after.dropFirst().first == NginxProcess.Request(status: 206, method: "GET", path: "/leafy.pmtiles", range: "bytes=0-16383",
                                                                ifMatch: "", bytesSent: 16384))
        #expect(after.dropFirst(2).allSatisfy { $0.status == 206 }, "\(after)")
    }

    /// A server that ignores If-Match (the fault server) is caught by the ETag of its answer.
    @Test func aReplacedFileIsCaughtByItsETagWhenIfMatchIsIgnored() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("leafy.pmtiles").path
        let tiles = try PMTilesArchiveFixture.write(to: path)
        let server = try TestTileServer()
        let remote = try await HTTPPMTilesSource.open(url: server.url("/pmtiles/range/leafy.pmtiles?file=\(path)"), options: Self.options())
        let tile = TileID(z: 6, x: 50, y: 9)
        #expect(try await remote.tile(TileRequest(tile)).data?.bytes == tiles[tile])
        let replaced = try PMTilesArchiveFixture.replace(path, variant: 2)
        #expect(try await remote.tile(TileRequest(tile)).data?.bytes == replaced[tile])
        #expect(try await server.stats().statuses.allSatisfy { $0 == 206 })
    }

    // MARK: - Bad input when opening: each a clear error naming the URL.

    /// Opening blocks (for synchronous callers) or awaits: the same error either way.
    @Test func anUnreachableServerIsUnreadable() async throws {
        let url = "http://127.0.0.1:\(try RedisServerProcess.freePort())/x.pmtiles"
        func isUnreachable(_ error: any Error) -> Bool {
            guard case .unreadable(url, let reason) = error as? TileSourceError else { return false }
            return reason.hasPrefix("cannot reach the server: ") && reason.hasSuffix("(after 1 retries)")
        }
        #expect(performing: { try HTTPPMTilesSource(url: url, options: Self.options()) }, throws: isUnreachable)
        await #expect(performing: { try await HTTPPMTilesSource.open(url: url, options: Self.options()) }, throws: isUnreachable)
    }

    @Test func aMissingFileOrOneThatIsNotPMTilesIsNamed() throws {
        let served = try Served()
        defer { served.remove() }
        try Data("<html><body>Not here</body></html>".utf8).write(to: served.directory.appendingPathComponent("page.pmtiles"))
        let missing = served.nginx.url("/missing.pmtiles"), page = served.nginx.url("/page.pmtiles")
        #expect(throws: TileSourceError.unreadable(path: missing, reason: "no such file on the server (HTTP 404)")) {
            try HTTPPMTilesSource(url: missing, options: Self.options())
        }
        #expect(throws: TileSourceError.corrupt(path: page, reason: PMTilesError.notPMTiles.reason)) {
            try HTTPPMTilesSource(url: page, options: Self.options())
        }
        #expect(throws: TileSourceError.invalid("\"\(served.nginx.url("/leafy.mbtiles"))\" is not an http:// or https:// URL of a .pmtiles file")) {
            try HTTPPMTilesSource(url: served.nginx.url("/leafy.mbtiles"), options: Self.options())
        }
        // A query (a signed URL's signature) stays out of messages.
        #expect(throws: TileSourceError.unreadable(path: missing + "?…", reason: "no such file on the server (HTTP 404)")) {
            try HTTPPMTilesSource(url: missing + "?X-Amz-Signature=secret", options: Self.options())
        }
    }

    @Test(arguments: [
        ("ignore-range", "the server ignores Range requests: asked for bytes 0-16383, it sent more than 16384 bytes (PMTiles over HTTP needs a server that answers 206 Partial Content)"),
        ("truncated", "asked for bytes 0-16383 of SIZE, the server sent 8192 bytes as bytes 0-8191"),
        ("status-500", "the server answered HTTP 500 (after 1 retries)"),
        ("status-403", "the server refused bytes 0-16383 with HTTP 403"),
        ("stall", "no complete answer within 0.5 s"),
    ])
    func aServerThatGetsRangesWrongIsRefusedWhenOpening(kind: String, reason: String) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("leafy.pmtiles").path
        try PMTilesArchiveFixture.write(to: path)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(size > 16384)
        let server = try TestTileServer()
        let url = server.url("/pmtiles/\(kind)/leafy.pmtiles?file=\(path)")
        // The stall's deadline is the source's own: its error names it ("within 0.5 s"). The
        // others get seconds: on a busy machine the test server may take longer than 0.5 s to
        // send a whole file, and that would be a stall, not the fault under test.
        let timeout: Duration = kind == "stall" ? .milliseconds(500) : .seconds(10)
        await #expect(throws: TileSourceError.unreadable(path: server.url("/pmtiles/\(kind)/leafy.pmtiles?…"), reason: reason.replacingOccurrences(of: "SIZE", with: "\(size)"))) {
            try await HTTPPMTilesSource.open(url: url, options: Self.options(timeout: timeout))
        }
    }

    /// A server that ignores Range is used when the whole file is no larger than the first
    /// read (16 KiB): nothing more than asked for was downloaded.
    @Test func aSmallFileFromAServerThatIgnoresRangeIsReadWhole() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("small.pmtiles").path
        let tiles = try PMTilesArchiveFixture.write(to: path, maxZoom: 2, rootLimit: 16384 - 127)
        let server = try TestTileServer()
        let remote = try await HTTPPMTilesSource.open(url: server.url("/pmtiles/ignore-range/small.pmtiles?file=\(path)"), options: Self.options())
        for (tile, bytes) in tiles { #expect(try await remote.tile(TileRequest(tile)).data?.bytes == bytes) }
    }

    // MARK: - Faults while serving: transient ones are `unavailable`, broken answers errors.

    @Test func faultsAfterOpeningFollowTheAbsenceModel() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("leafy.pmtiles").path
        let tiles = try PMTilesArchiveFixture.write(to: path)
        let server = try TestTileServer()
        try await server.setMode("range")
        let url = server.url("/pmtiles/switch/leafy.pmtiles?file=\(path)")
        let name = server.url("/pmtiles/switch/leafy.pmtiles?…")
        let remote = try await HTTPPMTilesSource.open(url: url, options: Self.options(timeout: .milliseconds(500)))
        // Each case asks for a tile in a leaf not read yet.
        let cases: [(kind: String, tile: TileID)] = [("status-500", TileID(z: 6, x: 1, y: 2)), ("stall", TileID(z: 6, x: 20, y: 40)),
                                                     ("status-404", TileID(z: 6, x: 60, y: 5)), ("truncated", TileID(z: 6, x: 33, y: 60)),
                                                     ("ignore-range", TileID(z: 6, x: 45, y: 45))]
        for (kind, tile) in cases {
            try await server.setMode(kind)
            switch kind {
            case "truncated", "ignore-range":
                await #expect {
                    try await remote.tile(TileRequest(tile))
                } throws: { error in
                    guard case .unreadable(name, let reason) = error as? TileSourceError else { return false }
                    return kind == "truncated" ? reason.contains("the server sent") : reason.hasPrefix("the server ignores Range requests")
                }
            default:
                #expect(try await remote.tile(TileRequest(tile)) == .unavailable(retryAfter: nil), "\(kind)")
            }
            try await server.setMode("range")
            // The server is good again: so is the tile (after a 404, the file is opened again).
            #expect(try await remote.tile(TileRequest(tile)).data?.bytes == tiles[tile], "\(kind)")
        }
    }

    // MARK: - Whole-file walks (`tilekit info`, `convert`) and the directory cache.

    @Test func aWalkOfTheWholeFileReadsAheadAndMatchesTheLocalFile() throws {
        let served = try Served()
        defer { served.remove() }
        let source = try TileStore.open(served.url)
        let remote = try #require(source as? HTTPPMTilesSource)
        var walked = [TileID: [UInt8]]()
        try TileStore.forEachTile(in: source) { walked[$0] = $1 }
        #expect(walked == served.tiles)
        let local = try TileStore.statistics(of: try TileStore.open(served.path))
        let statistics = try TileStore.statistics(of: source)
        #expect(statistics.mapValues { [$0.tiles, $0.bytes] } == local.mapValues { [$0.tiles, $0.bytes] })
        // The file is ~130 KB: the first 16 KiB, then one 1 MiB range read ahead per walk.
        #expect(remote.rangeRequests <= 3, "\(remote.rangeRequests)")
        #expect(try TileStoreKind(path: served.url) == .pmtiles)
        #expect(throws: TileSourceError.self) { try TileStore.writer(served.url) }
    }

    /// A walk that meets a failing server, or a file replaced under it, stops with an error
    /// naming the URL (`convert` then removes what it wrote).
    @Test func aWalkStopsWhenTheServerFailsOrTheFileChanges() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("leafy.pmtiles").path
        try PMTilesArchiveFixture.write(to: path)
        let server = try TestTileServer()
        try await server.setMode("range")
        let name = server.url("/pmtiles/switch/leafy.pmtiles?…")
        let failing = try HTTPPMTilesSource(url: server.url("/pmtiles/switch/leafy.pmtiles?file=\(path)"), options: Self.options())
        try await server.setMode("status-500")
        #expect(throws: TileSourceError.unreadable(path: name, reason: "the server answered HTTP 500 (after 1 retries)")) {
            try TileStore.forEachTile(in: failing) { _, _ in }
        }
        try await server.setMode("range")
        let replaced = try HTTPPMTilesSource(url: server.url("/pmtiles/switch/leafy.pmtiles?file=\(path)"), options: Self.options())
        try PMTilesArchiveFixture.replace(path, variant: 3)
        #expect {
            try TileStore.forEachTile(in: replaced) { _, _ in }
        } throws: { error in
            guard case .unreadable(name, let reason) = error as? TileSourceError else { return false }
            return reason.hasPrefix("the file changed while it was read: its ETag ")
        }
    }

    @Test func theDirectoryCacheIsBoundedByBytes() async throws {
        let served = try Served()
        defer { served.remove() }
        let budget = 3 * (256 * MemoryLayout<PMTilesEntry>.stride + 64)
        let remote = try await HTTPPMTilesSource.open(url: served.url, options: Self.options(), directoryCacheBytes: budget)
        for tile in Self.sample(served.tiles) { #expect(try await remote.tile(TileRequest(tile)).data?.bytes == served.tiles[tile]) }
        let cached = remote.cachedDirectories
        #expect(cached.bytes <= budget && cached.directories >= 1 && cached.directories <= 3, "\(cached)")
    }
}

@Suite struct DirectoryCacheTests {
    static func directory(_ count: Int) -> [PMTilesEntry] {
        (0..<count).map { PMTilesEntry(tileID: UInt64($0), offset: UInt64($0), length: 1, runLength: 1) }
    }

    @Test func theLeastRecentlyUsedGoFirstWhenTheBudgetIsPassed() {
        let one = DirectoryCache<Int>.cost(Self.directory(10))
        let cache = DirectoryCache<Int>(budget: 4 * one)
        for key in 0..<4 { cache.set(key, Self.directory(10)) }
        #expect(cache.statistics == (4, 4 * one))
        #expect(cache.get(0) != nil)  // 0 is now the most recent; 1 the oldest
        cache.set(4, Self.directory(10))
        // Past the budget, the oldest go until a quarter is free: 1 and 2.
        #expect(cache.get(1) == nil && cache.get(2) == nil)
        #expect(cache.get(0) != nil && cache.get(3) != nil && cache.get(4) != nil)
        #expect(cache.statistics.bytes <= 3 * one)
        // A directory larger than the whole budget is not kept.
        cache.set(9, Self.directory(1000))
        #expect(cache.get(9) == nil)
    }
}

@Suite struct ContentRangeTests {
    @Test(arguments: [
        ("bytes 0-16383/131072", ContentRange?.some(ContentRange(first: 0, last: 16383, size: 131_072))),
        ("bytes 5-5/6", ContentRange(first: 5, last: 5, size: 6)),
        ("bytes 0-9/*", nil), ("bytes 9-0/10", nil), ("bytes 0-10/10", nil), ("bytes -1-5/10", nil),
        ("bytes 0-5", nil), ("0-5/10", nil), ("bytes 0-18446744073709551616/18446744073709551617", nil), ("", nil),
    ])
    func parses(text: String, expected: ContentRange?) {
        #expect(ContentRange(text) == expected)
    }
}

extension ContentRange {
    init(first: UInt64, last: UInt64, size: UInt64) {
        self.init("bytes \(first)-\(last)/\(size)")!
    }
}
