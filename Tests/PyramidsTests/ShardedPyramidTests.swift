import Foundation
import Testing
import Canvas
import TileMath
import TileSources
@testable import Pyramids

/// A pyramid built in N shards and merged is the pyramid one run builds: the same tile set
/// and the same bytes (and, for PMTiles, the same file).
@Suite struct ShardedPyramidTests {
    let box = BoundingBox(west: -10, south: -5, east: 10, north: 5)

    /// Builds the test card (its transparent quarter makes empty tiles, which no store has)
    /// whole (`shard` nil) or as one shard, into `out`.
    func build(_ image: URL, into out: String, zooms: ClosedRange<Int>, shard: ShardSpec? = nil, splitZoom: Int? = nil,
               format: ImageFormat = .png, lower: LowerZooms = .average) async throws {
        let g = try Georeference.bounds(box, width: 512, height: 256)
        var options = PyramidOptions()
        options.zooms = zooms
        options.shard = shard
        options.shardZoom = splitZoom
        options.lowerZooms = lower
        options.encoding = format == .png ? .png(compressionLevel: 1) : .defaults(for: format)
        let store = try StagedStore(path: out, format: format, resume: false)
        let builder = try PyramidBuilder(source: image.path, georeference: g, stores: [store], options: options)
        _ = try await builder.run { _, _ in }
        try store.commit(metadata: builder.metadata(name: "card", attribution: "test card"))
    }

    func tiles(_ path: String) throws -> [TileID: [UInt8]] {
        var tiles = [TileID: [UInt8]]()
        try TileStore.forEachTile(in: try TileStore.open(path)) { tiles[$0] = $1 }
        return tiles
    }

    func card(in folder: URL) throws -> URL {
        let image = folder.appendingPathComponent("card.png")
        try Data(try testCard().encoded(.png())).write(to: image)
        return image
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let shards: Int
        let ext: String
        let splitZoom: Int?
        var format: ImageFormat = .png
        var lower: LowerZooms = .average
        var testDescription: String { "\(shards) shards, .\(ext), split \(splitZoom.map(String.init) ?? "default"), \(format), \(lower)" }
    }

    @Test(arguments: [
        Case(shards: 2, ext: "mbtiles", splitZoom: nil), Case(shards: 3, ext: "mbtiles", splitZoom: 5),
        Case(shards: 2, ext: "pmtiles", splitZoom: 4),
        // JPEG: the shards keep the split zoom as PNG, so the merge averages what one run averages.
        Case(shards: 3, ext: "mbtiles", splitZoom: 5, format: .jpeg),
        // Every zoom sampled from the image: the shards share the zooms above the split too.
        Case(shards: 3, ext: "pmtiles", splitZoom: 4, lower: .resample),
    ])
    func shardsMergeIntoTheUnshardedPyramid(_ c: Case) async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = try card(in: folder)
        // 4 tiles at zooms 2-5, 8 at 6: the default split is 6 for 2 and 3 shards. Split at 5,
        // the third of 3 shards owns one tile, wholly transparent: it makes no tile at all.
        let zooms = 2...6
        let whole = folder.appendingPathComponent("whole.\(c.ext)").path
        try await build(image, into: whole, zooms: zooms, format: c.format, lower: c.lower)
        var inputs = [MergeInput]()
        var shardTiles = [[TileID: [UInt8]]]()
        for index in 0..<c.shards {
            let path = folder.appendingPathComponent("shard\(index).\(c.ext)").path
            try await build(image, into: path, zooms: zooms, shard: try ShardSpec(index: index, count: c.shards), splitZoom: c.splitZoom,
                            format: c.format, lower: c.lower)
            inputs.append(try MergeInput.open(path))
            shardTiles.append(try tiles(path))
        }
        // No two shards made the same tile (a shard whose tiles are all transparent made none).
        let addresses = shardTiles.flatMap(\.keys)
        #expect(Set(addresses).count == addresses.count && addresses.count > 0)
        let record = try #require(inputs[0].record)
        #expect(record.splitZoom == c.splitZoom ?? 6 && record.zooms == zooms && record.shard.count == c.shards)

        let merged = folder.appendingPathComponent("merged.\(c.ext)").path
        let merge = try StoreMerge(inputs: inputs.reversed())  // the order given does not matter
        let report = try await merge.run(into: try StagedStore(path: merged, format: c.format, resume: false, resumable: false))
        let expected = try tiles(whole), got = try tiles(merged)
        #expect(got.count == expected.count && report.copied + report.made == expected.count)
        #expect(Set(got.keys) == Set(expected.keys))
        let different = expected.keys.filter { got[$0] != expected[$0] }.sorted()
        #expect(different.isEmpty, "\(different.count) tiles differ, first \(different.prefix(3))")
        // The metadata is one run's, without the shard record.
        let a = try TileStore.open(whole).metadata, b = try TileStore.open(merged).metadata
        #expect(a == b && b.shardRecord == nil, "\(a) against \(b)")
        if c.ext == "pmtiles" {
            #expect(FileManager.default.contents(atPath: whole) == FileManager.default.contents(atPath: merged), "the PMTiles files differ")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix(".") }.isEmpty)
    }

    /// The record carries the build exactly (doubles read back bit for bit) and says what
    /// differs between two builds.
    @Test func recordsRoundTripAndNameTheirDifferences() throws {
        let bounds = BoundingBox(west: -73.98190000000001, south: 40.7644, east: -73.9493, north: 40.80060000000003)
        let record = ShardRecord(command: .pyramid, shard: try ShardSpec(index: 1, count: 3), splitZoom: 14, zooms: 12...17,
                                 mergeMakesUpperZooms: true, encoding: .jpeg(quality: 77, background: Color(red: 0.1, green: 0.2, blue: 0.3)),
                                 tileSize: 512, scale: 2, region: bounds, bounds: bounds, center: bounds.center, centerZoom: 14, build: "park.png")
        let read = try ShardRecord(json: record.json, file: "s1.mbtiles")
        #expect(read == record)
        var other = record
        other.splitZoom = 15
        #expect(record.difference(from: other) == "split zoom 14 against 15")
        #expect(record.difference(from: read) == nil)
        #expect(throws: PyramidError.shardRecord(file: "s.mbtiles", reason: "tilekit_shard shard shard \"3/3\": the index 3 is not in 0-2 (shards are numbered from 0: 0/3, 1/3, 2/3)")) {
            try ShardRecord(json: record.json.replacingOccurrences(of: "\"1/3\"", with: "\"3/3\""), file: "s.mbtiles")
        }
        #expect(throws: PyramidError.shardRecord(file: "s.mbtiles", reason: "tilekit_shard is not a JSON object")) {
            try ShardRecord(json: "[1]", file: "s.mbtiles")
        }
    }
}
