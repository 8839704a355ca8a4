import Foundation
import Canvas
import TileMath
import TileSources
import Features
import Rendering
import MapProjects

extension TileServer {
    /// `/maps/{map}/static/{region}/{w}x{h}[@2x].{ext}`: the composed map with `markers=`
    /// (`lon,lat[,color][,symbol]` separated by `|`), `path=` (`enc:...[,width][,color]`) and
    /// `padding=`; or POST a GeoJSON body for more than a URL holds. The image's geometry is
    /// in the `X-Snapshot-Geometry` header (without markers), and whole at the `.json` twin
    /// (with every label drawn, the map's and the markers', text and box). Base tiles that
    /// could not be had now (an upstream down or stalled) leave gaps: such an image says how
    /// many in `X-Snapshot-Unavailable-Tiles` and is sent `no-store`.
    func staticImage(_ request: HTTPRequest, map name: String, spec: Route.StaticRequest) async -> HTTPResponse {
        guard let map = maps[name] else { return .text(404, "no map \"\(name)\"") }
        let limit = options.maxStaticSide
        guard (1...limit).contains(spec.width), (1...limit).contains(spec.height) else {
            return .text(400, "size \(spec.width)x\(spec.height) is out of range: each side 1-\(limit) pixels")
        }
        var features = [Feature]()
        do {
            if let text = request.query["markers"], !text.isEmpty {
                for item in text.split(separator: "|") { features.append(try QuickOverlays.marker(String(item))) }
            }
            if let text = request.query["path"], !text.isEmpty { features.append(try QuickOverlays.path(text)) }
        } catch {
            return .text(400, error.description)
        }
        if request.method == "POST", !request.body.isEmpty {
            do {
                features += try GeoJSON.parse(Data(request.body), file: "request body")
            } catch {
                return .text(400, error.description)
            }
        }
        let markerCount = features.filter { if case .point = $0.geometry { return $0.radius == nil } else { return false } }.count
        guard markerCount <= options.maxMarkers else { return .text(400, "\(markerCount) markers: at most \(options.maxMarkers)") }
        let points = features.reduce(0) { $0 + ($1.geometry?.coordinates.count ?? 0) }
        guard points <= options.maxPathPoints else { return .text(400, "\(points) points: at most \(options.maxPathPoints)") }
        let padding = Double(request.query["padding"] ?? "20") ?? -1
        guard (0...1000).contains(padding) else { return .text(400, "padding \(request.query["padding"] ?? "") is not 0-1000 pixels") }

        let region: SnapshotRegion
        switch spec.region {
        case .center(let c, let zoom): region = .center(c, zoom: zoom)
        case .box(let b): region = .box(b)
        case .auto:
            if !features.isEmpty { region = .fit(padding: padding) }
            else if let b = map.bounds { region = .box(b) }
            else { return .text(400, "auto needs markers, a path or a GeoJSON body, or a map with bounds") }
        }
        let base = map.composedLayer
        var snapshotOptions = SnapshotOptions(region: region, width: spec.width, height: spec.height, scale: spec.scale,
                                              base: spec.format == nil ? nil : base, features: features,
                                              attribution: map.project.attribution, maxZoom: Double(map.project.maxZoom))
        // The .json twin draws no tiles but reports the map's labels where the image has them.
        snapshotOptions.reportedBaseLabels = base.source as? any LabelledTileSource
        // The twin draws nothing (only labels are placed), so it does not wait for the render
        // pool: the viewer's debug grid asks for one per tile.
        snapshotOptions.drawsImage = spec.format != nil
        let renderOptions = snapshotOptions
        @Sendable func render() async throws -> (snapshot: Snapshot, bytes: [UInt8]?) {
            let snapshot = try await Snapshotter.render(renderOptions)
            try Task.checkCancellation()
            do {
                return (snapshot, try spec.format.map { try snapshot.image.encoded(.defaults(for: $0)) })
            } catch {
                throw EncodingFailure(error: error)
            }
        }
        // Drawn and encoded on the render pool, under its budget; a client that leaves
        // cancels the work (checked before the costly encoding).
        let rendered: (snapshot: Snapshot, bytes: [UInt8]?)?
        do {
            rendered = spec.format == nil ? try await render() : try await renders.run { try await render() }
        } catch let error as SnapshotError {
            return .text(400, error.description)
        } catch is CancellationError {
            return .text(503, "static image: cancelled", headers: [("Retry-After", "2")])
        } catch let failure as EncodingFailure {
            return .text(500, "static image: \(failure.error)")
        } catch {
            metrics.upstreamError()
            return .text(502, "static image: \(error)")
        }
        guard let (snapshot, bytes) = rendered else {
            metrics.renderRefused()
            return .text(503, "\(renders.capacity) static images are being rendered; try again shortly", headers: [("Retry-After", "2")])
        }
        guard let format = spec.format, let bytes else {
            return compressed(request, cacheable(request, HTTPResponse(status: 200, headers: [("Content-Type", "application/json"),
                                                                                            ("Cache-Control", "public, max-age=60")], body: Array(snapshot.geometryJSON))))
        }
        let header = String(decoding: snapshot.geometryJSON(markers: false), as: UTF8.self)
        let headers = [("Content-Type", format.mimeType), ("X-Snapshot-Geometry", header)]
        if snapshot.unavailableTiles > 0 {
            // Drawn with what could be had, as `tilekit snapshot` writes it (and exits 75): the
            // gaps are said, and nothing may keep the image, so the next request draws it again.
            return HTTPResponse(status: 200, headers: headers + [("Cache-Control", "no-store"),
                                                                 ("X-Snapshot-Unavailable-Tiles", "\(snapshot.unavailableTiles) of \(snapshot.baseTileCount)")],
                                body: bytes)
        }
        return cacheable(request, HTTPResponse(status: 200, headers: headers + [("Cache-Control", "public, max-age=60")], body: bytes))
    }
}

/// An image that was drawn but could not be encoded (500, not the upstream's fault).
struct EncodingFailure: Error { let error: any Error }
