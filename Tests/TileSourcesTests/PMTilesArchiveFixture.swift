import Foundation
import Canvas
import TileMath
@testable import PMTiles

/// PMTiles files written by TileKit's writer for the HTTP tests.
enum PMTilesArchiveFixture {
    /// Every tile of z0-`maxZoom`: a third distinct (8 px, coloured from z/x/y and
    /// `variant`), the rest one repeated tile (runs, and contents stored once). With the
    /// small `rootLimit` the entries go to leaf directories (about 14 at z6) under a root of
    /// a few entries, as in a planet-sized file. Returns the tiles written.
    @discardableResult
    static func write(to path: String, variant: Int = 0, maxZoom: Int = 6, rootLimit: Int = 300) throws -> [TileID: [UInt8]] {
        var tiles = [TileID: [UInt8]]()
        let blank = try RGBAImage(width: 8, height: 8, color: Color(red: 0.9, green: 0.85, blue: Double(variant % 5) / 5)).encoded()
        for z in 0...maxZoom {
            for x in 0..<(1 << z) {
                for y in 0..<(1 << z) {
                    guard (x * 7 + y + variant) % 3 == 0 else { tiles[TileID(z: z, x: x, y: y)] = blank; continue }
                    let color = Color(red: Double(x % 64) / 63, green: Double(y % 64) / 63, blue: Double((z * 5 + variant * 17) % 32) / 31)
                    tiles[TileID(z: z, x: x, y: y)] = try RGBAImage(width: 8, height: 8, color: color).encoded()
                }
            }
        }
        let writer = try PMTilesWriter(path: path, rootLimit: rootLimit)
        for (tile, bytes) in tiles.sorted(by: { $0.key < $1.key }) { try writer.write(tile, bytes: bytes) }
        var header = PMTilesHeader()
        header.minZoom = 0
        header.maxZoom = UInt8(maxZoom)
        try writer.finish(header: header, metadataJSON: Array(#"{"name":"Leafy \#(variant)","attribution":"tests","tile_size":256}"#.utf8))
        return tiles
    }

    /// Replaces the file at `path` as a deploy would (a new file renamed over it), with a
    /// modification time `seconds` later, so that servers whose ETag holds whole seconds
    /// (nginx) see another file.
    @discardableResult
    static func replace(_ path: String, variant: Int, seconds: Double = 10) throws -> [TileID: [UInt8]] {
        let staging = path + ".new.pmtiles"
        let tiles = try write(to: staging, variant: variant)
        let old = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date ?? Date()
        try FileManager.default.setAttributes([.modificationDate: old.addingTimeInterval(seconds)], ofItemAtPath: staging)
        guard rename(staging, path) == 0 else { throw POSIXError(.EIO) }
        return tiles
    }
}
