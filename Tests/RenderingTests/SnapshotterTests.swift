import Foundation
import Synchronization
import Testing
import Canvas
import TileMath
import Features
import TileSources
@testable import Rendering

/// A base whose tiles are red in even columns and blue in odd ones.
let stripes = GeneratedTileSource(metadata: TileSetMetadata(name: "stripes", minZoom: 0, maxZoom: 22)) { canvas, request in
    canvas.clear(request.tile.x % 2 == 0 ? Color(red: 1, green: 0, blue: 0) : Color(red: 0, green: 0, blue: 1))
}
let red = Pixel(red: 255, green: 0, blue: 0), blue = Pixel(red: 0, green: 0, blue: 255)

@Suite struct SnapshotterTests {
    @Test func markersLandWithinHalfAPixel() async throws {
        var marker = Feature(geometry: .point(zoo))
        marker.style.markerColor = Color(red: 0, green: 1, blue: 0)
        marker.style.markerSize = .small
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .center(Coordinate(latitude: 40.77, longitude: -73.97), zoom: 15.4),
                                                                    width: 300, height: 200, scale: 2, features: [marker]))
        #expect(snapshot.image.width == 600 && snapshot.image.height == 400)
        let g = snapshot.geometry
        let centre = g.point(for: Coordinate(latitude: 40.77, longitude: -73.97))
        #expect(abs(centre.x - 150) <= 0.5 && abs(centre.y - 100) <= 0.5)
        // The exact Mercator position, computed independently, within half a pixel.
        let world = 256 * pow(2, 15.4)
        let expectedX = (MapPoint(zoo).x - MapPoint(Coordinate(latitude: 40.77, longitude: -73.97)).x) * world + 150
        let expectedY = (MapPoint(zoo).y - MapPoint(Coordinate(latitude: 40.77, longitude: -73.97)).y) * world + 100
        let p = g.point(for: zoo)
        #expect(abs(p.x - expectedX) <= 0.5 && abs(p.y - expectedY) <= 0.5)
        // The marker's colour is drawn there (in device pixels).
        #expect(snapshot.image[Int(p.x * 2), Int(p.y * 2)] == Pixel(red: 0, green: 255, blue: 0))
        let back = g.coordinate(for: p)
        #expect(abs(back.latitude - zoo.latitude) < 1e-9 && abs(back.longitude - zoo.longitude) < 1e-9)
    }

    @Test func baseTilesAndTheAntimeridian() async throws {
        // At zoom 2 around null island: columns 1 (blue) left of the centre, 2 (red) right.
        let plain = try await Snapshotter.render(SnapshotOptions(region: .center(Coordinate(latitude: 0, longitude: 0), zoom: 2),
                                                                 width: 400, height: 200, base: TileLayer(source: stripes)))
        #expect(plain.image[100, 100] == blue && plain.image[300, 100] == red)
        // Centred on 180°: column 3 (blue) on the left, column 0 (red) on the right, wrapped.
        let wrapped = try await Snapshotter.render(SnapshotOptions(region: .center(Coordinate(latitude: 0, longitude: 180), zoom: 2),
                                                                   width: 400, height: 200, base: TileLayer(source: stripes)))
        #expect(wrapped.image[100, 100] == blue && wrapped.image[300, 100] == red)
        // A box across the antimeridian is shown whole.
        let fiji = try await Snapshotter.render(SnapshotOptions(region: .box(BoundingBox(west: 177, south: -19, east: -178, north: -16)),
                                                                width: 400, height: 300))
        let corner = fiji.geometry.point(for: Coordinate(latitude: -16, longitude: 177))
        #expect(corner.x >= -0.5 && corner.x <= 200)
        #expect(fiji.geometry.bounds.crossesAntimeridian || fiji.geometry.bounds.east > 180)
    }

    /// A base that counts the tiles asked of it at once (each request yields a few times, so
    /// that they overlap).
    final class CountingSource: TileSource {
        let metadata = stripes.metadata
        let state = Mutex((running: 0, most: 0, asked: 0))
        func tile(_ request: TileRequest) async throws -> TileResult {
            state.withLock { $0.running += 1; $0.asked += 1; $0.most = max($0.most, $0.running) }
            for _ in 0..<5 { await Task.yield() }
            defer { state.withLock { $0.running -= 1 } }
            return try await stripes.tile(request)
        }
    }

    /// 8 x 6 tiles under a 1600 x 1200 view at zoom 5 (columns 12-19, rows 13-18), fetched at most `maxTileFetches` at once.
    @Test func baseTilesAreFetchedABoundedFewAtATime() async throws {
        let source = CountingSource()
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .center(Coordinate(latitude: 0, longitude: 0), zoom: 5),
                                                                    width: 1600, height: 1200, base: TileLayer(source: source)))
        #expect(source.state.withLock { $0.asked } == 8 * 6)
        #expect(source.state.withLock { $0.most } <= Snapshotter.maxTileFetches)
        // Columns 15 (odd, blue) and 16 (even, red) meet at the centre.
        #expect(snapshot.image[700, 600] == blue && snapshot.image[900, 600] == red)
    }

    /// A base whose odd columns cannot be had now (a stalled or failing upstream): the
    /// snapshot draws the rest and counts the gaps, which `tilekit snapshot` turns into exit 75.
    struct HalfDownSource: TileSource {
        var metadata: TileSetMetadata { stripes.metadata }
        func tile(_ request: TileRequest) async throws -> TileResult {
            request.tile.x % 2 == 1 ? .unavailable(retryAfter: nil) : try await stripes.tile(request)
        }
    }

    @Test func unavailableBaseTilesAreCountedAndTheRestDrawn() async throws {
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .center(Coordinate(latitude: 0, longitude: 0), zoom: 5),
                                                                    width: 1600, height: 1200, base: TileLayer(source: HalfDownSource())))
        #expect(snapshot.baseTileCount == 8 * 6 && snapshot.unavailableTiles == 4 * 6)
        #expect(snapshot.image[900, 600] == red)  // column 16: drawn
        #expect(snapshot.image[700, 600] != blue)  // column 15: a gap
        let complete = try await Snapshotter.render(SnapshotOptions(region: .center(Coordinate(latitude: 0, longitude: 0), zoom: 5),
                                                                    width: 1600, height: 1200, base: TileLayer(source: stripes)))
        #expect(complete.unavailableTiles == 0 && complete.baseTileCount == 8 * 6)
    }

    @Test func fitShowsEveryFeatureInsideThePadding() async throws {
        let features = sampleFeatures()
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .fit(padding: 30), width: 500, height: 400, features: features))
        for c in features.compactMap(\.geometry).flatMap(\.coordinates) {
            let p = snapshot.geometry.point(for: c)
            #expect(p.x >= 29.5 && p.x <= 470.5 && p.y >= 29.5 && p.y <= 370.5, "\(c) at \(p)")
        }
        #expect(snapshot.geometry.zoom == snapshot.geometry.zoom.rounded())  // a whole zoom, as staticmap
        await #expect(throws: SnapshotError.nothingToFit) { try await Snapshotter.render(SnapshotOptions(region: .fit(padding: 0), width: 10, height: 10)) }
        await #expect(throws: SnapshotError.self) { try await Snapshotter.render(SnapshotOptions(region: .fit(padding: 0), width: 0, height: 10)) }
    }
}
