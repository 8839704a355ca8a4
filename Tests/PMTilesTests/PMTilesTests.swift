import Foundation
import Testing
import Canvas
import TileMath
@testable import PMTiles
@testable import TileSources

@Suite struct PMTilesTests {
    /// Values printed by the reference implementation (PyPI pmtiles, `zxy_to_tileid`).
    @Test(arguments: [((0, 0, 0), 0), ((1, 0, 0), 1), ((1, 0, 1), 2), ((1, 1, 1), 3), ((1, 1, 0), 4), ((2, 0, 0), 5),
                      ((12, 3423, 1763), 19_078_479), ((20, 123_456, 654_321), 652_812_043_350)] as [((Int, Int, Int), UInt64)])
    func hilbertIDsMatchTheReference(tile: (Int, Int, Int), id: UInt64) {
        let t = TileID(z: tile.0, x: tile.1, y: tile.2)
        #expect(t.pmtilesID == id)
        #expect(TileID(pmtilesID: id) == t)
    }

    @Test func idsRoundTripAtEveryZoom() {
        var generator = SeededRandom(seed: 3)  // seeded: a failure reproduces
        for z in 0...TileID.maxZoom {
            for _ in 0..<50 {
                let tile = TileID(z: z, x: Int.random(in: 0..<(1 << z), using: &generator), y: Int.random(in: 0..<(1 << z), using: &generator))
                #expect(TileID(pmtilesID: tile.pmtilesID) == tile)
            }
        }
        // Ids are dense: the last tile of a zoom is followed by the first of the next.
        #expect(TileID(z: 3, x: 0, y: 7).pmtilesID + 1 == TileID(z: 4, x: 0, y: 0).pmtilesID || TileID(pmtilesID: TileID(z: 4, x: 0, y: 0).pmtilesID - 1)?.z == 3)
    }

    func sampleTiles() throws -> [TileID: [UInt8]] {
        var tiles = [TileID: [UInt8]]()
        let blank = try RGBAImage(width: 256, height: 256, color: Color(hex: "#f4e8c8")!).encoded()
        for z in 0...6 {
            for x in 0..<(1 << z) {
                for y in 0..<(1 << z) where z < 5 || (x + y) % 3 == 0 {
                    // Mostly the same parchment (runs and dedup), some distinct tiles.
                    tiles[TileID(z: z, x: x, y: y)] = (x * 7 + y) % 5 == 0
                        ? try RGBAImage(width: 8, height: 8, color: Color(red: Double(x) / 64, green: Double(y) / 64, blue: Double(z) / 6)).encoded()
                        : blank
                }
            }
        }
        return tiles
    }

    @Test(arguments: [16384 - 127, 300])
    func writeThenRead(rootLimit: Int) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("world.pmtiles").path
        let tiles = try sampleTiles()
        let writer = try PMTilesWriter(path: path, rootLimit: rootLimit)
        for (tile, bytes) in tiles.sorted(by: { $0.key < $1.key }).reversed() { try writer.write(tile, bytes: bytes) }
        #expect(writer.uniqueContentCount < tiles.count / 2)
        var header = PMTilesHeader()
        header.minZoom = 0
        header.maxZoom = 6
        try writer.finish(header: header, metadataJSON: Array(#"{"name":"World","attribution":"test"}"#.utf8))
        // No scratch or temporary file is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["world.pmtiles"])

        let reader = try PMTilesReader(path: path)
        #expect(reader.header.addressedTiles == UInt64(tiles.count) && reader.header.clustered)
        #expect(reader.header.tileEntries < UInt64(tiles.count))  // runs of the parchment share entries
        #expect(reader.header.rootOffset + reader.header.rootLength <= 16384)
        if rootLimit < 1000 { #expect(reader.header.leafDirectoryLength > 0) } else { #expect(reader.header.leafDirectoryLength == 0) }
        for (tile, bytes) in tiles { #expect(try reader.tile(tile) == bytes, "\(tile)") }
        #expect(try reader.tile(TileID(z: 6, x: 1, y: 1)) == nil)  // (1 + 1) % 3 != 0: absent
        #expect(try reader.tile(TileID(z: 9, x: 1, y: 1)) == nil)
        var listed = 0
        try reader.forEachTile { tile, bytes in
            listed += 1
            #expect(tiles[tile] == bytes)
        }
        #expect(listed == tiles.count)
        let source = try PMTilesSource(path: path)
        #expect(source.metadata.name == "World" && source.metadata.attribution == "test" && source.metadata.maxZoom == 6)
    }

    @Test func corruptFilesAreNamed() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let notPMTiles = directory.appendingPathComponent("a.pmtiles").path
        _ = FileManager.default.createFile(atPath: notPMTiles, contents: Data(repeating: 65, count: 200))
        #expect(throws: TileSourceError.corrupt(path: notPMTiles, reason: "not a PMTiles file (no \"PMTiles\" magic)")) {
            try PMTilesSource(path: notPMTiles)
        }
        // A real file cut short after its header.
        let path = directory.appendingPathComponent("b.pmtiles").path
        let writer = try PMTilesWriter(path: path)
        try writer.write(TileID(z: 0, x: 0, y: 0), bytes: try RGBAImage(width: 4, height: 4, color: .white).encoded())
        try writer.finish(header: PMTilesHeader(), metadataJSON: Array("{}".utf8))
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        try whole.prefix(130).write(to: URL(fileURLWithPath: path))
        #expect(throws: TileSourceError.self) { try PMTilesSource(path: path) }
    }

    /// The writer's last step is `AtomicRename`: over a folder that holds something it fails,
    /// naming the destination, leaving the folder as it was and no laid-out copy beside it.
    @Test func finishingOverAFolderThatHoldsSomethingFailsAndLeavesItAlone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-pmtiles-rename-\(UUID())")
        let path = directory.appendingPathComponent("taken.pmtiles").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("keep".utf8).write(to: URL(fileURLWithPath: path).appendingPathComponent("note.txt"))
        let writer = try PMTilesWriter(path: path)
        try writer.write(TileID(z: 0, x: 0, y: 0), bytes: [1, 2, 3])
        do {
            try writer.finish(header: PMTilesHeader(), metadataJSON: Array("{}".utf8))
            Issue.record("a PMTiles file replaced a folder that holds a file")
        } catch let error as PMTilesError {
            guard case .io(let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.hasSuffix("(writing \(path))"), "\(reason)")
        }
        #expect(try String(contentsOfFile: path + "/note.txt", encoding: .utf8) == "keep")
        #expect(!FileManager.default.fileExists(atPath: PMTilesWriter.scratchPaths(for: path).layout))
    }
}
