import Foundation
import Testing
import TileMath
import TileSources
import MBTiles
import TestSupport
@testable import TileKitCLI

@Suite(.serialized) struct SeedCommandTests {
    let server: TestTileServer
    // A small box in Manhattan.
    let box = "-73.99,40.75,-73.95,40.79"
    func count(_ zooms: ClosedRange<Int>) -> Int {
        TileRange.counts(covering: BoundingBox(west: -73.99, south: 40.75, east: -73.95, north: 40.79), zooms: zooms).values.reduce(0, +)
    }

    init() throws { server = try TestTileServer() }

    func tilesIn(_ path: String) throws -> [TileID: [UInt8]] {
        var tiles = [TileID: [UInt8]]()
        try TileStore.forEachTile(in: TileStore.open(path)) { tiles[$0] = $1 }
        return tiles
    }

    @Test func seedsResumesAndIdentifiesItself() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-seed-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("manhattan.mbtiles").path
        let template = server.url("/tiles/{z}/{x}/{y}.png")
        let expected = TileRange.counts(covering: try BoundingBox(west: -73.99, south: 40.75, east: -73.95, north: 40.79).validated(), zooms: 10...13).values.reduce(0, +)
        let first = await CLIRun(["seed", "--source", template, "--bbox", box, "--zoom", "10-13", "--out", out,
                                  "--user-agent", "MapQuest/1.0 (ops@mapquest.invalid)", "--rate", "200", "--concurrency", "4", "--quiet"])
        #expect(first.exitCode == 0, "\(first.error)")
        #expect(first.output.first?.contains("\(expected) tiles fetched, 0 already present") == true, "\(first.output)")
        #expect(try tilesIn(out).count == expected)
        let stats = try await server.stats()
        #expect(stats.user_agents.allSatisfy { $0 == "MapQuest/1.0 (ops@mapquest.invalid)" } && stats.peak <= 4)
        // Again: everything is there, nothing is asked.
        let again = await CLIRun(["seed", "--source", template, "--bbox", box, "--zoom", "10-13", "--out", out, "--quiet"])
        #expect(again.output.first?.contains("0 tiles fetched, \(expected) already present") == true)
        #expect(try await server.stats().count == stats.count)
        // The store says what it holds.
        let source = try TileStore.open(out)
        #expect(source.metadata.minZoom == 10 && source.metadata.maxZoom == 13 && source.metadata.format == .png)
    }

    @Test func failuresAreNamedAndARerunFinishes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-seed-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("park.pmtiles").path
        // Zoom 12 from a working server, then 12-13 from a failing one: z12 is skipped, z13 fails.
        let good = await CLIRun(["seed", "--source", server.url("/tiles/{z}/{x}/{y}.png"), "--bbox", box, "--zoom", "12", "--out", out, "--quiet"])
        #expect(good.exitCode == 0)
        let failing = await CLIRun(["seed", "--source", server.url("/status/500/{z}/{x}/{y}.png"), "--bbox", box, "--zoom", "12-13",
                                    "--out", out, "--retries", "1", "--quiet"])
        #expect(failing.exitCode == 75, "\(failing.error)")
        #expect(failing.error.contains("could not get 13/") && failing.error.contains("run the same command again"))
        // The zoom 12 tiles survived the failed run (PMTiles is rewritten whole, with them).
        let kept = try tilesIn(out)
        #expect(kept.keys.allSatisfy { $0.z == 12 } && kept.count == count(12...12))
        let finish = await CLIRun(["seed", "--source", server.url("/tiles/{z}/{x}/{y}.png"), "--bbox", box, "--zoom", "12-13", "--out", out, "--quiet"])
        #expect(finish.exitCode == 0 && finish.output.first?.contains("already present") == true)
        let finished = try tilesIn(out)
        #expect(finished.count == count(12...13))
        // Absent upstream (404) is not a failure.
        let absent = await CLIRun(["seed", "--source", server.url("/status/404/{z}/{x}/{y}.png"), "--bbox", box, "--zoom", "10",
                                   "--out", directory.appendingPathComponent("none").path, "--quiet"])
        #expect(absent.exitCode == 0 && absent.output.first?.contains("1 absent upstream") == true)
    }

    @Test func dryRunsAndLimits() async throws {
        let dry = await CLIRun(["seed", "--source", server.url("/tiles/{z}/{x}/{y}.png"), "--bbox", box, "--zoom", "10-16", "--dry-run"])
        #expect(dry.exitCode == 0)
        let json = try JSONSerialization.jsonObject(with: Data(dry.output[0].utf8)) as! [String: Any]
        #expect(json["tiles"] as? Int == TileRange.counts(covering: BoundingBox(west: -73.99, south: 40.75, east: -73.95, north: 40.79), zooms: 10...16).values.reduce(0, +))
        #expect((json["estimated_bytes"] as? Int ?? 0) > 0 && json["sampled_tiles"] as? Int == 3)
        let tooMany = await CLIRun(["seed", "--source", server.url("/tiles/{z}/{x}/{y}.png"), "--bbox", "-74.3,40.5,-73.7,40.9", "--zoom", "10-18", "--out", "/tmp/never.mbtiles"])
        #expect(tooMany.exitCode == 64 && tooMany.error.contains("--max-tiles 10000"))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never.mbtiles"))
        #expect(await CLIRun(["seed", "--source", "https://x/{z}/{x}/{y}?k={key}", "--bbox", box, "--zoom", "1", "--out", "/tmp/never2"]).error.contains("unknown key {key}"))
    }

    @Test func cacheCommands() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-cache-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cache.mbtiles").path
        let store = try TileCacheStore(path: path)
        let now = Date().timeIntervalSince1970
        for x in 0..<6 {
            try store.store(TileID(z: 5, x: x, y: 3), bytes: Array(repeating: UInt8(x), count: 1024), expiresAt: now + (x < 2 ? -10 : 3600),
                            etag: nil, lastModified: nil, now: now - Double(x < 3 ? 90 * 86400 : 60))
        }
        let info = await CLIRun(["cache", "info", path])
        let json = try JSONSerialization.jsonObject(with: Data(info.output[0].utf8)) as! [String: Any]
        #expect(json["tiles"] as? Int == 6 && json["bytes"] as? Int == 6144 && json["expired"] as? Int == 2)
        #expect(await CLIRun(["cache", "prune", path, "--max-age", "30d"]).output == ["\(path): removed 3 tiles"])
        #expect(await CLIRun(["cache", "prune", path, "--max-size", "2KB"]).output == ["\(path): removed 1 tiles"])
        #expect(await CLIRun(["cache", "clear", path]).output == ["\(path): removed 2 tiles"])
        #expect(await CLIRun(["cache", "prune", path]).exitCode == 64)
        #expect(await CLIRun(["cache", "info", directory.appendingPathComponent("missing.mbtiles").path]).exitCode == 74)
        #expect(await CLIRun(["cache", "explode", path]).error.contains("unknown action"))
    }
}
