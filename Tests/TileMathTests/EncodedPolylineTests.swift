import Foundation
import Testing
@testable import TileMath

@Suite struct EncodedPolylineTests {
    /// Google's documented example.
    let googlePoints = [(38.5, -120.2), (40.7, -120.95), (43.252, -126.453)].map { Coordinate(latitude: $0.0, longitude: $0.1) }

    @Test func googleKnownAnswer() throws {
        #expect(EncodedPolyline.encode(googlePoints) == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
        #expect(try EncodedPolyline.decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@") == googlePoints)
    }

    @Test func precisionSixKnownAnswer() throws {
        // The same points at precision 6 (OSRM, Valhalla).
        let encoded = EncodedPolyline.encode(googlePoints, precision: 6)
        #expect(encoded == "_izlhA~rlgdF_{geC~ywl@_kwzCn`{nI")
        #expect(try EncodedPolyline.decode(encoded, precision: 6) == googlePoints)
    }

    @Test(arguments: [5, 6])
    func randomRoundTrips(precision: Int) throws {
        let factor = pow(10.0, Double(precision))
        var generator = SeededRandom(seed: UInt64(precision))  // seeded: a failure reproduces
        for _ in 0..<100 {
            let points = (0..<Int.random(in: 0...50, using: &generator)).map { _ in
                Coordinate(latitude: (Double.random(in: -90...90, using: &generator) * factor).rounded() / factor,
                           longitude: (Double.random(in: -180...180, using: &generator) * factor).rounded() / factor)
            }
            let decoded = try EncodedPolyline.decode(EncodedPolyline.encode(points, precision: precision), precision: precision)
            #expect(decoded.count == points.count)
            for (a, b) in zip(decoded, points) {
                #expect(abs(a.latitude - b.latitude) < 0.5 / factor && abs(a.longitude - b.longitude) < 0.5 / factor)
            }
        }
    }

    @Test func badInputNamesTheOffset() {
        #expect(throws: TileMathError.invalidPolyline("_p~iF~ps|U_", reason: "truncated value at offset 11")) {
            try EncodedPolyline.decode("_p~iF~ps|U_")
        }
        #expect(throws: TileMathError.self) { try EncodedPolyline.decode("_p~iF") }  // latitude only
        #expect(throws: TileMathError.self) { try EncodedPolyline.decode("_p~iF ps|U") }  // a space is below 63
    }
}
