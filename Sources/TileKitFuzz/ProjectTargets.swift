import Foundation
import TileMath
import Canvas
import TileSources
import Rendering
import Pyramids
import TileServer

// Text a user or a client writes: URL templates, request paths, world files.

extension FuzzTarget {
    /// Line 1: the template; line 2: subdomains as on the command line (`abc`, `t1,t2`);
    /// further lines: `name=value` variables.
    static let urlTemplate = FuzzTarget(name: "urltemplate", input: "a URL template, a line of subdomains, then name=value lines") { bytes in
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let text = lines.first else { return }
        let subdomains = lines.count > 1 ? URLTemplate.subdomains(lines[1]) : ["a", "b", "c"]
        var variables = [String: String]()
        for line in lines.dropFirst(2) {
            guard let equals = line.firstIndex(of: "=") else { continue }
            variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let template = try? URLTemplate(text, subdomains: subdomains, variables: variables) else { return }
        for tile in [TileID(z: 0, x: 0, y: 0), TileID(z: 5, x: 17, y: 3), TileID(z: TileID.maxZoom, x: (1 << TileID.maxZoom) - 1, y: 0)] {
            for scale in 1...3 {
                // The remote source takes the URL apart with Foundation before fetching it.
                _ = URL(string: template.url(for: tile, scale: scale))?.host
            }
        }
    }

    /// A request target as it arrives: the path, then an optional `?query` whose `markers`
    /// and `path` are the static images' quick overlays.
    static let route = FuzzTarget(name: "route", input: "a request target: /path?query") { bytes in
        let target = String(decoding: bytes, as: UTF8.self)
        let (path, query) = target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) } ?? (target, "")
        _ = try? Route.parse(path)
        for item in query.split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, let value = String(pair[1]).removingPercentEncoding, !value.isEmpty else { continue }
            switch pair[0] {
            case "markers": for marker in value.split(separator: "|") { _ = try? QuickOverlays.marker(String(marker)) }
            case "path": _ = try? QuickOverlays.path(value)
            default: continue
            }
        }
    }

    /// A world file, in degrees, or in meters after a first line `EPSG:3857` (the CLI's
    /// --crs): the georeference it makes for images of a few sizes, what the pyramid plans
    /// from it, and (when that is at most 16 tiles) the pyramid of a 4x4 image.
    static let worldFile = FuzzTarget(name: "worldfile", input: "a world file (six numbers), after an optional EPSG:3857 line") { bytes in
        var text = String(decoding: bytes, as: UTF8.self)
        var space = Georeference.Space.degrees
        for crs in [Georeference.Space.degrees, .meters] where text.hasPrefix(crs.rawValue + "\n") {
            space = crs
            text.removeFirst(crs.rawValue.count + 1)
        }
        for (width, height) in [(16384, 8192), (1, 1)] {
            guard let georeference = try? Georeference.worldFile(text, space: space, width: width, height: height, file: "fuzz.pgw") else { continue }
            _ = georeference.bounds
            _ = georeference.worldFileText
            _ = georeference.defaultZooms(tileSize: 256)
            _ = try? PyramidBuilder(source: "unread.png", georeference: georeference, stores: [], options: PyramidOptions())
        }
        guard let georeference = try? Georeference.worldFile(text, space: space, width: 4, height: 4, file: "fuzz.pgw"),
              let image = Scratch.shared.write(Scratch.shared.tinyPNG, to: "scan.png") else { return }
        buildPyramid(source: image, georeference: georeference, zooms: nil)
    }
}
