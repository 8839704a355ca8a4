import Foundation
import Testing
@testable import TileMath

@Suite struct GeodesyTests {
    let fixture = ReferenceFixture.shared

    /// Vincenty agrees with Karney's algorithm (geographiclib) to a millimetre.
    @Test func ellipsoidalDistanceAgreesWithGeographiclib() {
        var compared = 0
        for row in fixture.rows("geodesic") {
            let a = Coordinate(latitude: row.double(1), longitude: row.double(0))
            let b = Coordinate(latitude: row.double(3), longitude: row.double(2))
            guard let distance = Geodesy.ellipsoidalDistance(a, b) else {
                #expect(row[6] as! Bool, "Vincenty failed away from the antipode: \(row)")
                continue
            }
            compared += 1
            #expect(abs(distance - row.double(4)) < 0.001, "\(row): \(distance)")
            if distance > 1 {
                let bearing = Geodesy.vincentyInverse(a, b)!.initialBearing
                let difference = abs(bearing - row.double(5))
                #expect(min(difference, 360 - difference) < 1e-6, "\(row)")
            }
        }
        #expect(compared > 1400)
    }

    @Test func ellipsoidalDestinationAgreesWithGeographiclib() {
        for row in fixture.rows("direct") {
            let start = Coordinate(latitude: row.double(1), longitude: row.double(0))
            let end = Geodesy.ellipsoidalDestination(from: start, distance: row.double(3), bearing: row.double(2))
            let expected = Coordinate(latitude: row.double(5), longitude: row.double(4))
            // 1e-9 degrees is ~0.1 mm.
            #expect(abs(end.latitude - expected.latitude) < 1e-9, "\(row)")
            var dLon = abs(end.longitude - expected.longitude)
            dLon = min(dLon, 360 - dLon)
            #expect(dLon < 1e-9, "\(row)")
        }
    }

    @Test func haversineKnownAnswers() {
        // One degree of a meridian on the mean sphere: 2πR/360.
        let oneDegree = Geodesy.haversineDistance(Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 1, longitude: 0))
        #expect(abs(oneDegree - 2 * .pi * 6_371_008.8 / 360) < 1e-6)
        // Haversine and the ellipsoid agree within 0.6% everywhere (the radius of curvature
        // ranges from 6,335 km along meridians at the equator to 6,400 km at the poles).
        for row in fixture.rows("geodesic") where !(row[6] as! Bool) {
            let a = Coordinate(latitude: row.double(1), longitude: row.double(0))
            let b = Coordinate(latitude: row.double(3), longitude: row.double(2))
            let h = Geodesy.haversineDistance(a, b)
            #expect(abs(h - row.double(4)) <= 0.006 * row.double(4) + 1e-6)
        }
        #expect(Geodesy.haversineDistance(Coordinate(latitude: 5, longitude: 5), Coordinate(latitude: 5, longitude: 5)) == 0)
    }

    @Test(arguments: [
        (0.0, 0.0, 1.0, 0.0, 0.0),   // due north
        (0.0, 0.0, 0.0, 1.0, 90.0),  // due east
        (0.0, 0.0, -1.0, 0.0, 180.0),
        (0.0, 0.0, 0.0, -1.0, 270.0),
    ])
    func bearings(lat1: Double, lon1: Double, lat2: Double, lon2: Double, expected: Double) {
        let bearing = Geodesy.bearing(from: Coordinate(latitude: lat1, longitude: lon1),
                                      to: Coordinate(latitude: lat2, longitude: lon2))
        #expect(abs(bearing - expected) < 1e-9)
    }

    @Test func destinationRoundTripsWithBearingAndDistance() {
        let start = Coordinate(latitude: 40.767769, longitude: -73.971870)  // the zoo in Central Park
        for bearing in stride(from: 0.0, to: 360, by: 15) {
            let end = Geodesy.destination(from: start, distance: 1234.5, bearing: bearing)
            #expect(abs(Geodesy.haversineDistance(start, end) - 1234.5) < 1e-6)
            let back = Geodesy.bearing(from: start, to: end)
            #expect(min(abs(back - bearing), 360 - abs(back - bearing)) < 1e-6)
        }
        // Across the antimeridian the longitude wraps.
        let east = Geodesy.destination(from: Coordinate(latitude: 0, longitude: 179.99), distance: 5000, bearing: 90)
        #expect(east.longitude < -179.9)
    }

    /// A 10 m circle stays round in meters near the pole and at the equator alike.
    @Test(arguments: [0.0, 40.7678, 70.0, 85.0])
    func circleIsRoundInMeters(latitude: Double) {
        let center = Coordinate(latitude: latitude, longitude: -73.97)
        let ring = Geodesy.circle(center: center, radius: 10, segments: 72)
        #expect(ring.count == 73 && ring.first == ring.last)
        for point in ring {
            #expect(abs(Geodesy.ellipsoidalDistance(center, point)! - 10) < 1e-5)  // 10 µm
        }
        // Counter-clockwise (RFC 7946 exterior): positive signed area in lon/lat.
        var area = 0.0
        for (a, b) in zip(ring, ring.dropFirst()) { area += a.longitude * b.latitude - b.longitude * a.latitude }
        #expect(area > 0)
        #expect(Polygon(exterior: ring).contains(center))
    }

    @Test func distanceToPolyline() {
        let line = [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 1)]
        let meterPerDegree = 2 * Double.pi * Geodesy.meanEarthRadius / 360
        // Beside the middle of the segment: the perpendicular.
        #expect(abs(Geodesy.distance(from: Coordinate(latitude: 0.01, longitude: 0.5), toPolyline: line) - 0.01 * meterPerDegree) < 0.01)
        // Beyond the end: the distance to the end vertex.
        let beyond = Coordinate(latitude: 0, longitude: 1.5)
        #expect(abs(Geodesy.distance(from: beyond, toPolyline: line) - 0.5 * meterPerDegree) < 1e-6)
        // Behind the start.
        let behind = Coordinate(latitude: 0.3, longitude: -0.4)
        #expect(abs(Geodesy.distance(from: behind, toPolyline: line) - Geodesy.haversineDistance(behind, line[0])) < 1e-6)
        // On the line.
        #expect(Geodesy.distance(from: Coordinate(latitude: 0, longitude: 0.25), toPolyline: line) < 1e-6)
        #expect(Geodesy.distance(from: behind, toPolyline: []) == .infinity)
    }

    @Test func pointInPolygonWithHoles() {
        let square = [(0.0, 0.0), (10, 0), (10, 10), (0, 10), (0, 0)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        let hole = [(4.0, 4.0), (6, 4), (6, 6), (4, 6)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        let polygon = Polygon(exterior: square, holes: [hole])
        #expect(polygon.contains(Coordinate(latitude: 2, longitude: 2)))
        #expect(!polygon.contains(Coordinate(latitude: 5, longitude: 5)))  // in the hole
        #expect(polygon.contains(Coordinate(latitude: 5, longitude: 3)))
        #expect(!polygon.contains(Coordinate(latitude: 11, longitude: 5)))
        #expect(!polygon.contains(Coordinate(latitude: -1, longitude: -1)))
        // A ray through a vertex counts once.
        let diamond = [(0.0, -1.0), (1, 0), (0, 1), (-1, 0)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        #expect(Polygon(exterior: diamond).contains(Coordinate(latitude: 0, longitude: 0)))
        #expect(!Polygon(exterior: diamond).contains(Coordinate(latitude: 0, longitude: -2)))
    }
}

@Suite struct GreatCircleTests {
    @Test func intermediatePointsFollowTheGreatCircle() {
        // Along the equator the midpoint is halfway in longitude.
        let mid = Geodesy.intermediatePoint(from: Coordinate(latitude: 0, longitude: 0), to: Coordinate(latitude: 0, longitude: 90), fraction: 0.5)
        #expect(abs(mid.latitude) < 1e-9 && abs(mid.longitude - 45) < 1e-9)
        // New York to London bows north of both ends (the great circle passes ~52°N).
        let nyc = Coordinate(latitude: 40.7128, longitude: -74.0060), london = Coordinate(latitude: 51.5074, longitude: -0.1278)
        let halfway = Geodesy.intermediatePoint(from: nyc, to: london, fraction: 0.5)
        #expect(halfway.latitude > 51.5 && halfway.latitude < 53)
        // Distances add up along the path, and the ends are exact.
        let line = Geodesy.geodesicLine([nyc, london], maxSegment: 100_000)
        #expect(line.first == nyc && abs(line.last!.latitude - london.latitude) < 1e-9 && line.count > 50)
        let along = zip(line, line.dropFirst()).reduce(0) { $0 + Geodesy.haversineDistance($1.0, $1.1) }
        #expect(abs(along - Geodesy.haversineDistance(nyc, london)) < 1)
        #expect(zip(line, line.dropFirst()).allSatisfy { Geodesy.haversineDistance($0.0, $0.1) <= 100_000.001 })
    }
}
