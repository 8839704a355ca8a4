import Foundation
import TileMath
import Canvas
import MBTiles
import PMTiles
import TileSources
import MapProjects

extension FuzzTarget {
    /// A map.json in a folder of small real files it may point at (see `MapFolder`). A map
    /// that loads and keeps to that folder is also opened and served: its tiles, TileJSON
    /// and features.
    static let mapJSON = FuzzTarget(name: "mapjson", input: "a map.json beside \(MapFolder.fileNames.joined(separator: ", "))") { bytes in
        // Paths are the author's to choose; a map that names a device file would only test
        // reading /dev/zero, so such inputs are skipped.
        let text = String(decoding: bytes, as: UTF8.self)
        guard !["/dev/", "/proc/", "/sys/"].contains(where: text.contains) else { return }
        let folder = MapFolder.shared
        defer { folder.removeAddedFiles() }
        guard let url = Scratch.shared.write(bytes, to: "map/map.json").map(URL.init(fileURLWithPath:)),
              let project = try? MapProjectReader.load(url) else { return }
        // Only a map whose files all lie in the folder is opened (opening creates caches),
        // and only one without remote layers is served (serving would fetch from the network).
        var files = [String]()
        var remote = false
        for layer in project.layers {
            switch layer.source {
            case .store(let path, _): files.append(path)
            case .features(let paths): files += paths
            case .remote(_, let cache, _): remote = true; files += cache.map { [$0] } ?? []
            case .generated: break
            }
        }
        if let game = project.game { files += [game.pois] + Array(game.routes.values) }
        guard files.allSatisfy({ $0.hasPrefix(folder.path + "/") && !$0.contains("/../") }),
              let map = try? ServedMap(project), !remote else { return }
        var paths = ["/maps/\(project.name)/0/0/0.png", "/maps/\(project.name).json", "/maps/\(project.name)/2/1/1@2x.png"]
        for layer in project.layers {
            paths.append("/maps/\(project.name)/layers/\(layer.id)/1/0/0.png")
            if layer.isFeatureLayer { paths.append("/maps/\(project.name)/features/\(layer.id).geojson") }
        }
        if project.game != nil { paths.append("/maps/\(project.name)/warps/station.json") }
        serve(map, paths: paths)
    }
}

/// The folder map.json inputs are read in: a tile store of each kind, feature files of
/// each format, a game's points and route, and an image, all small and valid, made once
/// per process.
final class MapFolder: Sendable {
    static let shared = MapFolder()
    static let fileNames = ["tiles.mbtiles", "tiles.pmtiles", "tiles/", "features.geojson", "pois.geojson", "route.gpx",
                            "places.kml", "park.plist", "parchment.png"]

    let path: String

    private init() {
        let scratch = Scratch.shared
        path = scratch.path("map")
        try? FileManager.default.createDirectory(atPath: path + "/tiles/0/0", withIntermediateDirectories: true)
        let tile = scratch.tilePNG
        _ = FileManager.default.createFile(atPath: path + "/tiles/0/0/0.png", contents: Data(tile))
        _ = FileManager.default.createFile(atPath: path + "/parchment.png", contents: Data(scratch.tinyPNG))
        for (name, text) in Self.texts { _ = FileManager.default.createFile(atPath: path + "/" + name, contents: Data(text.utf8)) }
        let tiles = [TileID(z: 0, x: 0, y: 0), TileID(z: 1, x: 0, y: 0), TileID(z: 1, x: 1, y: 1)]
        if let writer = try? MBTilesWriter(path: path + "/tiles.mbtiles") {
            for id in tiles { try? writer.write(id, bytes: tile) }
            try? writer.finish(metadata: MBTiles.Metadata(["name": "tiles", "format": "png", "minzoom": "0", "maxzoom": "1",
                                                           "bounds": "-180,-85,180,85", "center": "0,0,1"]))
        }
        if let writer = try? PMTilesWriter(path: path + "/tiles.pmtiles") {
            for id in tiles { try? writer.write(id, bytes: tile) }
            var header = PMTilesHeader()
            header.maxZoom = 1
            try? writer.finish(header: header, metadataJSON: Array(#"{"name":"tiles"}"#.utf8))
        }
    }

    /// Removes what a map created in the folder (caches), so each input starts alike.
    func removeAddedFiles() {
        let kept = Set(Self.fileNames.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } + ["map.json"])
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where !kept.contains(name) {
            try? FileManager.default.removeItem(atPath: path + "/" + name)
        }
    }

    static let texts: [(String, String)] = [
        ("features.geojson", """
            {"type": "FeatureCollection", "features": [
             {"type": "Feature", "properties": {"title": "Pin", "marker-color": "#d33", "marker-symbol": "star"},
              "geometry": {"type": "Point", "coordinates": [-73.97, 40.77]}},
             {"type": "Feature", "properties": {"stroke": "#33d", "stroke-width": 3, "renderer": "wobbly"},
              "geometry": {"type": "LineString", "coordinates": [[-73.98, 40.76], [-73.96, 40.78]]}},
             {"type": "Feature", "properties": {"fill": "#3d3", "fill-opacity": 0.4, "renderer": "shimmer"},
              "geometry": {"type": "Polygon", "coordinates": [[[-73.98, 40.76], [-73.96, 40.76], [-73.96, 40.78], [-73.98, 40.76]]]}},
             {"type": "Feature", "properties": {"radius": 120}, "geometry": {"type": "Point", "coordinates": [-73.965, 40.775]}},
             {"type": "Feature", "properties": {"image": "parchment.png"},
              "geometry": {"type": "Polygon", "coordinates": [[[-74, 40.7], [-73.9, 40.7], [-73.9, 40.8], [-74, 40.8], [-74, 40.7]]]}}]}
            """),
        ("pois.geojson", """
            {"type": "FeatureCollection", "features": [
             {"type": "Feature", "properties": {"id": "q1", "kind": "quest", "title": "Quest"}, "geometry": {"type": "Point", "coordinates": [-73.97, 40.77]}},
             {"type": "Feature", "properties": {"id": "station", "kind": "warp", "lines": ["N", "R"]}, "geometry": {"type": "Point", "coordinates": [-73.973, 40.764]}},
             {"type": "Feature", "properties": {"id": "w2", "kind": "warp", "lines": ["N"]}, "geometry": {"type": "Point", "coordinates": [-73.98, 40.76]}}]}
            """),
        ("route.gpx", """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="tilekit-fuzz" xmlns="http://www.topografix.com/GPX/1/1">
             <trk><name>Walk</name><trkseg>
              <trkpt lat="40.7648" lon="-73.9733"><ele>20</ele><time>2024-05-01T10:00:00Z</time></trkpt>
              <trkpt lat="40.7660" lon="-73.9721"><ele>21</ele><time>2024-05-01T10:01:00Z</time></trkpt>
              <trkpt lat="40.7677" lon="-73.9718"><ele>22</ele><time>2024-05-01T10:02:30Z</time></trkpt>
             </trkseg></trk>
            </gpx>
            """),
        ("places.kml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <kml xmlns="http://www.opengis.net/kml/2.2"><Document>
             <Style id="red"><LineStyle><color>ff0000ff</color><width>2</width></LineStyle></Style>
             <Placemark><name>Point</name><Point><coordinates>-73.97,40.77,0</coordinates></Point></Placemark>
             <Placemark><styleUrl>#red</styleUrl><LineString><coordinates>-73.98,40.76 -73.96,40.78</coordinates></LineString></Placemark>
            </Document></kml>
            """),
        ("park.plist", """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><array>
             <string>{34.4241,-118.601}</string><string>{34.429,-118.5975}</string><string>{34.4251,-118.5921}</string>
            </array></plist>
            """),
    ]
}
