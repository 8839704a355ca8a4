import Foundation
import MapProjects
public import Canvas
public import TileMath

/// What a request path asks for. Paths are parsed segment by segment into values, never
/// joined onto the file system: nothing a client writes can name a file.
public enum Route: Equatable, Sendable {
    case index
    case health
    /// Ready for traffic: the maps are open and the shared cache (when configured) answers.
    case ready
    case metrics
    /// Leaflet's files and the viewer's script, by their fixed names.
    case asset(String)
    case viewer(map: String)
    /// `/maps/{map}` without the slash: redirected, so the viewer's relative URLs work.
    case viewerRedirect(map: String)
    case tileJSON(map: String, layer: String?)
    case tile(map: String, layer: String?, TileID, scale: Int, format: ImageFormat)
    case features(map: String, layer: String)
    case staticImage(map: String, StaticRequest)
    /// Server-sent events of a route played on the map's game.
    case play(map: String)
    /// Where a warp zone leads: the stations sharing a line with it.
    case warps(map: String, station: String)

    /// A static image: where, how big, and whether the image or its geometry as JSON.
    public struct StaticRequest: Equatable, Sendable {
        public enum Region: Equatable, Sendable {
            case center(Coordinate, zoom: Double)
            case box(BoundingBox)
            case auto
        }
        public var region: Region
        public var width: Int
        public var height: Int
        public var scale: Int
        /// nil: the geometry as JSON (the `.json` twin of the image).
        public var format: ImageFormat?
    }

    public struct Failure: Error, Equatable, Sendable {
        public let status: Int
        public let message: String
        init(_ status: Int, _ message: String) {
            self.status = status
            self.message = message
        }
    }

    public static let assets: Set<String> = ["leaflet.js", "leaflet.css", "viewer.js", "viewer.css", "hero.png",
                                              "images/layers.png", "images/layers-2x.png"]

    /// Parses a raw (still percent-encoded) path.
    public static func parse(_ rawPath: String) throws(Failure) -> Route {
        if let tile = plainTile(rawPath) { return tile }
        return try parseSegments(rawPath)
    }

    /// The path nearly every request has, `/maps/{map}/{z}/{x}/{y}[@Nx].{ext}`, read from its
    /// bytes without a string a segment: nil for anything else, even a tile path written
    /// another way (`@+2x`), which `parseSegments` reads (and refuses) as ever. It accepts
    /// only what `parseSegments` turns into the same route: the map a URL name, z, x and y
    /// 1-10 digits, z at most `TileID.maxZoom`, x and y on its grid, no `%`, `.` only before
    /// the extension. On the server's hot path, splitting the path into strings was a
    /// twelfth of a cached tile's time.
    static func plainTile(_ rawPath: String) -> Route? {
        let found = rawPath.utf8.withContiguousStorageIfAvailable { bytes -> Route? in
            var i = 0
            let count = bytes.count
            func skip(_ text: StaticString) -> Bool {
                let n = text.utf8CodeUnitCount
                guard count - i >= n, memcmp(bytes.baseAddress! + i, text.utf8Start, n) == 0 else { return false }
                i += n
                return true
            }
            /// 1-10 digits, as `small` reads them.
            func number() -> Int? {
                var value = 0, digits = 0
                while i < count, digits < 11, bytes[i] >= 48, bytes[i] <= 57 {
                    value = value &* 10 &+ Int(bytes[i] - 48)
                    digits += 1
                    i += 1
                }
                return (1...10).contains(digits) ? value : nil
            }
            guard skip("/maps/") else { return nil }
            let nameStart = i
            while i < count, MapProjectReader.isURLNameByte(bytes[i]) { i += 1 }
            let nameEnd = i
            guard (1...64).contains(nameEnd - nameStart), skip("/") else { return nil }
            let map = String(decoding: UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd]), as: UTF8.self)
            guard let z = number(), skip("/"), let x = number(), skip("/"), let y = number() else { return nil }
            var scale = 1
            if skip("@") {
                guard i < count, (49...51).contains(bytes[i]) else { return nil }
                scale = Int(bytes[i] - 48)
                i += 1
                guard skip("x") else { return nil }
            }
            guard skip("."), (1...4).contains(count - i),
                  bytes[i...].allSatisfy({ ($0 | 0x20) >= 97 && ($0 | 0x20) <= 122 }),
                  let format = ImageFormat(name: String(decoding: UnsafeBufferPointer(rebasing: bytes[i...]), as: UTF8.self)),
                  TileID.isValid(z: z, x: x, y: y) else { return nil }
            return .tile(map: map, layer: nil, TileID(z: z, x: x, y: y), scale: scale, format: format)
        }
        return found ?? nil
    }

    /// Parses a raw path segment by segment: every route, and every refusal.
    static func parseSegments(_ rawPath: String) throws(Failure) -> Route {
        guard rawPath.hasPrefix("/") else { throw Failure(400, "the path must start with /") }
        // One pass over the bytes: most paths have nothing encoded, and skip the slow checks.
        var hasPercent = false
        for byte in rawPath.utf8 {
            switch byte {
            case 0: throw Failure(400, "NUL in the path")
            case UInt8(ascii: "\\"): throw Failure(400, "'\\' is not allowed in a path")
            case UInt8(ascii: "%"): hasPercent = true
            default: continue
            }
        }
        var segments = rawPath.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        if segments.contains(where: { $0 == ".." || $0 == "." }) { throw Failure(400, "'.' and '..' are not allowed in a path") }
        if hasPercent {
            let lowered = rawPath.lowercased()
            for encoded in ["%2e", "%2f", "%5c", "%00"] where lowered.contains(encoded) {
                throw Failure(400, "encoded '.', '/', '\\' or NUL (\(encoded)) is not allowed in a path")
            }
            // Commas may come encoded (%2C) from some clients; nothing else needs decoding.
            segments = segments.map { $0.replacingOccurrences(of: "%2C", with: ",").replacingOccurrences(of: "%2c", with: ",") }
            guard segments.allSatisfy({ !$0.contains("%") }) else { throw Failure(400, "unexpected percent-encoding in the path") }
        }

        switch segments.count {
        case 1 where segments[0] == "": return .index
        case 1 where segments[0] == "health": return .health
        case 1 where segments[0] == "ready": return .ready
        case 1 where segments[0] == "metrics": return .metrics
        case 1 where segments[0] == "favicon.ico": return .asset("hero.png")
        default: break
        }
        if segments.first == "assets" {
            let name = segments.dropFirst().joined(separator: "/")
            guard assets.contains(name) else { throw Failure(404, "no asset \"\(name)\"") }
            return .asset(name)
        }
        guard segments.first == "maps", segments.count >= 2 else { throw Failure(404, "no such page; maps are under /maps/") }
        if segments.count == 2 {
            if segments[1].hasSuffix(".json") { return .tileJSON(map: try name(String(segments[1].dropLast(5)), "map"), layer: nil) }
            return .viewerRedirect(map: try name(segments[1], "map"))
        }
        let map = try name(segments[1], "map")
        let tail = Array(segments.dropFirst(2))
        switch tail.first {
        case "":
            guard tail.count == 1 else { throw Failure(404, "no such page") }
            return .viewer(map: map)
        case "layers":
            if tail.count == 2, tail[1].hasSuffix(".json") { return .tileJSON(map: map, layer: try name(String(tail[1].dropLast(5)), "layer")) }
            guard tail.count == 5 else { throw Failure(404, "a layer tile is /maps/{map}/layers/{layer}/{z}/{x}/{y}.{png|jpg|webp}") }
            let (tile, scale, format) = try tileAddress(tail[2], tail[3], tail[4])
            return .tile(map: map, layer: try name(tail[1], "layer"), tile, scale: scale, format: format)
        case "play":
            guard tail.count == 1 else { throw Failure(404, "the game is played at /maps/{map}/play?gpx=ROUTE") }
            return .play(map: map)
        case "warps":
            guard tail.count == 2, tail[1].hasSuffix(".json") else { throw Failure(404, "warps are at /maps/{map}/warps/{station}.json") }
            return .warps(map: map, station: try name(String(tail[1].dropLast(5)), "station"))
        case "features":
            guard tail.count == 2, tail[1].hasSuffix(".geojson") else { throw Failure(404, "features are at /maps/{map}/features/{layer}.geojson") }
            return .features(map: map, layer: try name(String(tail[1].dropLast(8)), "layer"))
        case "static":
            guard tail.count == 3 else { throw Failure(404, "a static image is /maps/{map}/static/{lon},{lat},{zoom}/{w}x{h}[@2x].{png|jpg|webp|json}") }
            return .staticImage(map: map, try staticRequest(tail[1], tail[2]))
        default:
            guard tail.count == 3 else { throw Failure(404, "a tile is /maps/{map}/{z}/{x}/{y}[@2x].{png|jpg|webp}") }
            let (tile, scale, format) = try tileAddress(tail[0], tail[1], tail[2])
            return .tile(map: map, layer: nil, tile, scale: scale, format: format)
        }
    }

    static func name(_ text: String, _ what: String) throws(Failure) -> String {
        guard MapProjectReader.isURLName(text) else { throw Failure(404, "no \(what) \"\(text.prefix(64))\"") }
        return text
    }

    /// `{z}`, `{x}`, `{y}[@2x].{ext}`, checked against the zoom's grid.
    static func tileAddress(_ zText: String, _ xText: String, _ last: String) throws(Failure) -> (TileID, Int, ImageFormat) {
        let (stem, scale, ext) = try suffixes(last)
        guard let format = ImageFormat(name: ext) else { throw Failure(404, "extension \".\(ext)\" is not png, jpg or webp") }
        guard let z = small(zText), let x = small(xText), let y = small(stem) else {
            throw Failure(400, "tile \(zText.prefix(12))/\(xText.prefix(12))/\(stem.prefix(12)): z, x and y must be whole numbers")
        }
        guard z <= TileID.maxZoom else { throw Failure(400, "zoom \(z) is out of range [0, \(TileID.maxZoom)]") }
        let n = 1 << z
        guard x < n, y < n else { throw Failure(400, "tile \(z)/\(x)/\(y): x and y must be below \(n) at zoom \(z)") }
        return (TileID(z: z, x: x, y: y), scale, format)
    }

    /// `name[@2x].ext` into its parts.
    static func suffixes(_ text: String) throws(Failure) -> (String, Int, String) {
        guard let dot = text.lastIndex(of: ".") else { throw Failure(404, "\"\(text.prefix(32))\" has no extension") }
        var stem = String(text[..<dot])
        let ext = String(text[text.index(after: dot)...]).lowercased()
        var scale = 1
        if let at = stem.lastIndex(of: "@") {
            let factor = stem[stem.index(after: at)...]
            guard factor.hasSuffix("x"), let n = Int(factor.dropLast()), (1...3).contains(n) else {
                throw Failure(400, "scale \"@\(factor)\" is not @1x, @2x or @3x")
            }
            scale = n
            stem = String(stem[..<at])
        }
        return (stem, scale, ext)
    }

    /// Digits only (no sign, no spaces), at most 10 of them.
    static func small(_ text: String) -> Int? {
        // Bytes, not characters: counting characters walks grapheme breaks, and digits are one byte each.
        guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(text)
    }

    static func staticRequest(_ regionText: String, _ sizeText: String) throws(Failure) -> StaticRequest {
        let (stem, scale, ext) = try suffixes(sizeText)
        let format: ImageFormat?
        if ext == "json" { format = nil } else {
            guard let f = ImageFormat(name: ext) else { throw Failure(404, "extension \".\(ext)\" is not png, jpg, webp or json") }
            format = f
        }
        let size = stem.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let width = small(String(size[0])), let height = small(String(size[1])) else {
            throw Failure(400, "size \"\(stem.prefix(32))\" is not WxH")
        }
        let region: StaticRequest.Region
        if regionText == "auto" {
            region = .auto
        } else {
            let numbers = regionText.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
            guard numbers.allSatisfy({ $0 != nil && $0!.isFinite }) else { throw Failure(400, "region \"\(regionText.prefix(64))\" is not lon,lat,zoom or w,s,e,n or auto") }
            let n = numbers.map { $0! }
            switch n.count {
            case 3:
                // The limit as TileJSON writes it (85.051129°, just past the exact one), so a
                // centre copied from a TileJSON or a map's bounds passes; the snapshot clamps
                // the rest of the way.
                let limit = Coordinate.roundedMaxMercatorLatitude
                guard (-180...180).contains(n[0]), (-limit...limit).contains(n[1]) else { throw Failure(400, "centre \(n[0]),\(n[1]) is not a longitude,latitude on the map") }
                guard (0...Double(TileID.maxZoom)).contains(n[2]) else { throw Failure(400, "zoom \(n[2]) is out of range [0, \(TileID.maxZoom)]") }
                region = .center(Coordinate(latitude: n[1], longitude: n[0]), zoom: n[2])
            case 4:
                guard (-180...180).contains(n[0]), (-180...180).contains(n[2]), (-90...90).contains(n[1]), (-90...90).contains(n[3]), n[1] < n[3] else {
                    throw Failure(400, "box \(regionText.prefix(64)) is not west,south,east,north with south below north")
                }
                region = .box(BoundingBox(west: n[0], south: n[1], east: n[2], north: n[3]))
            default:
                throw Failure(400, "region \"\(regionText.prefix(64))\" is not lon,lat,zoom or w,s,e,n or auto")
            }
        }
        return StaticRequest(region: region, width: width, height: height, scale: scale, format: format)
    }
}
