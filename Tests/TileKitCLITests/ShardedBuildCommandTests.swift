import Foundation
import Testing
import TileMath
import TileSources
import TestSupport
@testable import TileKitCLI

/// `pyramid --shard`, `seed --shard` and `merge` as a user runs them: N shards merged are
/// the store one run makes, tile for tile; bad shard specs and stores that do not belong
/// together are refused with their exit codes, and nothing half-written is left.
@Suite(.serialized) struct ShardedBuildCommandTests {
    let park = "-73.9819,40.7644,-73.9493,40.8006"

    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-shards-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func tiles(_ path: String) throws -> [TileID: [UInt8]] {
        var tiles = [TileID: [UInt8]]()
        try TileStore.forEachTile(in: TileStore.open(path)) { tiles[$0] = $1 }
        return tiles
    }

    /// Only the stores a test named: no scratch file of a staged write is left.
    func leftovers(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
    }

    func sqlite(_ path: String, _ statement: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", path, statement]
        try process.run()
        process.waitUntilExit()
    }

    /// A sample map over Central Park, zooms 11-14 (6 tiles at 14, 2 at 13), whole and in
    /// shards of every kind of store, merged into MBTiles and PMTiles.
    @Test func shardedPyramidsMergeIntoTheUnshardedOne() async throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        #expect(await CLIRun(["sample", "-o", path("park.png"), "--size", "512x512"]).exitCode == 0)
        let common = ["pyramid", path("park.png"), "--bounds", park, "--zoom", "11-14", "--quiet"]
        // One unsharded run: a merge into MBTiles must hold its tiles, into PMTiles be its file.
        let whole = await CLIRun(common + ["--out", path("whole.pmtiles")])
        #expect(whole.exitCode == 0, "\(whole.error)")
        // Three shards split at zoom 13 (a folder, an MBTiles, a PMTiles: one of the three owns
        // no tile), two at the default split (14, the deepest zoom: none has 16 tiles).
        let three = [path("a"), path("b.mbtiles"), path("c.pmtiles")]
        for (index, out) in three.enumerated() {
            let run = await CLIRun(common + ["--out", out, "--shard", "\(index)/3", "--shard-zoom", "13", "--json"])
            #expect(run.exitCode == 0, "\(run.error)")
            #expect(run.output.first?.contains("\"shard\":\"\(index)/3\",\"split_zoom\":13") == true, "\(run.output)")
        }
        let two = [path("d.mbtiles"), path("e.mbtiles")]
        for (index, out) in two.enumerated() {
            #expect(await CLIRun(common + ["--out", out, "--shard", "\(index)/2"]).exitCode == 0)
        }
        for (shards, ext) in [(three, "pmtiles"), (two, "mbtiles"), (three, "mbtiles"), (two, "pmtiles")] {
            let out = path("merged-\(shards.count).\(ext)")
            let merge = await CLIRun(["merge"] + shards.reversed() + ["--out", out])
            #expect(merge.exitCode == 0, "\(merge.error)")
            #expect(merge.output.first?.contains("from \(shards.count) shards of a pyramid") == true, "\(merge.output)")
            let expected = try tiles(path("whole.pmtiles")), got = try tiles(out)
            #expect(got.count == expected.count && got == expected, "\(shards.count) shards into .\(ext)")
            if ext == "pmtiles" {
                #expect(FileManager.default.contents(atPath: out) == FileManager.default.contents(atPath: path("whole.pmtiles")))
            }
        }
        #expect(try leftovers(directory).isEmpty)

        // A shard given twice, one missing, a plain store beside shards: usage (64).
        let twice = await CLIRun(["merge", three[0], three[1], three[1], three[2], "--out", path("x.mbtiles")])
        #expect(twice.exitCode == 64 && twice.error.contains("shard 1/3 is given twice: \(three[1]) and \(three[1])"), "\(twice.error)")
        let missing = await CLIRun(["merge", three[0], three[2], "--out", path("x.mbtiles")])
        #expect(missing.exitCode == 64 && missing.error.contains("the build has 3 shards; missing: 1/3"), "\(missing.error)")
        let mixed = await CLIRun(["merge", two[0], two[1], path("whole.pmtiles"), "--out", path("x.mbtiles")])
        #expect(mixed.exitCode == 64 && mixed.error.contains("\(path("whole.pmtiles")) is no shard"), "\(mixed.error)")
        // Shards of two builds (split at 14 and at the default): data (65), naming both.
        let builds = await CLIRun(["merge", three[0], two[1], "--out", path("x.mbtiles")])
        #expect(builds.exitCode == 65 && builds.error.contains("are shards of different builds: shard count"), "\(builds.error)")
        // A tile where the plan does not put it (copied into the wrong shard): data (65).
        try sqlite(two[1], "ATTACH '\(two[0])' AS other; INSERT OR REPLACE INTO map SELECT * FROM other.map WHERE zoom_level = 14 LIMIT 1; "
                   + "INSERT OR IGNORE INTO images SELECT * FROM other.images;")
        let stray = await CLIRun(["merge", two[0], two[1], "--out", path("x.mbtiles")])
        #expect(stray.exitCode == 65 && stray.error.contains("\(two[1]): tile 14/") && stray.error.contains("belongs to shard 0/2, not 1/2"), "\(stray.error)")
        #expect(try !FileManager.default.fileExists(atPath: path("x.mbtiles")) && leftovers(directory).isEmpty)
    }

    /// Numbered from 0: each refusal is exit 64 naming the value, before any store is made.
    @Test(arguments: ["3/3", "-1/3", "0/0", "a/b", "1/3/4", "4/3"])
    func badShardSpecsAreUsageErrors(spec: String) async throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("never.mbtiles").path
        let pyramid = await CLIRun(["pyramid", "/nonexistent.png", "--bounds", park, "--out", out, "--shard", spec])
        #expect(pyramid.exitCode == 64 && pyramid.error.contains("shard \"\(spec)\""), "\(pyramid.error)")
        let seed = await CLIRun(["seed", "--source", "http://127.0.0.1:9/{z}/{x}/{y}.png", "--bbox", park, "--zoom", "12", "--out", out, "--shard", spec])
        #expect(seed.exitCode == 64 && seed.error.contains("shard \"\(spec)\""), "\(seed.error)")
        let zoom = await CLIRun(["seed", "--source", "http://127.0.0.1:9/{z}/{x}/{y}.png", "--bbox", park, "--zoom", "12-14", "--out", out,
                                 "--shard", "0/2", "--shard-zoom", "15"])
        #expect(zoom.exitCode == 64 && zoom.error.contains("shard zoom 15 is outside the build's zooms 12-14"), "\(zoom.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// Seeding from the test tile server in 2 and 3 shards gives the store one seed gives.
    @Test func shardedSeedsMergeIntoTheUnshardedOne() async throws {
        let server = try TestTileServer()
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let common = ["seed", "--source", server.url("/tiles/{z}/{x}/{y}.png"), "--bbox", "-73.99,40.75,-73.95,40.79", "--zoom", "10-14",
                      "--rate", "1000", "--concurrency", "4", "--quiet"]
        for ext in ["mbtiles", "pmtiles"] {
            #expect(await CLIRun(common + ["--out", path("whole.\(ext)")]).exitCode == 0)
        }
        let before = try await server.stats().count
        for count in [2, 3] {
            var shards = [String]()
            for index in 0..<count {
                let out = path("shard\(index)of\(count).\(index % 2 == 0 ? "mbtiles" : "pmtiles")")
                let run = await CLIRun(common + ["--out", out, "--shard", "\(index)/\(count)"])
                #expect(run.exitCode == 0, "\(run.error)")
                shards.append(out)
            }
            for ext in ["mbtiles", "pmtiles"] {
                let out = path("merged\(count).\(ext)")
                let merge = await CLIRun(["merge"] + shards + ["--out", out])
                #expect(merge.exitCode == 0, "\(merge.error)")
                #expect(try tiles(out) == tiles(path("whole.\(ext)")), "\(count) shards into .\(ext)")
                #expect(try TileStore.open(out).metadata == TileStore.open(path("whole.\(ext)")).metadata)
            }
        }
        // Each shard fetched only its own tiles: two sharded runs asked for each tile twice.
        let tileCount = try tiles(path("whole.mbtiles")).count
        #expect(try await server.stats().count - before == 2 * tileCount)
    }

    /// Stores that are not shards: identical tiles are one, different ones stop the merge
    /// unless --on-conflict chooses; different formats or tile sizes are refused (65).
    @Test func plainStoresMergeWithConflictRules() async throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        #expect(await CLIRun(["sample", "-o", path("park.png"), "--size", "256x256"]).exitCode == 0)
        let pyramid = ["pyramid", path("park.png"), "--zoom", "12-13", "--quiet"]
        #expect(await CLIRun(pyramid + ["--bounds", park, "--out", path("a.mbtiles")]).exitCode == 0)
        #expect(await CLIRun(pyramid + ["--bounds", park, "--out", path("same")]).exitCode == 0)
        // Bounds moved a little: the same addresses with other pixels.
        #expect(await CLIRun(pyramid + ["--bounds", "-73.9829,40.7644,-73.9503,40.8006", "--out", path("b.pmtiles")]).exitCode == 0)
        #expect(await CLIRun(pyramid + ["--bounds", park, "--out", path("c.mbtiles"), "--format", "jpg"]).exitCode == 0)
        #expect(await CLIRun(pyramid + ["--bounds", park, "--out", path("d.mbtiles"), "--tile-size", "512"]).exitCode == 0)
        let a = try tiles(path("a.mbtiles")), b = try tiles(path("b.pmtiles"))
        let shared = Set(a.keys).intersection(b.keys).filter { a[$0] != b[$0] }
        #expect(!shared.isEmpty)

        let identical = await CLIRun(["merge", path("a.mbtiles"), path("same"), "--out", path("m1.pmtiles"), "--json"])
        let counts = try JSONSerialization.jsonObject(with: Data((identical.output.first ?? "").utf8)) as? [String: Any]
        #expect(identical.exitCode == 0 && [counts?["tiles"], counts?["copied"], counts?["made"], counts?["identical"]].map { $0 as? Int } == [a.count, a.count, 0, a.count],
                "\(identical.output) \(identical.error)")
        let conflict = await CLIRun(["merge", path("a.mbtiles"), path("b.pmtiles"), "--out", path("m2.mbtiles")])
        #expect(conflict.exitCode == 65 && conflict.error.contains("differs between \(path("a.mbtiles")) and \(path("b.pmtiles"))"), "\(conflict.error)")
        #expect(try !FileManager.default.fileExists(atPath: path("m2.mbtiles")) && leftovers(directory).isEmpty)
        for (rule, winner) in [("first", a), ("last", b)] {
            let out = path("m-\(rule).mbtiles")
            #expect(await CLIRun(["merge", path("a.mbtiles"), path("b.pmtiles"), "--out", out, "--on-conflict", rule, "--quiet"]).exitCode == 0)
            let merged = try tiles(out)
            #expect(Set(merged.keys) == Set(a.keys).union(b.keys) && shared.allSatisfy { merged[$0] == winner[$0] })
        }
        let formats = await CLIRun(["merge", path("a.mbtiles"), path("c.mbtiles"), "--out", path("m3.mbtiles")])
        #expect(formats.exitCode == 65 && formats.error.contains("cannot merge png and jpg tiles: \(path("a.mbtiles")) is png, \(path("c.mbtiles")) is jpg"), "\(formats.error)")
        let sizes = await CLIRun(["merge", path("a.mbtiles"), path("d.mbtiles"), "--out", path("m4.mbtiles")])
        #expect(sizes.exitCode == 65 && sizes.error.contains("\(path("a.mbtiles")) has 256 px tiles, \(path("d.mbtiles")) 512 px"), "\(sizes.error)")
        #expect(await CLIRun(["merge", path("a.mbtiles"), "--out", path("a.mbtiles")]).exitCode == 64)
        #expect(await CLIRun(["merge", path("a.mbtiles"), "--out", path("m1.pmtiles")]).error.contains("exists; use --force"))
        #expect(await CLIRun(["merge", path("a.mbtiles"), "--out", path("m5.mbtiles"), "--on-conflict", "newest"]).exitCode == 64)
        #expect(await CLIRun(["merge", path("a.mbtiles"), path("missing.mbtiles"), "--out", path("m6.mbtiles")]).exitCode == 74)
        #expect(await CLIRun(["merge", "--help"]).output.first?.hasPrefix("Usage: tilekit merge STORE... --out STORE") == true)
        #expect(try leftovers(directory).isEmpty)
    }
}
