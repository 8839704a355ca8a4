import Foundation
import TileMath
import Canvas
import Compression
import MBTiles
import PMTiles
import TileSources
import MapProjects
import HTTPServer
import TileServer

// Tile stores: PMTiles and MBTiles files, opened as a source, walked, drawn through a
// layer, and served the way `tilekit serve FILE` serves them.

extension FuzzTarget {
    static let pmtiles = FuzzTarget(name: "pmtiles", input: "a PMTiles v3 file") { bytes in
        guard let path = Scratch.shared.write(bytes, to: "store.pmtiles") else { return }
        exerciseStore(path)
    }

    /// The directory alone, so mutations are not lost to gzip's checksum: bytes 0-2 are the
    /// header's min, max and centre zoom, the rest is a root directory before compression
    /// (varint count, id deltas, run lengths, lengths, offsets). The leaf section is the
    /// root itself (a leaf entry at offset 0 points back at it), and the tile data is one
    /// 256 px PNG.
    static let pmtilesDirectory = FuzzTarget(name: "pmtiles-directory", input: "3 zoom bytes, then an uncompressed PMTiles directory") { bytes in
        guard bytes.count >= 3 else { return }
        let directory = Gzip.compress(Array(bytes.dropFirst(3)))
        let metadata = Gzip.compress(Array(#"{"name":"fuzz","attribution":"fuzz"}"#.utf8))
        let tile = Scratch.shared.tilePNG
        var header = PMTilesHeader()
        header.rootOffset = UInt64(PMTilesHeader.size)
        header.rootLength = UInt64(directory.count)
        header.leafDirectoryOffset = header.rootOffset
        header.leafDirectoryLength = header.rootLength
        header.metadataOffset = header.rootOffset + header.rootLength
        header.metadataLength = UInt64(metadata.count)
        header.tileDataOffset = header.metadataOffset + header.metadataLength
        header.tileDataLength = UInt64(tile.count)
        header.addressedTiles = 1
        header.tileEntries = 1
        header.tileContents = 1
        header.internalCompression = .gzip
        header.tileCompression = .none
        header.tileType = .png
        (header.minZoom, header.maxZoom, header.centerZoom) = (bytes[0], bytes[1], bytes[2])
        guard let path = Scratch.shared.write(header.bytes + directory + metadata + tile, to: "store.pmtiles") else { return }
        exerciseStore(path)
    }

    static let mbtiles = FuzzTarget(name: "mbtiles", input: "an MBTiles (SQLite) file") { bytes in
        Scratch.shared.remove("store.mbtiles")
        guard let path = Scratch.shared.write(bytes, to: "store.mbtiles") else { return }
        exerciseStore(path)
        Scratch.shared.remove("store.mbtiles")
    }

    /// An MBTiles file holding tiles 0/0/0 and 1/1/1 and the metadata given, one `name=value`
    /// per line (the MBTiles 1.3 keys: name, format, bounds, center, minzoom, maxzoom,
    /// attribution, description, tile_size...).
    static let mbtilesMetadata = FuzzTarget(name: "mbtiles-metadata", input: "MBTiles metadata: name=value lines") { bytes in
        var values = [String: String]()
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        Scratch.shared.remove("store.mbtiles")
        // The file with its two tiles is made once (`twoTileMBTiles`); each input copies it
        // and writes its metadata through the writer, as `pyramid` and `convert` finish a store.
        guard let template = twoTileMBTiles, let path = Scratch.shared.write(template, to: "store.mbtiles") else { return }
        do {
            try MBTilesWriter(path: path).finish(metadata: MBTiles.Metadata(values))
        } catch {
            return
        }
        exerciseStore(path)
        Scratch.shared.remove("store.mbtiles")
    }

    /// The bytes of an MBTiles file holding tiles 0/0/0 and 1/1/1 and no metadata, in the
    /// rollback journal mode the writer leaves a finished store in (one self-contained file).
    static let twoTileMBTiles: [UInt8]? = {
        let name = "two-tiles.mbtiles"
        Scratch.shared.remove(name)
        defer { Scratch.shared.remove(name) }
        let path = Scratch.shared.path(name)
        do {
            let writer = try MBTilesWriter(path: path)
            try writer.write(TileID(z: 0, x: 0, y: 0), bytes: Scratch.shared.tilePNG)
            try writer.write(TileID(z: 1, x: 1, y: 1), bytes: Scratch.shared.tilePNG)
            try writer.finish(metadata: MBTiles.Metadata())
        } catch {
            return nil
        }
        return FileManager.default.contents(atPath: path).map(Array.init)
    }()

    /// Everything a store goes through when it is opened and served.
    static func exerciseStore(_ path: String) {
        // Opened as `tilekit serve FILE` opens it: once, for the map's settings and the map served.
        guard let opened = try? MapProjectReader.openStore(path) else { return }
        let project = opened.project
        let map = try? ServedMap(opened)
        if let source = map?.layers.first?.layer.source ?? (try? TileStore.open(path)) {
            var walked = 0
            try? TileStore.forEachTile(in: source) { _, _ in
                walked += 1
                if walked >= 64 { throw StopWalking() }
            }
            // Through a layer (zooms, overzoom, underzoom, decoding): the first tiles a viewer asks for.
            let layer = TileLayer(source: source)
            let metadata = source.metadata
            var tiles = [TileID(z: 0, x: 0, y: 0), TileID(z: 2, x: 1, y: 2)]
            if let center = metadata.center, let zoom = metadata.centerZoom, (0...TileID.maxZoom).contains(zoom) {
                tiles.append(TileID(containing: center, zoom: zoom))
            }
            for zoom in [metadata.minZoom, metadata.maxZoom] where (0...TileID.maxZoom).contains(zoom) {
                tiles.append(TileID(z: zoom, x: 0, y: 0))
            }
            // A tile asked twice runs the same code twice (minzoom 0 is 0/0/0 again).
            var seen = Set<TileID>()
            tiles = tiles.filter { seen.insert($0).inserted }
            waitFor { [tiles] in
                for tile in tiles { _ = try? await layer.render(TileRequest(tile)) }
            }
        }
        // As `tilekit serve FILE` serves it: TileJSON and the viewer page (the store's metadata
        // on its way to a client) and the composed 0/0/0.png. Not the retina WebP tile nor a
        // static image: encoding and rendering, which `mapjson` fuzzes on maps served from
        // stores too, took half of these targets' time and tested no code of the store.
        guard let map else { return }
        serve(map, paths: ["/maps/\(project.name).json", "/maps/\(project.name)/", "/maps/\(project.name)/0/0/0.png"])
    }

    /// Answers GETs of `paths` from a server of one map, as the HTTP adapter would.
    static func serve(_ map: ServedMap, paths: [String]) {
        var options = ServerOptions()
        options.leafletFolder = Scratch.shared.path("no-leaflet")  // the viewer's assets are not under test
        options.cacheBytes = 1 << 20
        guard let server = try? TileServer(maps: [map], options: options) else { return }
        waitFor {
            for path in paths { _ = await server.handle(HTTPRequest(method: "GET", path: path)) }
        }
    }
}

/// Ends a walk over a store's tiles early (the target reads the first few).
struct StopWalking: Error {}
