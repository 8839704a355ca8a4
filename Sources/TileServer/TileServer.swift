import Foundation
import Canvas
import TileMath
import TileSources
import Features
import Rendering
import Compression
public import SharedCache
public import MapProjects

/// Limits and settings of `tilekit serve`.
public struct ServerOptions: Sendable {
    /// Bytes of encoded tiles kept in memory.
    public var cacheBytes = 128 << 20
    /// Largest static image side, in CSS pixels.
    public var maxStaticSide = 2048
    public var maxMarkers = 500
    public var maxPathPoints = 10_000
    public var maxBodyBytes = 1 << 20
    /// Static images drawn at once; more are refused with 503 at once. One core is left to
    /// tiles and streams.
    public var maxConcurrentStaticRenders = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
    public var requestTimeout: Duration = .seconds(30)
    /// Where Debian's libjs-leaflet puts Leaflet (read by `ServerAssets.prepare`, not by the server).
    public var leafletFolder = "/usr/share/javascript/leaflet"
    /// A tile cache shared by several servers (Redis); nil: memory only.
    public var sharedCache: RedisTileCache?
    /// One line per request (Common Log Format-like); nil logs nothing.
    public var accessLog: (@Sendable (String) -> Void)?

    public init() {}
}

/// A tile as the server keeps it in memory: ready-to-send bytes and their ETag, or the
/// answer that there is none.
struct CachedTile: Sendable {
    var bytes: [UInt8]
    var etag: String
    var format: ImageFormat?
    var provenance: String
    var freshness = Freshness.unlimited
    /// What the shared cache said when this tile was looked up (nil: there is none).
    var shared: CacheStatus.Entry?
}

struct TileKey: Hashable, Sendable {
    var map: String
    var layer: String
    var tile: TileID
    var scale: Int
    var format: ImageFormat
}

/// Serves map projects over HTTP: tiles (composed and per layer), TileJSON, features as
/// GeoJSON, static images, the Leaflet viewer, health and metrics. Every route is a plain
/// function of a request, so it is tested without a socket; `start` puts it on one.
public final class TileServer: Sendable {
    public let maps: [String: ServedMap]
    public let order: [String]
    public let options: ServerOptions
    public let metrics = Metrics()
    let layerComposers: [String: [String: TileComposer]]
    let cache: MemoryCache<TileKey, CachedTile>
    let inFlight = InFlight<TileKey, CachedTile>()
    let assets: [String: ServerAssets.Asset]
    let renders: RenderPool
    /// Each map's definition hash, part of its shared-cache keys: an edited map never meets
    /// the renders of its old self.
    let definitions: [String: String]

    /// `assets`: Leaflet and the hero icon, prepared beforehand (`ServerAssets.prepare`);
    /// without them only the viewer's own script and style are served.
    public init(maps: [ServedMap], options: ServerOptions = ServerOptions(), assets: ServerAssets = ServerAssets()) throws(ProjectProblems) {
        var byName = [String: ServedMap]()
        var problems = [ProjectProblem]()
        for map in maps {
            if byName[map.project.name] != nil {
                problems.append(ProjectProblem(file: map.project.folder.path, place: "name", reason: "two maps are named \"\(map.project.name)\""))
            }
            byName[map.project.name] = map
        }
        guard problems.isEmpty else { throw ProjectProblems(problems: problems) }
        self.maps = byName
        order = maps.map(\.project.name)
        self.options = options
        cache = MemoryCache(capacity: options.cacheBytes)
        renders = RenderPool(capacity: options.maxConcurrentStaticRenders)
        definitions = Dictionary(uniqueKeysWithValues: maps.map { ($0.project.name, MapDefinition.hash($0.project)) })
        // One layer alone, at full opacity: the viewer applies opacity itself.
        var composers = [String: [String: TileComposer]]()
        for map in maps {
            var perLayer = [String: TileComposer]()
            for served in map.layers {
                var layerOptions = served.layer.options
                layerOptions.opacity = 1
                layerOptions.replacesBase = false
                perLayer[served.spec.id] = TileComposer(layers: [TileLayer(name: served.spec.id, source: served.layer.source, options: layerOptions)])
            }
            composers[map.project.name] = perLayer
        }
        layerComposers = composers
        var assets = assets.files
        assets["viewer.js"] = ServerAssets.Asset(bytes: Array(Viewer.script.utf8), type: "application/javascript")
        assets["viewer.css"] = ServerAssets.Asset(bytes: Array(Viewer.style.utf8), type: "text/css")
        self.assets = assets
    }

    // MARK: - Answering

    /// Answers without leaving the calling thread when it can: a tile in memory (or a 304),
    /// or one a local file holds as it is to be sent (read here as nginx reads files: a task
    /// and a suspended connection would cost more than the read).
    public func fast(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.method == "GET" || request.method == "HEAD" else { return nil }
        let started = ContinuousClock.now
        let route = try? Route.parse(request.path)
        // Load balancers ask this while everything else is busy: never a task, never a queue.
        if case .health? = route { return finish(request, route: "health", started: started, .text(200, "ok"), cors: "*") }
        guard case .tile(let map, let layer, let tile, let scale, let format)? = route, let served = maps[map] else { return nil }
        let key = TileKey(map: map, layer: layer ?? "", tile: tile, scale: scale, format: format)
        let answer: HTTPResponse
        // A miss is counted by whichever path answers it: here, or `tileAnswer`.
        if let cached = cache.get(key, counting: .hitsOnly) {
            answer = tileResponse(cached, served: served, layer: layer, request: request, fromMemory: true)
        } else {
            // With a shared cache, tiles are looked up there first (the async path).
            guard options.sharedCache == nil, case .found(_, let composer) = tileTarget(map: map, layer: layer, tile: tile),
                  let data = composer.storedNow(TileRequest(tile, scale: scale), format: format) else { return nil }
            cache.countMiss(key)
            answer = tileResponse(remember(key, data, bytes: data.bytes), served: served, layer: layer, request: request, fromMemory: false)
        }
        return finish(request, route: layer == nil ? "tile" : "layer_tile", started: started, answer, cors: served.project.cors)
    }

    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let started = ContinuousClock.now
        let route: Route
        do {
            route = try Route.parse(request.path)
        } catch {
            return finish(request, route: "invalid", started: started, .text(error.status, error.message), cors: "*")
        }
        let name = Self.name(of: route)
        let cors = corsOrigin(route)
        let allowed = name == "static" ? ["GET", "HEAD", "POST", "OPTIONS"] : ["GET", "HEAD", "OPTIONS"]
        guard allowed.contains(request.method) else {
            return finish(request, route: name, started: started,
                          .text(405, "method \(request.method) is not allowed here", headers: [("Allow", allowed.joined(separator: ", "))]), cors: cors)
        }
        if request.method == "OPTIONS" {  // a CORS preflight
            return finish(request, route: name, started: started, HTTPResponse(status: 204, headers: [
                ("Allow", allowed.joined(separator: ", ")), ("Access-Control-Allow-Methods", allowed.joined(separator: ", ")),
                ("Access-Control-Allow-Headers", "Content-Type, If-None-Match"), ("Access-Control-Max-Age", "86400")]), cors: cors)
        }
        let response: HTTPResponse
        switch route {
        case .index: response = index(request)
        case .health: response = .text(200, "ok")
        case .ready: response = await readiness()
        case .metrics:
            response = HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                    body: Array((metrics.text(cache: cache.statistics) + upstreamMetrics() + (options.sharedCache?.counters.prometheusText ?? "")).utf8))
        case .asset(let name):
            if let asset = assets[name] {
                response = cacheable(request, HTTPResponse(status: 200, headers: [("Content-Type", asset.type), ("Cache-Control", "public, max-age=3600")], body: asset.bytes))
            } else {
                response = .text(404, "asset \(name) is not installed (Debian libjs-leaflet provides Leaflet)")
            }
        case .viewerRedirect(let map):
            response = maps[map] == nil ? .text(404, "no map \"\(map)\"") : HTTPResponse(status: 301, headers: [("Location", "/maps/\(map)/")])
        case .viewer(let map):
            if let served = maps[map] {
                response = HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")],
                                        body: Array(Viewer.page(for: served, tileJSONURL: "/maps/\(map).json").utf8))
            } else {
                response = .text(404, "no map \"\(map)\"")
            }
        case .tileJSON(let map, let layer):
            response = tileJSON(request, map: map, layer: layer)
        case .tile(let map, let layer, let tile, let scale, let format):
            response = await tileAnswer(request, map: map, layer: layer, tile: tile, scale: scale, format: format)
        case .features(let map, let layer):
            response = features(request, map: map, layer: layer)
        case .staticImage(let map, let spec):
            response = await staticImage(request, map: map, spec: spec)
        case .play(let map):
            response = play(request, map: map)
        case .warps(let map, let station):
            response = warps(request, map: map, station: station)
        }
        return finish(request, route: name, started: started, response, cors: cors)
    }

    static func name(of route: Route) -> String {
        switch route {
        case .index: return "index"
        case .health: return "health"
        case .ready: return "ready"
        case .metrics: return "metrics"
        case .asset: return "asset"
        case .viewer, .viewerRedirect: return "viewer"
        case .tileJSON: return "tilejson"
        case .tile(_, let layer, _, _, _): return layer == nil ? "tile" : "layer_tile"
        case .features: return "features"
        case .staticImage: return "static"
        case .play: return "play"
        case .warps: return "warps"
        }
    }

    /// CORS, metrics and the access log, for every answer.
    func finish(_ request: HTTPRequest, route: String, started: ContinuousClock.Instant, _ response: HTTPResponse,
                cors: String?) -> HTTPResponse {
        var response = response
        if let origin = cors {
            response.headers.append(("Access-Control-Allow-Origin", origin))
            // A page's script reads only CORS-safelisted headers unless told: a static image's
            // geometry and missing-tile count are for scripts. Only static images carry them, so
            // tiles (the hot path) skip the scan.
            if route == "static" {
                let exposed = response.headers.map(\.0).filter { $0.hasPrefix("X-Snapshot-") }
                if !exposed.isEmpty { response.headers.append(("Access-Control-Expose-Headers", exposed.joined(separator: ", "))) }
            }
        }
        let seconds = (ContinuousClock.now - started).seconds
        metrics.record(route: route, status: response.status, seconds: seconds)
        if let log = options.accessLog {
            log("\(request.method) \(request.path) \(response.status) \(response.body.count) \(String(format: "%.1f", seconds * 1000))ms")
        }
        return response
    }

    /// `Access-Control-Allow-Origin` for a route: the map it names decides; paths outside
    /// maps allow any origin.
    func corsOrigin(_ route: Route) -> String? {
        switch route {
        case .tile(let m, _, _, _, _), .tileJSON(let m, _), .features(let m, _), .staticImage(let m, _), .viewer(let m), .play(let m), .warps(let m, _):
            return maps[m]?.project.cors
        default:
            return "*"
        }
    }

    // MARK: - Pages

    func index(_ request: HTTPRequest) -> HTTPResponse {
        if request.headers["accept"]?.contains("application/json") == true {
            let list = order.compactMap { name in
                maps[name].map { MapIndex.Entry(name: name, title: $0.project.title, viewer: "/maps/\(name)/", tilejson: "/maps/\(name).json") }
            }
            return json(request, encoding: MapIndex(maps: list), maxAgeSeconds: 0)
        }
        var html = "<!doctype html><meta charset=utf-8><title>TileKit maps</title><h1>Maps</h1><ul>"
        // The snippets name this server as the client reached it.
        let origin = "http://" + (request.headers["host"] ?? "127.0.0.1:8080")
        for name in order {
            let map = maps[name]!
            html += "<li><a href=\"/maps/\(name)/\">\(Viewer.escape(map.project.title))</a> · <a href=\"/maps/\(name).json\">TileJSON</a>"
                + AppSnippets(map: map, origin: origin).html + "</li>"
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array((html + "</ul>\n").utf8))
    }

    /// `value` as compact JSON with sorted keys and unescaped slashes (TileMath's `sortedJSON`).
    func json(_ request: HTTPRequest, encoding value: some Encodable, maxAgeSeconds maxAge: Int) -> HTTPResponse {
        let data = (try? value.sortedJSON(.withoutEscapingSlashes)) ?? Data("{}".utf8)
        return compressed(request, cacheable(request, HTTPResponse(status: 200, headers: [
            ("Content-Type", "application/json"), ("Cache-Control", "public, max-age=\(maxAge)")], body: Array(data))))
    }

    func tileJSON(_ request: HTTPRequest, map name: String, layer layerID: String?) -> HTTPResponse {
        guard let map = maps[name] else { return .text(404, "no map \"\(name)\"") }
        let host = request.headers["host"].map { "http://\($0)" } ?? ""
        let served: ServedLayer?
        if let layerID {
            guard let layer = map.layer(layerID) else { return .text(404, "map \"\(name)\" has no layer \"\(layerID)\"") }
            served = layer
        } else {
            served = nil
        }
        return json(request, encoding: TileJSON(map: map, layer: served, baseURL: host), maxAgeSeconds: 60)
    }

    func features(_ request: HTTPRequest, map name: String, layer layerID: String) -> HTTPResponse {
        guard let map = maps[name] else { return .text(404, "no map \"\(name)\"") }
        guard let layer = map.layer(layerID), layer.spec.isFeatureLayer else { return .text(404, "map \"\(name)\" has no feature layer \"\(layerID)\"") }
        return compressed(request, cacheable(request, HTTPResponse(status: 200, headers: [
            ("Content-Type", "application/geo+json"), ("Cache-Control", "public, max-age=\(layer.spec.maxAgeSeconds)")],
            body: Array(GeoJSON.encode(layer.features)))))
    }

    // MARK: - Tiles

    /// The map and composer a tile request is for, or the answer that refuses it.
    enum TileTarget {
        case found(ServedMap, TileComposer)
        case refused(HTTPResponse)
    }

    func tileTarget(map name: String, layer layerID: String?, tile: TileID) -> TileTarget {
        guard let map = maps[name] else { return .refused(.text(404, "no map \"\(name)\"")) }
        let composer: TileComposer
        if let layerID {
            guard let c = layerComposers[name]?[layerID] else { return .refused(.text(404, "map \"\(name)\" has no layer \"\(layerID)\"")) }
            composer = c
        } else {
            composer = map.composer
        }
        let project = map.project
        guard (project.minZoom...project.maxZoom).contains(tile.z) else {
            return .refused(.text(404, "zoom \(tile.z) is outside this map's zooms \(project.minZoom)-\(project.maxZoom)"))
        }
        if let bounds = map.bounds, !bounds.overlaps(tile.bounds) {
            return .refused(missing(map, "tile \(tile.z)/\(tile.x)/\(tile.y) is outside the map's bounds"))
        }
        return .found(map, composer)
    }

    /// A made (or read) tile as the memory cache keeps it, kept there when its freshness allows.
    func remember(_ key: TileKey, _ data: TileData, bytes: [UInt8]) -> CachedTile {
        let entry = CachedTile(bytes: bytes, etag: EntityTag.of(bytes), format: key.format, provenance: Self.provenance(data.provenance),
                               freshness: data.freshness)
        if data.freshness.isReusable { cache.set(key, entry, cost: bytes.count + 128, expiresAt: data.freshness.memoryExpiry) }
        return entry
    }

    func tileAnswer(_ request: HTTPRequest, map name: String, layer layerID: String?, tile: TileID, scale: Int, format: ImageFormat) async -> HTTPResponse {
        let map: ServedMap, composer: TileComposer
        switch tileTarget(map: name, layer: layerID, tile: tile) {
        case .refused(let answer): return answer
        case .found(let m, let c): (map, composer) = (m, c)
        }
        let key = TileKey(map: name, layer: layerID ?? "", tile: tile, scale: scale, format: format)
        if let cached = cache.get(key) { return tileResponse(cached, served: map, layer: layerID, request: request, fromMemory: true) }
        do {
            let cached = try await inFlight.run(key) { [self] in
                let shared = sharedKey(key)
                var lookup: SharedCacheLookup?
                if let shared, let sharedCache = options.sharedCache {
                    let found = await sharedCache.lookup(key: shared)
                    if case .hit(let bytes) = found { return remember(key, sharedHit: bytes) }
                    lookup = found
                }
                let result = try await composer.tile(TileRequest(tile, scale: scale), encoding: .defaults(for: format))
                var entry: CachedTile
                switch result {
                case .tile(let data):
                    let bytes = data.format == format ? data.bytes : try RGBAImage(decoding: data.bytes, limits: .tile).encoded(.defaults(for: format))
                    entry = remember(key, data, bytes: bytes)
                case .noTile:
                    entry = CachedTile(bytes: [], etag: "", format: nil, provenance: "none")
                    cache.set(key, entry, cost: 128)
                case .unavailable(let retryAfter):
                    throw Unavailable(retryAfter: retryAfter)
                }
                if let shared, let lookup { entry.shared = share(entry, key: shared, lookup: lookup, maxAgeSeconds: map.maxAgeSeconds(layer: layerID)) }
                return entry
            }
            return tileResponse(cached, served: map, layer: layerID, request: request, fromMemory: false)
        } catch let error as Unavailable {
            metrics.upstreamError()
            let seconds = error.retryAfter.map { max(1, Int($0.components.seconds)) } ?? 30
            return .text(503, "tile \(tile.z)/\(tile.x)/\(tile.y) is unavailable upstream; try again later", headers: [("Retry-After", "\(seconds)")])
        } catch let error as TileSourceError {
            // The map's own store is damaged or unreadable: the server's fault, not an
            // upstream's; the path stays in the log, out of the answer.
            options.accessLog?("error: tile \(tile.z)/\(tile.x)/\(tile.y) of \(name): \(error)")
            return .text(500, "tile \(tile.z)/\(tile.x)/\(tile.y): \(error.reasonWithoutPath)")
        } catch {
            metrics.upstreamError()
            return .text(502, "tile \(tile.z)/\(tile.x)/\(tile.y): \(error)")
        }
    }

    struct Unavailable: Error { let retryAfter: Duration? }

    static func provenance(_ p: TileData.Provenance) -> String {
        switch p {
        case .native: return "native"
        case .overzoomed(let from): return "overzoomed from \(from.z)/\(from.x)/\(from.y)"
        case .underzoomed(let from): return "underzoomed from zoom \(from)"
        case .fallback: return "fallback"
        case .composed: return "composed"
        case .stale: return "stale"
        }
    }

    func missing(_ map: ServedMap, _ message: String) -> HTTPResponse {
        map.project.missingTileStatus == 204 ? HTTPResponse(status: 204) : .text(404, message)
    }

    func tileResponse(_ cached: CachedTile, served: ServedMap, layer: String?, request: HTTPRequest, fromMemory: Bool) -> HTTPResponse {
        let status = cacheStatus(cached, fromMemory: fromMemory)
        guard let format = cached.format else {
            var response = missing(served, "no tile here")
            response.headers.append(("Cache-Status", status))
            return response
        }
        let age = served.maxAgeSeconds(layer: layer)
        var headers = [("Content-Type", format.mimeType), ("ETag", cached.etag), ("Cache-Control", cached.freshness.cacheControl(maxAgeSeconds: age)),
                       ("X-Tile-Provenance", cached.provenance), ("Cache-Status", status)]
        if Self.matches(request.headers["if-none-match"], cached.etag) {
            headers.removeFirst()
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: headers, body: cached.bytes)
    }

    // MARK: - HTTP helpers

    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch, !etag.isEmpty else { return false }
        return ifNoneMatch.split(separator: ",").contains { candidate in
            var c = candidate.trimmingCharacters(in: .whitespaces)
            if c == "*" { return true }
            if c.hasPrefix("W/") { c.removeFirst(2) }
            return c == etag
        }
    }

    /// Adds an ETag, and answers 304 when the client has it.
    func cacheable(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
        let etag = EntityTag.of(response.body)
        var response = response
        response.headers.append(("ETag", etag))
        if Self.matches(request.headers["if-none-match"], etag) {
            return HTTPResponse(status: 304, headers: response.headers.filter { $0.0 != "Content-Type" })
        }
        return response
    }

    /// gzip for text bodies when the client takes it.
    func compressed(_ request: HTTPRequest, _ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.append(("Vary", "Accept-Encoding"))
        guard response.status == 200, response.body.count > 256,
              request.headers["accept-encoding"]?.lowercased().contains("gzip") == true else { return response }
        response.body = Gzip.compress(response.body)
        response.headers.append(("Content-Encoding", "gzip"))
        return response
    }
}

/// The JSON of `/` when the client accepts `application/json`: every map, in serving order.
struct MapIndex: Encodable {
    struct Entry: Encodable {
        var name: String
        var title: String
        var viewer: String
        var tilejson: String
    }

    var maps: [Entry]
}
