import Foundation
import Synchronization
public import Canvas
import TileMath

/// A stack of layers drawn into one tile, lowest `zIndex` first.
///
/// A layer that `replacesBase` hides every layer below it, and those are not even asked.
/// When any asked layer is `unavailable` the whole tile is (a partial map must not be
/// cached as if complete); when none has anything the tile is `noTile`. A lone native
/// tile at full opacity in the wanted format is passed on without re-encoding.
public struct TileComposer: Sendable {
    public let layers: [TileLayer]

    public init(layers: [TileLayer]) {
        // A stable sort: equal z-indexes keep the order given.
        let ordered = layers.enumerated().sorted { a, b in
            (a.element.options.zIndex, a.offset) < (b.element.options.zIndex, b.offset)
        }.map(\.element)
        // Drop everything below the topmost layer that replaces the base map.
        if let base = ordered.lastIndex(where: { $0.options.replacesBase }) {
            self.layers = Array(ordered[base...])
        } else {
            self.layers = ordered
        }
    }

    /// The tile's freshness is that of its parts together (`Freshness.combined`): the
    /// earliest expiry of any source tile asked, no-store if any part was no-store.
    public func tile(_ request: TileRequest, encoding: EncodingOptions = .png()) async throws -> TileResult {
        // Every source tile a layer asks for (its own, an ancestor, descendants) passes the
        // recorder, so the freshness survives resampling, overzoom and composition.
        let recorder = FreshnessRecorder()
        let layers = self.layers.map { TileLayer(name: $0.name, source: FreshnessRecordingSource(source: $0.source, recorder: recorder), options: $0.options) }
        // A lone layer at full opacity may hand its tile's bytes on without decoding them.
        let passingThrough = layers.count == 1 && layers[0].options.opacity >= 1 ? encoding.format : nil
        let results = try await withThrowingTaskGroup(of: (Int, TileLayer.Result).self) { group in
            for (index, layer) in layers.enumerated() {
                group.addTask { (index, try await layer.render(request, passingThrough: passingThrough)) }
            }
            var ordered = [TileLayer.Result?](repeating: nil, count: layers.count)
            for try await (index, result) in group { ordered[index] = result }
            return ordered.map { $0! }
        }
        var retryAfter: Duration?? = nil
        var images = [(RGBAImage, TileData?, TileData.Provenance, Double)]()
        for (layer, result) in zip(layers, results) {
            switch result {
            case .unavailable(let r):
                retryAfter = .some(Self.earliest(retryAfter ?? nil, r))
            case .noTile:
                continue
            case .image(let image, let passthrough, let provenance):
                if layer.options.opacity > 0 { images.append((image, passthrough, provenance, layer.options.opacity)) }
            case .encoded(var data):  // only asked of a lone layer
                data.freshness = recorder.freshness
                return .tile(data)
            }
        }
        if let retryAfter { return .unavailable(retryAfter: retryAfter) }
        guard !images.isEmpty else { return .noTile }
        let freshness = recorder.freshness
        if images.count == 1, images[0].3 >= 1, var data = images[0].1, data.format == encoding.format {
            data.freshness = freshness
            return .tile(data)
        }
        let size = images.map(\.0.width).max()!
        let canvas = try Canvas(width: size, height: size)
        for (image, _, _, opacity) in images {
            canvas.draw(image, x: 0, y: 0, width: Double(size), height: Double(size), opacity: opacity)
        }
        let provenance: TileData.Provenance = images.count == 1 ? images[0].2 : .composed
        return .tile(TileData(bytes: try canvas.encoded(encoding), format: encoding.format, provenance: provenance, freshness: freshness))
    }

    /// A lone layer's stored tile passed on as it is, read on the calling thread when its
    /// source is local (`TileLayer.storedNow`); nil when `tile(_:encoding:)` must make it.
    public func storedNow(_ request: TileRequest, format: ImageFormat) -> TileData? {
        guard layers.count == 1, layers[0].options.opacity >= 1 else { return nil }
        return layers[0].storedNow(request, format: format)
    }

    static func earliest(_ a: Duration?, _ b: Duration?) -> Duration? {
        switch (a, b) {
        case (nil, let x), (let x, nil): return x
        case (let x?, let y?): return min(x, y)
        }
    }
}

/// The combined freshness of the source tiles of one composed tile.
final class FreshnessRecorder: Sendable {
    private let combined = Mutex(Freshness.unlimited)

    var freshness: Freshness { combined.withLock { $0 } }

    func record(_ freshness: Freshness) {
        combined.withLock { $0 = $0.combined(with: freshness) }
    }
}

/// A source seen through a recorder: passes every request on and notes each tile's freshness.
private struct FreshnessRecordingSource: TileSource {
    let source: any TileSource
    let recorder: FreshnessRecorder

    var metadata: TileSetMetadata { source.metadata }

    func tile(_ request: TileRequest) async throws -> TileResult {
        let result = try await source.tile(request)
        if case .tile(let data) = result { recorder.record(data.freshness) }
        return result
    }
}
