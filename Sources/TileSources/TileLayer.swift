import Foundation
public import Canvas
public import TileMath

/// What a layer shows where its source has no tile.
public enum Fallback: Hashable, Sendable {
    /// Nothing: the tile is absent (`noTile`).
    case none
    /// A transparent tile.
    case transparent
    case color(Color)
    /// An image (a hand-drawn parchment), stretched to the tile.
    case image(RGBAImage)
}

/// How a source is shown: zooms, bounds, overzoom, fallback, opacity and stacking.
/// Options left nil take the source's own metadata.
public struct LayerOptions: Hashable, Sendable {
    /// Zooms at which the layer shows anything, both included (MapKit's camera zoom range).
    public var minZoom: Int = 0
    public var maxZoom: Int = 22
    /// Zooms the source really has; outside them tiles are made from ancestors or children.
    public var nativeMinZoom: Int?
    public var nativeMaxZoom: Int?
    /// Where the layer has tiles. No tile outside is ever requested from the source.
    public var bounds: BoundingBox?
    /// How many zooms above the native maximum are scaled up from an ancestor.
    public var maxOverzoom: Int = 8
    /// How many zooms below the native minimum are built from descendants (4^n tiles each).
    public var maxUnderzoom: Int = 2
    public var fallback: Fallback = .none
    /// In [0, 1].
    public var opacity: Double = 1
    /// Stacking order: higher draws on top; equal keeps the order given.
    public var zIndex: Int = 0
    /// A base layer that replaces everything below it (MapKit's `canReplaceMapContent`).
    public var replacesBase: Bool = false
    /// Pixel size of the layer's tiles at scale 1; nil for the source's.
    public var tileSize: Int?

    public init() {}
}

/// A tile source seen through its options: answers with pixels ready to compose.
public struct TileLayer: Sendable {
    public let name: String
    public let source: any TileSource
    public let options: LayerOptions
    /// The source when it reads tiles on the calling thread (`storedNow`), cast once: the
    /// dynamic cast cost 0.8% of a server's CPU when made on every request.
    private let local: (any LocalTileSource)?

    public init(name: String? = nil, source: any TileSource, options: LayerOptions = LayerOptions()) {
        self.name = name ?? source.metadata.name
        self.source = source
        self.options = options
        local = source as? any LocalTileSource
    }

    public var tileSize: Int { options.tileSize ?? source.metadata.tileSize }
    public var nativeMinZoom: Int { options.nativeMinZoom ?? source.metadata.minZoom }
    public var nativeMaxZoom: Int { options.nativeMaxZoom ?? source.metadata.maxZoom }
    public var bounds: BoundingBox? { options.bounds ?? source.metadata.bounds }

    /// A layer's answer: pixels (with the source bytes when they can be passed on untouched),
    /// or an absence.
    public enum Result: Sendable {
        case image(RGBAImage, passthrough: TileData?, provenance: TileData.Provenance)
        /// The source's own bytes, not decoded: `render(_:passingThrough:)`'s answer for a
        /// native tile whose header declares the layer's size in the format asked for.
        case encoded(TileData)
        case noTile
        case unavailable(retryAfter: Duration?)
    }

    /// True when the layer could have anything for the tile: within its zooms and its bounds.
    /// Tiles that only touch the bounds along an edge are outside.
    public func covers(_ tile: TileID) -> Bool {
        guard coversZoomOnly(tile) else { return false }
        return bounds?.overlaps(tile.bounds) ?? true
    }

    /// The tile's pixels. With `passingThrough`, a native tile already in that format and of
    /// the layer's size (as its header declares) comes back `encoded`, without being decoded:
    /// what a server that sends the bytes on needs, at a fraction of the cost.
    public func render(_ request: TileRequest, passingThrough format: ImageFormat? = nil) async throws -> Result {
        let tile = request.tile
        guard covers(tile) else { return fallbackOrNothing(request, covered: false) }
        let size = tileSize * request.scale
        let result: Result
        // Native zooms come from a store's metadata or options: both checked when read, yet a
        // layer made in code could hold anything, so each branch checks its ancestor or
        // descendants exist instead of assuming it.
        if tile.z > nativeMaxZoom {
            guard tile.z - nativeMaxZoom <= options.maxOverzoom, let ancestor = tile.ancestor(atZoom: nativeMaxZoom) else {
                return fallbackOrNothing(request, covered: true)
            }
            result = try await overzoom(request, from: ancestor, size: size)
        } else if tile.z < nativeMinZoom {
            guard nativeMinZoom - tile.z <= options.maxUnderzoom, let range = tile.descendants(atZoom: nativeMinZoom) else {
                return fallbackOrNothing(request, covered: true)
            }
            result = try await underzoom(request, from: range, size: size)
        } else {
            result = try await native(request, size: size, passingThrough: format)
        }
        if case .noTile = result { return fallbackOrNothing(request, covered: true) }
        return result
    }

    /// A native tile a local source has stored in `format` at the layer's size, read on the
    /// calling thread: what `render(_:passingThrough:)` would answer `encoded`. Nil for
    /// anything else (another source, zoom or format, an absent tile, an error), which
    /// `render` answers.
    public func storedNow(_ request: TileRequest, format: ImageFormat) -> TileData? {
        guard let local, covers(request.tile),
              request.tile.z <= nativeMaxZoom, request.tile.z >= nativeMinZoom,
              case .tile(let data)? = local.tileNow(request),
              passesThrough(data, format: format, size: tileSize * request.scale) else { return nil }
        return data
    }

    /// True when `data` is already `format` at `size` x `size`, as its header declares.
    private func passesThrough(_ data: TileData, format: ImageFormat, size: Int) -> Bool {
        guard data.format == format, let header = try? ImageHeader(sniffing: data.bytes) else { return false }
        return header.format == format && header.width == size && header.height == size
    }

    private func native(_ request: TileRequest, size: Int, passingThrough format: ImageFormat?) async throws -> Result {
        switch try await source.tile(request) {
        case .noTile: return .noTile
        case .unavailable(let retryAfter): return .unavailable(retryAfter: retryAfter)
        case .tile(let data):
            if let format, passesThrough(data, format: format, size: size) { return .encoded(data) }
            let image = try data.image(limits: .tile)
            if image.width == size, image.height == size {
                return .image(image, passthrough: data, provenance: data.provenance)
            }
            return .image(try Self.resample(image, to: size), passthrough: nil, provenance: data.provenance)
        }
    }

    /// Scales up the matching part of the ancestor at the native maximum zoom.
    private func overzoom(_ request: TileRequest, from ancestor: TileID, size: Int) async throws -> Result {
        let tile = request.tile
        switch try await source.tile(TileRequest(ancestor, scale: request.scale)) {
        case .noTile: return .noTile
        case .unavailable(let retryAfter): return .unavailable(retryAfter: retryAfter)
        case .tile(let data):
            let image = try data.image(limits: .tile)
            let parts = Double(1 << (tile.z - ancestor.z))
            let partSize = Double(image.width) / parts
            let column = Double(tile.x - (ancestor.x << (tile.z - ancestor.z)))
            let row = Double(tile.y - (ancestor.y << (tile.z - ancestor.z)))
            let canvas = try Canvas(width: size, height: size)
            let scale = Double(size) / partSize
            canvas.draw(image, transform: AffineTransform.translation(x: -column * partSize, y: -row * partSize)
                .concatenating(.scale(x: scale, y: scale)), interpolation: .bilinear)
            return .image(canvas.makeImage(), passthrough: nil, provenance: .overzoomed(from: ancestor))
        }
    }

    /// Descendants fetched at once at most for one underzoomed tile: all 16 at the default
    /// `maxUnderzoom` of 2, a bounded few of the 4^n of a larger one.
    static let maxChildFetches = 16

    /// Scales down the descendants at the native minimum zoom into one tile (the first
    /// unavailable one, in row order, gives the retry time).
    private func underzoom(_ request: TileRequest, from range: TileRange, size: Int) async throws -> Result {
        let sourceRef = source
        let results = try await range.filter(covers).concurrentMap(maxInFlight: Self.maxChildFetches) { child in
            (child, try await sourceRef.tile(TileRequest(child, scale: request.scale)))
        }
        if let retry = results.compactMap({ item -> Duration?? in
            if case .unavailable(let r) = item.1 { return .some(r) }
            return nil
        }).first {
            return .unavailable(retryAfter: retry)
        }
        let canvas = try Canvas(width: size, height: size)
        let cell = Double(size) / Double(range.width)
        var drew = false
        for (child, result) in results {
            guard case .tile(let data) = result else { continue }
            let image = try data.image(limits: .tile)
            canvas.draw(image, x: Double(child.x - range.minX) * cell, y: Double(child.y - range.minY) * cell,
                        width: cell, height: cell, interpolation: .best)
            drew = true
        }
        guard drew else { return .noTile }
        return .image(canvas.makeImage(), passthrough: nil, provenance: .underzoomed(from: nativeMinZoom))
    }

    /// Inside the layer's reach, the fallback stands in for a missing tile; outside it
    /// (beyond the bounds or zooms) a layer shows nothing.
    private func fallbackOrNothing(_ request: TileRequest, covered: Bool) -> Result {
        let size = tileSize * request.scale
        guard covered || coversZoomOnly(request.tile) else { return .noTile }
        switch options.fallback {
        case .none: return .noTile
        case .transparent: return .image(RGBAImage(width: size, height: size), passthrough: nil, provenance: .fallback)
        case .color(let color): return .image(RGBAImage(width: size, height: size, color: color), passthrough: nil, provenance: .fallback)
        case .image(let image):
            let scaled = (try? Self.resample(image, to: size)) ?? RGBAImage(width: size, height: size)
            return .image(scaled, passthrough: nil, provenance: .fallback)
        }
    }

    /// The parchment fallback covers the whole world at the layer's zooms: a custom map
    /// is parchment wherever nobody drew.
    private func coversZoomOnly(_ tile: TileID) -> Bool {
        // Not a ClosedRange: options made in code may have minZoom above maxZoom.
        options.minZoom <= tile.z && tile.z <= options.maxZoom
    }

    /// The image scaled to `size` x `size` (unchanged when it already is).
    public static func resample(_ image: RGBAImage, to size: Int) throws -> RGBAImage {
        if image.width == size && image.height == size { return image }
        let canvas = try Canvas(width: size, height: size)
        canvas.draw(image, x: 0, y: 0, width: Double(size), height: Double(size),
                    interpolation: size < image.width ? .best : .bilinear)
        return canvas.makeImage()
    }
}
