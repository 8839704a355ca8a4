import Foundation
import Testing
import Canvas
import TileMath
import Features
import TileSources
@testable import Rendering

let zoo = Coordinate(latitude: 40.767769, longitude: -73.971870)

/// Features around the zoo that cross tile edges at zoom 17: a route, a pond with an
/// island (a hole), a 60 m circle, and markers with labels.
func sampleFeatures() -> [Feature] {
    var route = Feature(geometry: .lineString([Coordinate(latitude: 40.7648, longitude: -73.9733), Coordinate(latitude: 40.7660, longitude: -73.9721), zoo,
                                               Coordinate(latitude: 40.7695, longitude: -73.9700)]))
    route.style.stroke = Color(hex: "#b3261e")
    route.style.strokeWidth = 5
    route.style.dash = [12, 6]
    let pond = [(-73.9745, 40.7665), (-73.9725, 40.7665), (-73.9725, 40.7680), (-73.9745, 40.7680), (-73.9745, 40.7665)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
    let island = [(-73.9738, 40.7670), (-73.9732, 40.7670), (-73.9732, 40.7675), (-73.9738, 40.7675), (-73.9738, 40.7670)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
    var water = Feature(geometry: .polygon([pond, island]))
    water.style.fill = Color(hex: "#3b6ea5")
    water.style.stroke = Color(hex: "#1d3c5e")
    var zone = Feature(geometry: .point(zoo))
    zone.radius = 60
    zone.style.fill = Color(hex: "#b3261e")
    zone.style.fillOpacity = 0.3
    var goblin = Feature(geometry: .point(zoo), title: "Goblin")
    goblin.style.markerColor = Color(hex: "#b3261e")
    goblin.style.markerSize = .large
    let store = Feature(geometry: .point(Coordinate(latitude: 40.7637, longitude: -73.9727)), title: "Store on Fifth Avenue")
    // A marker 2 px left of a tile edge at zoom 17: its disc and its label lie mostly in
    // the next tile, which must draw them although the point is not in it.
    let centre = TileID(containing: zoo, zoom: 17)
    let edge = MapProjection(tile: centre).coordinate(for: PixelPoint(x: 254, y: 200))
    let treasure = Feature(geometry: .point(edge), title: "Treasure")
    return [water, route, zone, goblin, store, treasure]
}

@Suite struct MapProjectionTests {
    @Test func tilesAndPixels() {
        let tile = TileID(containing: zoo, zoom: 17)
        let projection = MapProjection(tile: tile)
        let corner = projection.point(for: tile.northWest)
        #expect(abs(corner.x) < 1e-6 && abs(corner.y) < 1e-6)
        let p = projection.point(for: zoo)
        #expect((0..<256).contains(p.x) && (0..<256).contains(p.y))
        let back = projection.coordinate(for: p)
        #expect(abs(back.latitude - zoo.latitude) < 1e-10 && abs(back.longitude - zoo.longitude) < 1e-10)
        let retina = MapProjection(tile: tile, scale: 2).point(for: zoo)
        #expect(abs(retina.x - 2 * p.x) < 1e-6 && abs(retina.y - 2 * p.y) < 1e-6)
        #expect(abs(MapProjection(tile: tile, scale: 2).metersPerPixel(latitude: 40.77) * 2 - projection.metersPerPixel(latitude: 40.77)) < 1e-9)
    }
}

@Suite struct FeatureTileSourceTests {
    /// A 3x3 block of tiles equals one big render of the same area: nothing is cut at a
    /// tile edge (lines, the circle, markers and labels cross several).
    @Test(arguments: [1, 2])
    func tilesJoinWithoutSeams(scale: Int) async throws {
        let source = FeatureTileSource(name: "zoo", features: sampleFeatures())
        let centre = TileID(containing: zoo, zoom: 17)
        let size = 256 * scale
        let corner = TileID(z: 17, x: centre.x - 1, y: centre.y - 1)
        let big = try Canvas(width: size * 3, height: size * 3)
        FeatureRenderer().draw(sampleFeatures(), on: big, projection: MapProjection(tile: corner, scale: Double(scale)))
        let whole = big.makeImage()
        var worst = 0, compared = 0, inked = 0, off = 0
        for dy in 0..<3 {
            for dx in 0..<3 {
                let tile = TileID(z: 17, x: corner.x + dx, y: corner.y + dy)
                guard let data = try await source.tile(TileRequest(tile, scale: scale)).data else {
                    // A tile with nothing near must be empty in the big render too.
                    #expect(whole.cropped(x: dx * size, y: dy * size, width: size, height: size).uniformPixel?.alpha == 0)
                    continue
                }
                let image = try RGBAImage(decoding: data.bytes)
                for y in 0..<size {
                    for x in 0..<size {
                        let d = image[x, y].distance(to: whole[dx * size + x, dy * size + y])
                        if d > 2 { off += 1 }
                        worst = max(worst, d)
                        compared += 1
                        if image[x, y].alpha > 0 { inked += 1 }
                    }
                }
            }
        }
        #expect(compared >= 4 * size * size && inked > 1000)
        // Identical but for antialiasing: cairo rounds a dash pattern's edges a little
        // differently from another origin (measured: 3 of ~590k pixels, at most 9/255, on
        // the dashed route's edges). A cut at a tile edge would differ by far more.
        #expect(off <= compared / 10_000 && worst <= 16, "\(off) pixels differ by more than 2, largest \(worst)")
        if scale == 1 { try Data(whole.encoded()).write(to: URL(fileURLWithPath: "/tmp/tilekit-zoo-features.png")) }
    }

    /// Fast antialiasing draws the same shapes with coarser edge coverage.
    @Test func fastAntialiasDrawsTheSameShapes() async throws {
        var fast = FeatureRenderer()
        fast.antialias = .fast
        let tile = TileRequest(TileID(containing: zoo, zoom: 17))
        let best = try #require(try FeatureTileSource(name: "zoo", features: sampleFeatures()).draw(tile)).makeImage()
        let rough = try #require(try FeatureTileSource(name: "zoo", features: sampleFeatures(), renderer: fast).draw(tile)).makeImage()
        var differ = 0, far = 0
        for y in 0..<256 {
            for x in 0..<256 {
                let d = best[x, y].distance(to: rough[x, y])
                if d > 0 { differ += 1 }
                if d > 60 { far += 1 }
            }
        }
        #expect(differ > 0, "the option changed nothing")
        #expect(Double(far) < 0.01 * 65536, "\(far) pixels far apart")
    }

    @Test func circlesAreTrueToMeters() async throws {
        var zone = Feature(geometry: .point(zoo))
        zone.radius = 20
        zone.style.fill = Color(red: 1, green: 0, blue: 0)
        zone.style.fillOpacity = 1
        zone.style.strokeWidth = 0
        let tile = TileID(containing: zoo, zoom: 19)
        let image = try #require(try await FeatureTileSource(name: "z", features: [zone]).tile(TileRequest(tile)).image)
        let projection = MapProjection(tile: tile)
        let centre = projection.point(for: zoo)
        let radius = 20 / projection.metersPerPixel(latitude: zoo.latitude)  // ~ 88 px at z19 (0.226 m/px)
        #expect(radius > 80 && radius < 95)
        for angle in stride(from: 0.0, to: 2 * .pi, by: .pi / 4) {
            let inside = PixelPoint(x: centre.x + cos(angle) * radius * 0.9, y: centre.y + sin(angle) * radius * 0.9)
            let outside = PixelPoint(x: centre.x + cos(angle) * radius * 1.1, y: centre.y + sin(angle) * radius * 1.1)
            if (0..<256).contains(inside.x), (0..<256).contains(inside.y) { #expect(image[Int(inside.x), Int(inside.y)].alpha > 200) }
            if (0..<256).contains(outside.x), (0..<256).contains(outside.y) { #expect(image[Int(outside.x), Int(outside.y)].alpha < 30) }
        }
    }

    @Test func farTilesAreAbsentAndLayersCompose() async throws {
        let source = FeatureTileSource(name: "zoo", features: sampleFeatures())
        #expect(try await source.tile(TileRequest(TileID(containing: Coordinate(latitude: 51.5, longitude: -0.12), zoom: 17))) == .noTile)
        let base = GeneratedTileSource(metadata: TileSetMetadata(name: "paper")) { canvas, _ in canvas.clear(Color(hex: "#f4e8c8")!) }
        var overlay = LayerOptions()
        overlay.zIndex = 1
        let tile = TileRequest(TileID(containing: zoo, zoom: 17))
        let composed = try #require(try await TileComposer(layers: [TileLayer(source: base), TileLayer(source: source, options: overlay)]).tile(tile).image)
        #expect(composed.isOpaque)
        let p = MapProjection(tile: tile.tile).point(for: zoo)
        let marker = composed[Int(p.x), Int(p.y)]
        #expect(Int(marker.red) > Int(marker.green) + 60)  // the red marker over the parchment
    }
}

extension TileResult {
    var image: RGBAImage? { data.flatMap { try? RGBAImage(decoding: $0.bytes) } }
}
