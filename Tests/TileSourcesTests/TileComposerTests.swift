import Foundation
import Testing
import Canvas
import TileMath
@testable import TileSources

@Suite struct TileComposerTests {
    let tile = TileRequest(TileID(z: 12, x: 1205, y: 1539))

    func layer(_ source: any TileSource, zIndex: Int = 0, opacity: Double = 1, replacesBase: Bool = false) -> TileLayer {
        var options = LayerOptions()
        options.zIndex = zIndex
        options.opacity = opacity
        options.replacesBase = replacesBase
        return TileLayer(source: source, options: options)
    }

    @Test func overlaysBlendInZIndexOrder() async throws {
        let base = RecordingSource.solid(Color(red: 1, green: 0, blue: 0), name: "base")
        let overlay = RecordingSource.solid(Color(red: 0, green: 0, blue: 1), name: "overlay")
        // Given top-first, but z-index puts the red base below.
        let composer = TileComposer(layers: [layer(overlay, zIndex: 2, opacity: 0.5), layer(base, zIndex: 1)])
        let result = try await composer.tile(tile)
        #expect(result.data?.provenance == .composed)
        let image = try #require(result.image)
        #expect(near(image[100, 100], Pixel(red: 127, green: 0, blue: 128), 2))
    }

    @Test func aReplacingBaseHidesWhatIsBelowWithoutAskingIt() async throws {
        let hidden = RecordingSource.solid(Color(red: 1, green: 0, blue: 0), name: "hidden")
        let custom = RecordingSource.solid(Color(hex: "#f4e8c8")!, name: "custom")
        let composer = TileComposer(layers: [layer(hidden, zIndex: 0), layer(custom, zIndex: 1, replacesBase: true)])
        let image = try #require(try await composer.tile(tile).image)
        #expect(near(image[5, 5], Pixel(Color(hex: "#f4e8c8")!)))
        #expect(hidden.requests.isEmpty)
    }

    @Test func aLoneNativeTileIsPassedOnUntouched() async throws {
        let source = RecordingSource.solid(Color(red: 0.2, green: 0.4, blue: 0.6))
        let result = try await TileComposer(layers: [layer(source)]).tile(tile, encoding: .png())
        let direct = try await source.tile(tile)
        #expect(result == direct)
        // Asking for another format re-encodes.
        #expect(try await TileComposer(layers: [layer(source)]).tile(tile, encoding: .webp()).data?.format == .webp)
    }

    /// Passed on without being decoded: a tile whose header is right but whose pixels are
    /// damaged goes out as it is; drawn into anything else (another format, a second layer,
    /// an opacity), it has to be decoded and fails.
    @Test func aLoneNativeTileIsNotDecodedToBePassedOn() async throws {
        var bytes = try RGBAImage(width: 256, height: 256, color: Color(red: 0.2, green: 0.4, blue: 0.6)).encoded(.png())
        let idat = try #require((0..<bytes.count - 4).first { bytes[$0..<$0 + 4].elementsEqual("IDAT".utf8) })
        for i in idat + 4..<idat + 20 { bytes[i] = 0xFF }  // the zlib stream
        let damaged = bytes
        let source = StaticSource(data: TileData(bytes: damaged, format: .png))
        let passed = try await TileComposer(layers: [layer(source)]).tile(tile, encoding: .png())
        #expect(passed.data?.bytes == damaged)
        await #expect(throws: CanvasError.self) { try await TileComposer(layers: [layer(source)]).tile(tile, encoding: .webp()) }
        await #expect(throws: CanvasError.self) { try await TileComposer(layers: [layer(source, opacity: 0.5)]).tile(tile) }
    }

    @Test func absenceModel() async throws {
        let down = RecordingSource(metadata: TileSetMetadata(name: "down"), unavailable: { _ in true }) { _ in nil }
        let empty = RecordingSource(metadata: TileSetMetadata(name: "empty")) { _ in nil }
        let solid = RecordingSource.solid(.white)
        #expect(try await TileComposer(layers: [layer(empty)]).tile(tile) == .noTile)
        #expect(try await TileComposer(layers: []).tile(tile) == .noTile)
        // One layer down makes the whole tile unavailable, with its Retry-After.
        #expect(try await TileComposer(layers: [layer(solid), layer(down, zIndex: 1)]).tile(tile) == .unavailable(retryAfter: .seconds(30)))
        // A layer at zero opacity contributes nothing.
        #expect(try await TileComposer(layers: [layer(solid, opacity: 0)]).tile(tile) == .noTile)
    }

    @Test func debugGridLabelsEachTile() async throws {
        let result = try await GeneratedTileSource.debugGrid().tile(TileRequest(TileID(z: 7, x: 37, y: 48), scale: 2))
        let image = try #require(result.image)
        #expect(image.width == 512)
        // Red ink near the centre (the label), transparent in the open areas.
        var ink = 0
        for y in 236..<276 { for x in 150..<362 where image[x, y].alpha > 200 && image[x, y].red > 150 && image[x, y].green < 80 { ink += 1 } }
        #expect(ink > 200)
        #expect(image[100, 100].alpha == 0)
    }
}

/// One tile's bytes for every request.
struct StaticSource: TileSource {
    let data: TileData
    var metadata: TileSetMetadata { TileSetMetadata(name: "static", format: data.format) }
    func tile(_ request: TileRequest) async throws -> TileResult { .tile(data) }
}
