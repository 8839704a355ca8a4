import Foundation
import TileMath

/// `tilekit tile at LON LAT --zoom Z`: the tile containing a coordinate.
enum TileAt: Command {
    static let path = ["tile", "at"]
    static let summary = "the tile that contains a coordinate"
    static let options = OptionSpec(valued: ["zoom"], aliases: ["z": "zoom"])
    static let help = """
    Usage: tilekit tile at LON LAT --zoom Z
           tilekit tile at LON,LAT --zoom Z
           tilekit tile at - --zoom Z        (one "LON LAT" or "LON,LAT" per stdin line)

    Prints {"x":X,"y":Y,"z":Z}: the XYZ tile at zoom Z (0-30) containing the coordinate,
    as mercantile.tile does. Coordinates are longitude first (GeoJSON order).

    Options:
      -z, --zoom Z    zoom level, 0-30 (required)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        let zoom = try Parse.zoom(try required(arguments, "zoom"))
        try expectPositionals(arguments, 1...2, "coordinate LON LAT")
        let input = arguments.positionals.joined(separator: ",")
        try eachInput(input, io: io) { text throws(CLIError) in
            let tile = TileID(containing: try Parse.coordinate(text), zoom: zoom)
            io.write(TileReport(tile).sortedJSONLine)
        }
    }
}

/// `tilekit tile bounds Z/X/Y`: a tile's extent in degrees.
enum TileBounds: Command {
    static let path = ["tile", "bounds"]
    static let summary = "a tile's west, south, east and north edges in degrees"
    static let options = OptionSpec(flags: ["meters"])
    static let help = """
    Usage: tilekit tile bounds Z/X/Y [--meters]
           tilekit tile bounds - [--meters]     (one Z/X/Y per stdin line)

    Prints {"east":E,"north":N,"south":S,"west":W} in degrees (mercantile.bounds), or in
    Web Mercator meters with --meters (mercantile.xy_bounds).

    Options:
      --meters    EPSG:3857 meters instead of degrees
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "tile Z/X/Y")
        try eachInput(arguments.positionals[0], io: io) { text throws(CLIError) in
            let tile = try Parse.tile(text)
            let edges: EdgesReport
            if arguments.flag("meters") {
                let b = tile.mercatorBounds
                edges = EdgesReport(west: b.west, south: b.south, east: b.east, north: b.north)
            } else {
                let b = tile.bounds
                edges = EdgesReport(west: b.west, south: b.south, east: b.east, north: b.north)
            }
            io.write(edges.sortedJSONLine)
        }
    }
}

/// `tilekit tile list --bbox W,S,E,N --zoom A-B`: every tile covering a box.
enum TileList: Command {
    static let path = ["tile", "list"]
    static let summary = "the tiles that cover a bounding box, or their count per zoom"
    static let options = OptionSpec(valued: ["bbox", "zoom"], flags: ["tms", "count"], aliases: ["z": "zoom", "b": "bbox"])
    static let help = """
    Usage: tilekit tile list --bbox W,S,E,N --zoom A-B [--tms] [--count]
           tilekit tile list --bbox - --zoom A-B ...   (one W,S,E,N per stdin line)

    Prints one z/x/y per line, ordered by z, then x, then y: the tiles that cover the box
    at each zoom (mercantile.tiles). A box whose west is greater than its east crosses the
    antimeridian. Latitudes are clamped to ±85.051129°.

    Options:
      -b, --bbox W,S,E,N   the box in degrees, GeoJSON order (required)
      -z, --zoom A-B       a zoom (13) or an inclusive range (13-16), 0-30 (required)
      --tms                print TMS rows (counted from the south, as MBTiles stores them)
      --count              print {"tiles":TOTAL,"zooms":[{"tiles":n,"zoom":13},...]} instead
    """

    /// Above this many tiles a listing is surely a mistake; --count still answers.
    static let listLimit = 50_000_000

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 0...0, "")
        let zooms = try Parse.zoomRange(try required(arguments, "zoom"))
        try eachInput(try required(arguments, "bbox"), io: io) { text throws(CLIError) in
            let box = try Parse.boundingBox(text)
            if arguments.flag("count") {
                io.write(TileCountReport(TileRange.counts(covering: box, zooms: zooms), zooms: zooms).sortedJSONLine)
                return
            }
            let total = TileRange.counts(covering: box, zooms: zooms).values.reduce(0, +)
            guard total <= listLimit else {
                throw .usage("the box covers \(total) tiles at zoom \(zooms.lowerBound)-\(zooms.upperBound); narrow it or use --count")
            }
            var lines = [String]()
            for zoom in zooms {
                for range in TileRange.covering(box, zoom: zoom) {
                    for tile in range {
                        lines.append("\(tile.z)/\(tile.x)/\(arguments.flag("tms") ? tile.tmsY : tile.y)")
                        if lines.count >= 4096 {
                            io.write(lines.joined(separator: "\n"))
                            lines.removeAll(keepingCapacity: true)
                        }
                    }
                }
            }
            if !lines.isEmpty { io.write(lines.joined(separator: "\n")) }
        }
    }
}

/// `tilekit tile quadkey Z/X/Y`.
enum TileQuadkey: Command {
    static let path = ["tile", "quadkey"]
    static let summary = "the Bing quadkey of a tile"
    static let options = OptionSpec()
    static let help = """
    Usage: tilekit tile quadkey Z/X/Y
           tilekit tile quadkey -       (one Z/X/Y per stdin line)

    Prints the tile's quadkey (one digit 0-3 per zoom level; empty at zoom 0).
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "tile Z/X/Y")
        try eachInput(arguments.positionals[0], io: io) { text throws(CLIError) in
            io.write(try Parse.tile(text).quadkey)
        }
    }
}

/// `tilekit tile from-quadkey KEY`.
enum TileFromQuadkey: Command {
    static let path = ["tile", "from-quadkey"]
    static let summary = "the tile of a Bing quadkey"
    static let options = OptionSpec()
    static let help = """
    Usage: tilekit tile from-quadkey KEY
           tilekit tile from-quadkey -   (one quadkey per stdin line)

    Prints the tile as z/x/y. A quadkey has one digit 0-3 per zoom level, at most 30.
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "quadkey")
        try eachInput(arguments.positionals[0], io: io) { text throws(CLIError) in
            do throws(TileMathError) {
                io.write(try TileID(quadkey: text).description)
            } catch {
                throw .usage(error.description)
            }
        }
    }
}

/// `tilekit tile parent Z/X/Y`.
enum TileParent: Command {
    static let path = ["tile", "parent"]
    static let summary = "the tile one zoom up that contains a tile"
    static let options = OptionSpec(valued: ["zoom"], aliases: ["z": "zoom"])
    static let help = """
    Usage: tilekit tile parent Z/X/Y [--zoom Z]
           tilekit tile parent - [--zoom Z]   (one Z/X/Y per stdin line)

    Prints the parent tile as z/x/y, or with --zoom the ancestor at that lower zoom.
    Tile 0/0/0 has no parent.

    Options:
      -z, --zoom Z   the ancestor's zoom (default: one less than the tile's)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "tile Z/X/Y")
        let zoom = try Parse.optionalZoom(arguments.values["zoom"])
        try eachInput(arguments.positionals[0], io: io) { text throws(CLIError) in
            let tile = try Parse.tile(text)
            let target = zoom ?? tile.z - 1
            guard tile.z > 0 else { throw .usage("tile \(tile) has no parent") }
            guard let ancestor = tile.ancestor(atZoom: target), target < tile.z else {
                throw .usage("zoom \(target) is not above the tile's zoom \(tile.z)")
            }
            io.write(ancestor.description)
        }
    }
}

/// `tilekit tile children Z/X/Y`.
enum TileChildren: Command {
    static let path = ["tile", "children"]
    static let summary = "the four tiles one zoom down, or all descendants at a zoom"
    static let options = OptionSpec(valued: ["zoom"], aliases: ["z": "zoom"])
    static let help = """
    Usage: tilekit tile children Z/X/Y [--zoom Z]
           tilekit tile children - [--zoom Z]   (one Z/X/Y per stdin line)

    Prints the four children as z/x/y lines in mercantile's order (top-left, top-right,
    bottom-right, bottom-left), or with --zoom every descendant at that deeper zoom,
    ordered by x then y.

    Options:
      -z, --zoom Z   the descendants' zoom (default: one more than the tile's; at most 30)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "tile Z/X/Y")
        let zoom = try Parse.optionalZoom(arguments.values["zoom"])
        try eachInput(arguments.positionals[0], io: io) { text throws(CLIError) in
            let tile = try Parse.tile(text)
            guard tile.z < TileID.maxZoom else { throw .usage("tile \(tile) is at the deepest zoom, \(TileID.maxZoom)") }
            if let zoom {
                guard zoom > tile.z, let range = tile.descendants(atZoom: zoom) else {
                    throw .usage("zoom \(zoom) is not below the tile's zoom \(tile.z)")
                }
                guard range.count <= TileList.listLimit else { throw .usage("tile \(tile) has \(range.count) descendants at zoom \(zoom)") }
                io.write(range.map(\.description).joined(separator: "\n"))
            } else {
                io.write(tile.children.map(\.description).joined(separator: "\n"))
            }
        }
    }
}
