import Foundation
import Testing
import Canvas
import TileMath
@testable import TileSources

@Suite struct TileLayerTests {
    let park = BoundingBox(west: -73.9819, south: 40.7644, east: -73.9493, north: 40.8006)

    /// No request is ever made outside the bounds or the zoom range.
    @Test func boundsAndZoomsAskNothingOutside() async throws {
        let source = RecordingSource.solid(.white, minZoom: 13, maxZoom: 16, bounds: park)
        var options = LayerOptions()
        options.minZoom = 10
        options.maxZoom = 18
        let layer = TileLayer(source: source, options: options)
        let london = TileID(containing: Coordinate(latitude: 51.5, longitude: -0.12), zoom: 15)
        guard case .noTile = try await layer.render(TileRequest(london)) else { Issue.record("London is outside the park"); return }
        let inPark = TileID(containing: Coordinate(latitude: 40.78, longitude: -73.965), zoom: 15)
        guard case .noTile = try await layer.render(TileRequest(inPark.ancestor(atZoom: 9)!)) else { Issue.record("z9 is below the range"); return }
        #expect(source.requests.isEmpty)
        // Every tile of the park at zoom 15 is asked for once; the tiles around it never.
        let ring = TileRange.covering(park, zoom: 15)[0]
        let wider = TileRange(z: 15, minX: ring.minX - 1, maxX: ring.maxX + 1, minY: ring.minY - 1, maxY: ring.maxY + 1)
        for tile in wider { _ = try await layer.render(TileRequest(tile)) }
        #expect(Set(source.requests.map(\.tile)) == Set(ring))
    }

    @Test func overzoomScalesTheMatchingPartOfTheAncestor() async throws {
        let source = RecordingSource(metadata: TileSetMetadata(name: "q", format: .png, minZoom: 0, maxZoom: 2)) { _ in quadrantTile() }
        let layer = TileLayer(source: source)
        let ancestor = TileID(z: 2, x: 1, y: 2)
        // Zoom 4 splits the ancestor into 4x4; column 3, row 0 lies in its top-right (green) quadrant.
        let tile = TileID(z: 4, x: ancestor.x * 4 + 3, y: ancestor.y * 4 + 0)
        guard case .image(let image, _, let provenance) = try await layer.render(TileRequest(tile)) else {
            Issue.record("no overzoomed tile"); return
        }
        #expect(provenance == .overzoomed(from: ancestor))
        #expect(image.width == 256 && near(image[128, 128], Pixel(red: 0, green: 255, blue: 0)))
        #expect(source.requests.map(\.tile) == [ancestor])
        // Column 1, row 1 straddles nothing: it is the top-left (red) quadrant's inner corner.
        guard case .image(let red, _, _) = try await layer.render(TileRequest(TileID(z: 4, x: ancestor.x * 4 + 1, y: ancestor.y * 4 + 1))) else {
            Issue.record("no overzoomed tile in the red quadrant"); return
        }
        #expect(near(red[10, 10], Pixel(red: 255, green: 0, blue: 0)))
        // Beyond the overzoom limit: nothing.
        var limited = LayerOptions()
        limited.maxOverzoom = 1
        guard case .noTile = try await TileLayer(source: source, options: limited).render(TileRequest(tile)) else {
            Issue.record("overzoom beyond the limit"); return
        }
    }

    @Test func underzoomBuildsFromChildren() async throws {
        let colors: [Int: Color] = [0: Color(red: 1, green: 0, blue: 0), 1: Color(red: 0, green: 1, blue: 0)]
        // Native zoom 3 only; children on the left are red, on the right green.
        let source = RecordingSource(metadata: TileSetMetadata(name: "u", format: .png, minZoom: 3, maxZoom: 3)) { tile in
            RGBAImage(width: 256, height: 256, color: colors[tile.x % 2]!)
        }
        let layer = TileLayer(source: source)
        guard case .image(let image, _, let provenance) = try await layer.render(TileRequest(TileID(z: 2, x: 1, y: 1))) else {
            Issue.record("no underzoomed tile"); return
        }
        #expect(provenance == .underzoomed(from: 3))
        #expect(Set(source.requests.map(\.tile)) == Set(TileID(z: 2, x: 1, y: 1).children))
        #expect(near(image[64, 64], Pixel(red: 255, green: 0, blue: 0)) && near(image[192, 192], Pixel(red: 0, green: 255, blue: 0)))
    }

    @Test func fallbackStandsInForMissingTiles() async throws {
        // A source with tiles only in the park; parchment everywhere else at the layer's zooms.
        let parchment = RGBAImage(width: 64, height: 64, color: Color(hex: "#f4e8c8")!)
        let source = RecordingSource(metadata: TileSetMetadata(name: "p", format: .png, bounds: park, minZoom: 13, maxZoom: 16)) { tile in
            tile.x % 2 == 0 ? RGBAImage(width: 256, height: 256, color: .white) : nil
        }
        var options = LayerOptions()
        options.fallback = .image(parchment)
        options.minZoom = 10
        options.maxZoom = 18
        let layer = TileLayer(source: source, options: options)
        let inPark = TileID(containing: Coordinate(latitude: 40.78, longitude: -73.965), zoom: 15)
        let missing = inPark.x % 2 == 1 ? inPark : TileID(z: 15, x: inPark.x + 1, y: inPark.y)
        for tile in [missing, TileID(containing: Coordinate(latitude: 51.5, longitude: -0.12), zoom: 15)] {
            guard case .image(let image, _, let provenance) = try await layer.render(TileRequest(tile, scale: 2)) else {
                Issue.record("no fallback for \(tile)"); continue
            }
            #expect(provenance == .fallback && image.width == 512 && near(image[100, 100], Pixel(Color(hex: "#f4e8c8")!)))
        }
        // Outside the layer's zooms even the fallback is absent.
        guard case .noTile = try await layer.render(TileRequest(TileID(z: 5, x: 1, y: 1))) else { Issue.record("fallback at z5"); return }
    }

    @Test func retinaRequestsAreScaled() async throws {
        let source = RecordingSource.solid(Color(red: 0, green: 0, blue: 1))
        guard case .image(let image, let passthrough, _) = try await TileLayer(source: source).render(TileRequest(TileID(z: 3, x: 1, y: 1), scale: 2)) else {
            Issue.record("no scaled tile"); return
        }
        #expect(image.width == 512 && passthrough == nil)
    }
}
