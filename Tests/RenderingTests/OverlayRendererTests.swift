import Foundation
import Testing
import Canvas
import TileMath
import Features
import TileSources
@testable import Rendering

@Suite struct OverlayRendererTests {
    /// The reservoir (a box around it) with the shimmer renderer.
    let reservoir: Feature = {
        var f = Feature(geometry: .polygon([[(-73.9660, 40.7830), (-73.9580, 40.7830), (-73.9580, 40.7890), (-73.9660, 40.7890), (-73.9660, 40.7830)]
            .map { Coordinate(latitude: $0.1, longitude: $0.0) }]))
        f.renderer = "shimmer"
        f.style.fill = Color(hex: "#3b6ea5")
        return f
    }()

    @Test func shimmerMovesWithItsPhaseAndStaysInside() throws {
        let tile = TileID(containing: Coordinate(latitude: 40.786, longitude: -73.962), zoom: 16)
        func render(_ phase: Double) throws -> RGBAImage {
            var renderer = FeatureRenderer()
            renderer.renderers["shimmer"] = ShimmerRenderer(phase: phase)
            let canvas = try Canvas(width: 256, height: 256)
            renderer.draw([reservoir], on: canvas, projection: MapProjection(tile: tile))
            return canvas.makeImage()
        }
        let a = try render(0), b = try render(0.5)
        #expect(a != b)  // the band moved
        let inside = MapProjection(tile: tile).point(for: Coordinate(latitude: 40.786, longitude: -73.962))
        #expect(a[Int(inside.x), Int(inside.y)].alpha == 255)
        // Lighter in the band than the plain fill somewhere, and the fill colour elsewhere.
        let blues = (0..<256).map { a[$0, Int(inside.y)] }.filter { $0.alpha == 255 }
        #expect(blues.contains { $0.distance(to: Pixel(Color(hex: "#3b6ea5")!)) <= 2 })
        #expect(blues.contains { Int($0.red) > 0x3b + 40 })
        let outside = MapProjection(tile: tile).point(for: Coordinate(latitude: 40.7800, longitude: -73.9620))
        if (0..<256).contains(Int(outside.y)) { #expect(a[Int(outside.x), Int(outside.y)].alpha == 0) }
    }

    /// Markers are drawn above every overlay, whatever the file order (MapKit's annotations
    /// above its overlays): a line and a circle that come after a marker pass under it.
    @Test func markersAreDrawnAboveLinesAndAreasWhateverTheOrder() throws {
        let tile = TileID(containing: Coordinate(latitude: 40.786, longitude: -73.962), zoom: 16)
        let projection = MapProjection(tile: tile)
        let spot = Coordinate(latitude: 40.786, longitude: -73.962)
        var marker = Feature(geometry: .point(spot))
        marker.style.markerColor = Color(hex: "#d62728")
        var line = Feature(geometry: .lineString([Coordinate(latitude: 40.786, longitude: -73.966), Coordinate(latitude: 40.786, longitude: -73.958)]))
        line.style.stroke = Color(hex: "#1f5fbf")
        line.style.strokeWidth = 8
        var zone = Feature(geometry: .point(spot))
        zone.radius = 40
        zone.style.fill = Color(hex: "#2ca02c")
        zone.style.fillOpacity = 1
        func pixel(_ features: [Feature], at coordinate: Coordinate) throws -> Pixel {
            let canvas = try Canvas(width: 256, height: 256)
            FeatureRenderer().draw(features, on: canvas, projection: projection)
            let p = projection.point(for: coordinate)
            return canvas.makeImage()[Int(p.x), Int(p.y)]
        }
        let red = Pixel(Color(hex: "#d62728")!), blue = Pixel(Color(hex: "#1f5fbf")!)
        for order in [[marker, line, zone], [zone, line, marker], [line, marker, zone]] {
            #expect(try pixel(order, at: spot).distance(to: red) <= 2)
        }
        // The line itself still draws, over the zone it follows in the file.
        let along = Coordinate(latitude: 40.786, longitude: -73.9645)
        #expect(try pixel([marker, zone, line], at: along).distance(to: blue) <= 2)
    }

    @Test func shimmerTilesJoin() async throws {
        let source = FeatureTileSource(name: "water", features: [reservoir])
        let corner = TileID(containing: Coordinate(latitude: 40.789, longitude: -73.966), zoom: 16)
        let big = try Canvas(width: 512, height: 512)
        FeatureRenderer().draw([reservoir], on: big, projection: MapProjection(tile: corner))
        let whole = big.makeImage()
        var worst = 0
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            guard let data = try await source.tile(TileRequest(TileID(z: 16, x: corner.x + dx, y: corner.y + dy))).data else { continue }
            let tile = try RGBAImage(decoding: data.bytes)
            for y in 0..<256 { for x in 0..<256 { worst = max(worst, tile[x, y].distance(to: whole[dx * 256 + x, dy * 256 + y])) } }
        }
        #expect(worst <= 2, "worst \(worst)")
    }

    @Test func gradientPolylineRunsFromStartToEndColour() throws {
        var line = Feature(geometry: .lineString([Coordinate(latitude: 0, longitude: -10), Coordinate(latitude: 0, longitude: 10)]))
        line.renderer = "gradient"
        line.style.strokeWidth = 8
        let projection = MapProjection(zoom: 3, origin: PixelPoint(x: 1024 - 128, y: 1024 - 128))
        let canvas = try Canvas(width: 256, height: 256)
        FeatureRenderer().draw([line], on: canvas, projection: projection)
        let image = canvas.makeImage()
        let start = projection.point(for: Coordinate(latitude: 0, longitude: -9.5)), end = projection.point(for: Coordinate(latitude: 0, longitude: 9.5))
        #expect(image[Int(start.x), Int(start.y)].distance(to: Pixel(Color(hex: "#2e7d32")!)) < 12)
        #expect(image[Int(end.x), Int(end.y)].distance(to: Pixel(Color(hex: "#c62828")!)) < 12)
    }
}

@Suite struct GeodesicLineTests {
    /// New York to London: the geodesic line bows north of the straight Mercator line.
    @Test func geodesicLinesBowAlongTheGreatCircle() throws {
        let nyc = Coordinate(latitude: 40.7128, longitude: -74.0060), london = Coordinate(latitude: 51.5074, longitude: -0.1278)
        var line = Feature(geometry: .lineString([nyc, london]))
        line.properties["geodesic"] = .bool(true)
        line.style.stroke = Color(red: 1, green: 0, blue: 0)
        line.style.strokeWidth = 3
        let projection = MapProjection(zoom: 3, origin: PixelPoint(x: 512, y: 512))
        let canvas = try Canvas(width: 1024, height: 512)
        FeatureRenderer().draw([line], on: canvas, projection: projection)
        let image = canvas.makeImage()
        // At 37°W the great circle is near 52°N; the straight Mercator line would cross near 46.6°N.
        let column = Int(projection.point(for: Coordinate(latitude: 0, longitude: -37)).x)
        let inked = (0..<512).filter { image[column, $0].alpha > 128 }
        let onCircle = projection.point(for: Geodesy.geodesicLine([nyc, london], maxSegment: 1000).min { abs($0.longitude + 37) < abs($1.longitude + 37) }!)
        let straight = Int(projection.point(for: Coordinate(latitude: 46.6, longitude: -37)).y)
        #expect(!inked.isEmpty && inked.allSatisfy { abs(Double($0) - onCircle.y) < 3 }, "\(inked) vs \(onCircle.y)")
        #expect(inked.allSatisfy { $0 < straight - 10 })
    }
}
