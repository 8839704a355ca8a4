import Foundation
import Testing
import Canvas
import TileMath
import Features
import TileSources
@testable import Rendering

/// Inputs of issue 11 that trapped (a Double-to-Int of NaN or infinity) or drew without end.
@Suite struct HostileRenderingTests {
    static let red = RGBAImage(width: 8, height: 8, color: Color(hex: "#d02020")!)

    static func overlay(south: Double, north: Double) -> Feature {
        var feature = Feature(geometry: nil)
        feature.imageOverlay = ImageOverlay(image: "red", placement: .box(BoundingBox(west: -10, south: south, east: 10, north: north)))
        return feature
    }

    /// The snapshot that crashed: fitted to an overlay reaching -90°. Mercator ends at
    /// -85.0511°: the fit stops there, and the overlay is drawn down to the world's edge.
    @Test(arguments: [(-90.0, -80.0), (80.0, 90.0), (-90.0, 90.0)])
    func aSnapshotFitsAnOverlayReachingAPole(south: Double, north: Double) async throws {
        var options = SnapshotOptions(region: .fit(padding: 10), width: 300, height: 200, features: [Self.overlay(south: south, north: north)])
        options.images = ["red": Self.red]
        let snapshot = try await Snapshotter.render(options)
        let g = snapshot.geometry
        #expect(g.center.latitude.isFinite && g.center.longitude.isFinite && g.zoom.isFinite)
        // The overlay's middle (within Mercator) is red.
        let middle = g.point(for: Coordinate(latitude: max(-85, min(85, (south + north) / 2)), longitude: 0))
        #expect(snapshot.image[Int(middle.x), Int(middle.y)].distance(to: Pixel(red: 0xd0, green: 0x20, blue: 0x20)) <= 2, "\(middle)")
        // A pole lands on the world's edge, not at infinity.
        let pole = g.point(for: Coordinate(latitude: south < 0 ? -90 : 90, longitude: 0))
        #expect(pole.y.isFinite && pole.x.isFinite)
    }

    @Test func regionsThatAreNotNumbersAreRefused() async throws {
        func render(_ region: SnapshotRegion, width: Int = 100, height: Int = 100, scale: Int = 1) async throws {
            _ = try await Snapshotter.render(SnapshotOptions(region: region, width: width, height: height, scale: scale))
        }
        await #expect(throws: SnapshotError.invalidRegion("centre 0.0,nan is not a longitude and latitude")) {
            try await render(.center(Coordinate(latitude: .nan, longitude: 0), zoom: 3))
        }
        await #expect(throws: SnapshotError.invalidRegion("zoom 1e+300 is out of range [0, 30]")) {
            try await render(.center(Coordinate(latitude: 0, longitude: 0), zoom: 1e300))
        }
        await #expect(throws: SnapshotError.invalidRegion("span inf,1.0 is not 0-360 degrees of longitude and 0-180 of latitude")) {
            try await render(.span(center: Coordinate(latitude: 0, longitude: 0), longitudeDelta: .infinity, latitudeDelta: 1))
        }
        await #expect(throws: SnapshotError.invalidRegion("box corner 0.0,91.0 is not a longitude and latitude")) {
            try await render(.box(BoundingBox(west: 0, south: 0, east: 1, north: 91)))
        }
        await #expect(throws: SnapshotError.invalidRegion("padding nan is not 0 or more pixels")) { try await render(.fit(padding: .nan)) }
        // A centre at the pole shows the world's top edge.
        try await render(.center(Coordinate(latitude: 90, longitude: 0), zoom: 2))
    }

    /// 1e9 x 1e9 pixels, or 4096 x 4096 at @3x (a 576 MiB canvas): refused before any pixel.
    @Test func snapshotSizesHaveALimit() async throws {
        // Not `#expect(throws:)`: a failure would print the whole image it returned.
        func refusal(_ width: Int, _ height: Int, scale: Int) async -> SnapshotError? {
            let region = SnapshotRegion.center(Coordinate(latitude: 0, longitude: 0), zoom: 2)
            do {
                _ = try await Snapshotter.render(SnapshotOptions(region: region, width: width, height: height, scale: scale))
                return nil
            } catch {
                return error as? SnapshotError
            }
        }
        #expect(await refusal(1_000_000_000, 1_000_000_000, scale: 1) == .invalidSize(width: 1_000_000_000, height: 1_000_000_000))
        #expect(await refusal(4096, 4096, scale: 4) == .tooManyPixels(width: 4096, height: 4096, scale: 4, limit: 67_108_864))
        #expect(await refusal(4096, 4096, scale: 3) == .tooManyPixels(width: 4096, height: 4096, scale: 3, limit: 67_108_864))
        #expect(await refusal(2731, 2731, scale: 3) == .tooManyPixels(width: 2731, height: 2731, scale: 3, limit: 67_108_864))
    }

    /// A circle of 1e300 m (or of infinite meters) covers the Earth, and no more; a radius that
    /// is not a number draws nothing.
    @Test func absurdRadiiAreBounded() async throws {
        var huge = Feature(geometry: .point(Coordinate(latitude: 10, longitude: 20)))
        huge.radius = 1e300
        huge.style.fill = Color(hex: "#2040d0")
        let grown = FeatureTileSource.grow(BoundingBox(west: 20, south: 10, east: 20, north: 10), meters: 1e300)
        #expect(grown == BoundingBox(west: -180, south: -90, east: 180, north: 90))
        let source = FeatureTileSource(name: "circles", features: [huge])
        let tile = try #require(try await source.tile(TileRequest(TileID(z: 2, x: 1, y: 1))).data)
        #expect(try RGBAImage(decoding: tile.bytes)[128, 128].distance(to: Pixel(Color(hex: "#2040d0")!.withAlpha(0.6))) <= 2)
        huge.radius = .infinity
        let everywhere = try #require(try await FeatureTileSource(name: "circles", features: [huge]).tile(TileRequest(TileID(z: 3, x: 0, y: 7))).data)
        #expect(try RGBAImage(decoding: everywhere.bytes)[0, 255].alpha > 0)
        // Fitted: the whole world at zoom 0, not a NaN.
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .fit(padding: 0), width: 256, height: 256, features: [huge]))
        #expect(snapshot.geometry.zoom == 0)
        var nan = huge
        nan.radius = .nan
        let canvas = try Canvas(width: 256, height: 256)
        FeatureRenderer().draw([nan], on: canvas, projection: MapProjection(tile: TileID(z: 0, x: 0, y: 0)))
        #expect(canvas.makeImage().isTransparent)
        #expect(FeatureTileSource.grow(BoundingBox(west: 20, south: 10, east: 20, north: 10), meters: .nan) == BoundingBox(west: 20, south: 10, east: 20, north: 10))
    }

    /// A hand-drawn line across the world, in a tile at zoom 22 (a billion pixels of line):
    /// only the part near the tile is sampled, and it is drawn where the line is.
    /// The time limit only guards a hang (drawing the whole line would take hours).
    @Test(.timeLimit(.minutes(1))) func aWobblyLineAcrossTheWorldDrawsOnlyNearTheTile() throws {
        var line = Feature(geometry: .lineString([Coordinate(latitude: 0.00001, longitude: -170), Coordinate(latitude: 0.00001, longitude: 170)]))
        line.renderer = "wobbly"
        let tile = TileID(containing: Coordinate(latitude: 0.00001, longitude: 0.00001), zoom: 22)
        let canvas = try Canvas(width: 256, height: 256)
        FeatureRenderer().draw([line], on: canvas, projection: MapProjection(tile: tile))
        let y = Int(MapProjection(tile: tile).point(for: Coordinate(latitude: 0.00001, longitude: 0)).y)
        let image = canvas.makeImage()
        #expect((0..<256).allSatisfy { x in (max(0, y - 4)...min(255, y + 4)).contains { image[x, $0].alpha > 0 } })
        // To a pole: the end is held at the world's edge, not infinity.
        line.geometry = .lineString([Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 90, longitude: 0)])
        FeatureRenderer().draw([line], on: try Canvas(width: 256, height: 256), projection: MapProjection(tile: TileID(z: 0, x: 0, y: 0)))
    }

    /// Tiles rendered apart still join: samples sit at the same places along each segment.
    @Test func clippedWobblyTilesJoin() throws {
        var line = Feature(geometry: .lineString([Coordinate(latitude: 40.70, longitude: -74.05), Coordinate(latitude: 40.80, longitude: -73.90)]))
        line.renderer = "wobbly"
        line.style.strokeWidth = 3
        let corner = TileID(containing: Coordinate(latitude: 40.75, longitude: -73.975), zoom: 15)
        let big = try Canvas(width: 512, height: 512)
        FeatureRenderer().draw([line], on: big, projection: MapProjection(tile: corner))
        let whole = big.makeImage()
        var worst = 0
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            let canvas = try Canvas(width: 256, height: 256)
            FeatureRenderer().draw([line], on: canvas, projection: MapProjection(tile: TileID(z: 15, x: corner.x + dx, y: corner.y + dy)))
            let tile = canvas.makeImage()
            for y in 0..<256 { for x in 0..<256 { worst = max(worst, tile[x, y].distance(to: whole[dx * 256 + x, dy * 256 + y])) } }
        }
        #expect(worst <= 2, "worst \(worst)")
    }

    @Test func hatchingWithoutSpacingDrawsNoLines() throws {
        var water = Feature(geometry: .polygon([[(0.0, 0.0), (10, 0), (10, 10), (0, 0)].map { Coordinate(latitude: $0.1, longitude: $0.0) }]))
        water.renderer = "hatch"
        var renderer = FeatureRenderer()
        renderer.renderers["hatch"] = HatchRenderer(spacing: 0)
        renderer.draw([water], on: try Canvas(width: 256, height: 256), projection: MapProjection(tile: TileID(z: 0, x: 0, y: 0)))
        renderer.renderers["hatch"] = HatchRenderer(spacing: .nan)
        renderer.draw([water], on: try Canvas(width: 256, height: 256), projection: MapProjection(tile: TileID(z: 0, x: 0, y: 0)))
    }

    @Test func pixelSpansClampBeforeBecomingIndices() {
        #expect(pixelSpan([.nan, 3], within: 100) == nil)
        #expect(pixelSpan([-.infinity, .infinity], within: 100) == 0..<100)
        #expect(pixelSpan([-1e300, 10.2], within: 100) == 0..<11)
        #expect(pixelSpan([150, 1e300], within: 100) == nil)
        #expect(pixelSpan([2.5, 2.5], within: 100) == 2..<3)
    }

    /// A marker at a pole is placed on the world's edge, and its geometry JSON is still JSON.
    @Test func aMarkerAtThePoleHasAFinitePlace() async throws {
        let marker = Feature(geometry: .point(Coordinate(latitude: 90, longitude: 0)))
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .center(Coordinate(latitude: 80, longitude: 0), zoom: 1), width: 200, height: 200,
                                                                    features: [marker]))
        #expect(snapshot.markers[0].point.y.isFinite)
        #expect(String(decoding: snapshot.geometryJSON, as: UTF8.self).contains("\"markers\":[{"))
    }
}
