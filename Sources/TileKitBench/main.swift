// tilekit-bench: measurements for `make bench`, printed as JSON lines for scripts/bench.py.
//
//   tilekit-bench codecs IMAGE [--tile-size 256] [--seconds 2]
//       encodes the image's tiles with each codec setting on one core
//   tilekit-bench make-tiles DIR --bbox W,S,E,N --zoom A-B
//       writes distinct debug-grid tiles into a z/x/y folder (an upstream for seeding)
//   tilekit-bench decode-png PATH... [--rounds 200]
//       decodes every PNG under the paths with PNGReader and with libpng, alternately, on
//       one core: milliseconds a tile for each (the same tiles: those PNGReader reads)
//   tilekit-bench scan IMAGE [--rounds 3]
//       reads the image's rows top to bottom with ImageRowReader (what a pyramid's decoding
//       thread does) on one core: the best round's seconds and megapixels a second
//   tilekit-bench read STORE [--seconds 2] [--concurrency 1] [--warm]
//       reads every tile of a store in random order, one after another (or N at a time), on
//       one core; STORE may be the URL of a PMTiles file (`range_requests`: those sent while
//       timing; --warm reads every tile once first, so the leaf directories are in memory)
//   tilekit-bench snapshot TEMPLATE [--count 20] [--cache PATH]
//       600x400 PNG snapshots with 100 markers and a 200-point line over tiles from TEMPLATE
//       (with --cache, through a disk cache at PATH that a first, untimed snapshot fills)
//   tilekit-bench features GEOJSON --bbox W,S,E,N --zoom Z [--seconds 2] [--fast] [--dump DIR]
//       renders the feature layer's tiles over the box on one core, with and without PNG encoding
import Foundation
@_spi(PNGDecoders) import Canvas
import TileMath
import TileSources
import Features
import Rendering

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tilekit-bench: \(message)\n".utf8))
    exit(64)
}

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
func number(_ name: String, _ fallback: Double) -> Double { option(name).flatMap(Double.init) ?? fallback }

switch arguments.first {
case "codecs":
    guard arguments.count >= 2 else { fail("usage: tilekit-bench codecs IMAGE [--tile-size 256] [--seconds 2]") }
    benchCodecs(path: arguments[1], tileSize: Int(number("--tile-size", 256)), minimum: number("--seconds", 2))
case "make-tiles":
    guard arguments.count >= 2, let bbox = option("--bbox"), let zoom = option("--zoom") else {
        fail("usage: tilekit-bench make-tiles DIR --bbox W,S,E,N --zoom A-B")
    }
    await makeTiles(directory: arguments[1], bbox: bbox, zoom: zoom)
case "decode-png":
    let paths = arguments.dropFirst().prefix { !$0.hasPrefix("--") }
    guard !paths.isEmpty else { fail("usage: tilekit-bench decode-png PATH... [--rounds 200]") }
    benchPNGDecoding(paths: Array(paths), rounds: max(1, Int(number("--rounds", 200))))
case "scan":
    guard arguments.count >= 2 else { fail("usage: tilekit-bench scan IMAGE [--rounds 3]") }
    benchScan(path: arguments[1], rounds: max(1, Int(number("--rounds", 3))))
case "read":
    guard arguments.count >= 2 else { fail("usage: tilekit-bench read STORE [--seconds 2] [--concurrency 1] [--warm]") }
    await read(path: arguments[1], minimum: number("--seconds", 2), concurrency: max(1, Int(number("--concurrency", 1))),
               warm: arguments.contains("--warm"))
case "snapshot":
    guard arguments.count >= 2 else { fail("usage: tilekit-bench snapshot TEMPLATE [--count 20] [--cache PATH]") }
    await snapshots(template: arguments[1], count: Int(number("--count", 20)), cache: option("--cache"))
case "features":
    guard arguments.count >= 2, let bbox = option("--bbox"), let zoom = option("--zoom").flatMap(Int.init) else {
        fail("usage: tilekit-bench features GEOJSON --bbox W,S,E,N --zoom Z [--seconds 2] [--fast] [--dump DIR]")
    }
    await featureTiles(path: arguments[1], bbox: bbox, zoom: zoom, minimum: number("--seconds", 2))
default:
    fail("usage: tilekit-bench codecs|make-tiles|decode-png|read|snapshot|features ...")
}

func benchCodecs(path: String, tileSize: Int, minimum: Double) {
    let image: RGBAImage
    do { image = try RGBAImage(contentsOf: URL(fileURLWithPath: path)) } catch { fail("\(error)") }
    var tiles = [RGBAImage]()
    for y in stride(from: 0, through: image.height - tileSize, by: tileSize) {
        for x in stride(from: 0, through: image.width - tileSize, by: tileSize) {
            tiles.append(image.cropped(x: x, y: y, width: tileSize, height: tileSize))
        }
    }
    guard !tiles.isEmpty else { fail("\(path) is smaller than one \(tileSize) px tile") }
    let settings: [(String, EncodingOptions)] = [
        ("png-level1-nofilter", .png(compressionLevel: 1, filter: .none)),
        ("png-level2-nofilter", .png(compressionLevel: 2, filter: .none)),
        ("png-level6-allfilters", .png(compressionLevel: 6, filter: .all)),
        ("jpeg-q85", .jpeg(quality: 85)),
        ("webp-q80-method0", .webp(quality: 80, lossless: false, method: 0)),
        ("webp-lossless-method0", .webp(quality: 75, lossless: true, method: 0)),
    ]
    let clock = ContinuousClock()
    for (name, options) in settings {
        var count = 0, bytes = 0
        let start = clock.now
        repeat {
            for tile in tiles {
                bytes += (try? tile.encoded(options).count) ?? 0
                count += 1
            }
        } while (clock.now - start).seconds < minimum
        printJSONLine(CodecRate(codec: name, tilesPerSecond: Double(count) / (clock.now - start).seconds, meanBytes: bytes / count, tiles: tiles.count))
    }
}

/// PNGReader against libpng on the same files in the same process: a round decodes every
/// file once with each (which goes first alternates), so both see the same caches and load.
func benchPNGDecoding(paths: [String], rounds: Int) {
    var files = [[UInt8]]()
    for path in paths {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { fail("no such file: \(path)") }
        let names = isFolder.boolValue ? (FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []).map { path + "/" + $0 } : [path]
        for name in names.sorted() where name.hasSuffix(".png") {
            if let data = FileManager.default.contents(atPath: name) { files.append(Array(data)) }
        }
    }
    // Only the files PNGReader reads (and libpng reads to the same pixels) are timed.
    let tiles = files.filter { bytes in
        guard let fast = RGBAImage.decodedByPNGReader(bytes) else { return false }
        return (try? RGBAImage.decodedByLibpng(bytes)) == fast
    }
    guard !tiles.isEmpty else { fail("PNGReader reads none of the \(files.count) PNG files") }
    let clock = ContinuousClock()
    var fast = Duration.zero, libpng = Duration.zero, checksum = 0
    for round in 0..<rounds {
        for pass in round % 2 == 0 ? [0, 1] : [1, 0] {
            let start = clock.now
            for bytes in tiles {
                let image = pass == 0 ? RGBAImage.decodedByPNGReader(bytes) : try? RGBAImage.decodedByLibpng(bytes)
                checksum &+= Int(image?.pixels[0] ?? 0)
            }
            if pass == 0 { fast += clock.now - start } else { libpng += clock.now - start }
        }
    }
    let decodes = Double(rounds * tiles.count)
    printJSONLine(PNGDecodeTimes(files: files.count, tiles: tiles.count, rounds: rounds, pngreaderMS: fast.seconds * 1000 / decodes,
                                 libpngMS: libpng.seconds * 1000 / decodes, meanBytes: tiles.reduce(0) { $0 + $1.count } / tiles.count,
                                 checksum: checksum))
}

/// Every row of a (large) image through ImageRowReader, the pyramid's decoding path.
func benchScan(path: String, rounds: Int) {
    let clock = ContinuousClock()
    var best = Duration.seconds(1e9), width = 0, height = 0, checksum = 0
    for _ in 0..<rounds {
        let start = clock.now
        do {
            let reader = try ImageRowReader(path: path)
            (width, height) = (reader.width, reader.height)
            let row = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: reader.width * 4)
            defer { row.deallocate() }
            for _ in 0..<reader.height {
                try reader.readRow(into: row)
                checksum &+= Int(row[reader.width * 2])
            }
        } catch {
            fail("\(error)")
        }
        best = min(best, clock.now - start)
    }
    printJSONLine(ScanTimes(width: width, height: height, rounds: rounds, seconds: best.seconds,
                            megapixelsPerSecond: Double(width * height) / 1e6 / best.seconds, checksum: checksum))
}

func makeTiles(directory: String, bbox: String, zoom: String) async {
    let v = bbox.split(separator: ",").compactMap { Double($0) }
    let z = zoom.split(separator: "-").compactMap { Int($0) }
    guard v.count == 4, (1...2).contains(z.count) else { fail("bad --bbox or --zoom") }
    let box = BoundingBox(west: v[0], south: v[1], east: v[2], north: v[3])
    let source = GeneratedTileSource.debugGrid()
    do {
        let writer = try FolderTileWriter(directory: URL(fileURLWithPath: directory), fileExtension: "png")
        var count = 0
        for zoom in z[0]...(z.last!) {
            for range in TileRange.covering(box, zoom: zoom) {
                for tile in range {
                    if let data = try await source.tile(TileRequest(tile)).data { try writer.write(tile, bytes: data.bytes); count += 1 }
                }
            }
        }
        try writer.finish(metadata: TileSetMetadata(name: "bench", format: .png, minZoom: z[0], maxZoom: z.last!))
        printJSONLine(TilesWritten(tiles: count))
    } catch {
        fail("\(error)")
    }
}

func read(path: String, minimum: Double, concurrency: Int, warm: Bool) async {
    do {
        let source = try TileStore.open(path)
        var tiles = [TileID]()
        try TileStore.forEachTile(in: source) { tile, _ in tiles.append(tile) }
        tiles.shuffle()
        let remote = source as? HTTPPMTilesSource
        let listed = remote?.rangeRequests ?? 0
        if warm { for tile in tiles { _ = try await source.tile(TileRequest(tile)) } }
        let requestsBefore = remote?.rangeRequests ?? 0
        let clock = ContinuousClock()
        var count = 0, bytes = 0
        let start = clock.now
        if concurrency == 1 {
            repeat {
                for tile in tiles {
                    bytes += try await source.tile(TileRequest(tile)).data?.bytes.count ?? 0
                    count += 1
                }
            } while (clock.now - start).seconds < minimum
        } else {
            // N readers, each through its share of the tiles, until the time is up.
            let shares = (0..<concurrency).map { worker in stride(from: worker, to: tiles.count, by: concurrency).map { tiles[$0] } }
            let totals = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for share in shares {
                    group.addTask {
                        var count = 0, bytes = 0
                        repeat {
                            for tile in share {
                                bytes += try await source.tile(TileRequest(tile)).data?.bytes.count ?? 0
                                count += 1
                            }
                        } while (clock.now - start).seconds < minimum
                        return (count, bytes)
                    }
                }
                return try await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
            }
            (count, bytes) = totals
        }
        let elapsed = (clock.now - start).seconds
        let requests = remote.map {
            StoreReadRate.RangeRequests(openAndList: listed, warmUp: requestsBefore - listed, timed: $0.rangeRequests - requestsBefore, total: $0.rangeRequests)
        }
        printJSONLine(StoreReadRate(store: path, tilesPerSecond: Double(count) / elapsed, tiles: tiles.count, reads: count, bytes: bytes,
                                    rangeRequests: requests, cachedLeaves: remote?.cachedDirectories.directories))
    } catch {
        fail("\(error)")
    }
}

/// The same deterministic markers and line as scripts/bench.py gives staticmap.
func benchFeatures() -> [Feature] {
    var features = [Feature]()
    var line = [Coordinate]()
    for i in 0..<200 {
        let t = Double(i) / 199
        line.append(Coordinate(latitude: 40.76 + 0.03 * t + 0.004 * sin(t * 20), longitude: -73.99 + 0.05 * t))
    }
    var path = Feature(geometry: .lineString(line))
    path.style.stroke = Color(red: 0, green: 0, blue: 1)
    path.style.strokeWidth = 3
    features.append(path)
    for i in 0..<100 {
        var marker = Feature(geometry: .point(Coordinate(latitude: 40.755 + Double(i % 10) * 0.004, longitude: -73.995 + Double(i / 10) * 0.006)))
        marker.style.markerColor = Color(red: 1, green: 0, blue: 0)
        marker.style.markerSize = .small
        features.append(marker)
    }
    return features
}

func snapshots(template: String, count: Int, cache: String?) async {
    do {
        var options = RemoteOptions(userAgent: "tilekit-bench")
        options.maxConcurrentPerHost = 4
        options.requestsPerSecondPerHost = nil
        let remote = try RemoteTileSource(template: URLTemplate(template), metadata: TileSetMetadata(name: "bench"), options: options)
        let source: any TileSource = try cache.map { try CachedTileSource(upstream: remote, cachePath: $0) } ?? remote
        let features = benchFeatures()
        func render() async throws -> Int {
            let snapshot = try await Snapshotter.render(SnapshotOptions(region: .center(Coordinate(latitude: 40.775, longitude: -73.9675), zoom: 14),
                                                                        width: 600, height: 400, base: TileLayer(source: source), features: features))
            return try snapshot.image.encoded().count
        }
        if cache != nil { _ = try await render() }
        let clock = ContinuousClock()
        var bytes = 0
        let start = clock.now
        for _ in 0..<count { bytes += try await render() }
        let elapsed = (clock.now - start).seconds
        printJSONLine(SnapshotRate(images: count, msPerImage: elapsed * 1000 / Double(count), meanBytes: bytes / count))
    } catch {
        fail("\(error)")
    }
}

/// Feature-layer tiles, as a tile server renders them: every tile of the box at one zoom,
/// once only drawn and once drawn and PNG-encoded (level 2, no filter: TileKit's default).
func featureTiles(path: String, bbox: String, zoom: Int, minimum: Double) async {
    do {
        let features = try GeoJSON.load(URL(fileURLWithPath: path))
        let box = bbox.split(separator: ",").compactMap { Double($0) }
        guard box.count == 4 else { fail("bbox \(bbox) is not W,S,E,N") }
        let tiles = TileRange.covering(BoundingBox(west: box[0], south: box[1], east: box[2], north: box[3]), zoom: zoom).flatMap { Array($0) }
        var renderer = FeatureRenderer()
        renderer.antialias = arguments.contains("--fast") ? .fast : .best
        let source = FeatureTileSource(name: "bench", features: features, renderer: renderer)
        if let folder = option("--dump") {
            // The tiles as PNG files, to look at or to compare two builds byte for byte.
            for tile in tiles {
                guard let bytes = try await source.tile(TileRequest(tile)).data?.bytes else { continue }
                try Data(bytes).write(to: URL(fileURLWithPath: folder).appendingPathComponent("\(tile.z)-\(tile.x)-\(tile.y).png"))
            }
        }
        let clock = ContinuousClock()
        func rate(_ body: (TileID) async throws -> Int) async throws -> (Double, Int) {
            var count = 0, bytes = 0
            let start = clock.now
            repeat {
                for tile in tiles { bytes += try await body(tile); count += 1 }
            } while (clock.now - start).seconds < minimum
            return (Double(count) / (clock.now - start).seconds, bytes / count)
        }
        let (drawn, _) = try await rate { tile in try source.draw(TileRequest(tile)) == nil ? 0 : 1 }
        let (encoded, meanBytes) = try await rate { tile in try await source.tile(TileRequest(tile)).data?.bytes.count ?? 0 }
        // Label placement over the whole layer, per zoom, each on a fresh index (what the
        // first tile of a zoom waits for); one placement first warms fontconfig and Pango.
        _ = LabelIndex(layers: [LabelIndex.Layer(features: features, renderer: renderer)]).placement(zoom: Double(zoom))
        let labelTimes = (max(0, zoom - 3)...min(22, zoom + 2)).map { z in
            LabelPlacementCounts(LabelIndex(layers: [LabelIndex.Layer(features: features, renderer: renderer)]).placement(zoom: Double(z)))
        }
        printJSONLine(FeatureTileRate(tiles: tiles.count, features: features.count, drawnPerSecond: drawn, pngPerSecond: encoded,
                                      meanBytes: meanBytes, labelPlacement: labelTimes))
    } catch {
        fail("\(error)")
    }
}
