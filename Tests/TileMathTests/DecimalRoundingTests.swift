import Testing
import TileMath

/// `Double.rounded(decimals:)`: what map.json and the game's event lines print.
@Suite struct DecimalRoundingTests {
    @Test func roundsAsPrintfRoundsTheBinaryValue() {
        #expect((40.78291234567).rounded(decimals: 7) == 40.7829123)
        #expect((-73.96541).rounded(decimals: 3) == -73.965)
        // 1.23456785 is stored just below its decimal text, so printf (and this) rounds down;
        // (x * 1e7).rounded() / 1e7 rounds it up, as the multiplication lands on the half.
        #expect((1.23456785).rounded(decimals: 7) == 1.2345678)
        #expect((1.23456785 * 1e7).rounded() / 1e7 == 1.2345679)
    }

    @Test func negativeZeroComesBackAsZero() {
        let value = (-0.00000001).rounded(decimals: 7)
        #expect(value == 0 && value.sign == .plus)
    }

    @Test func printsWithAtMostItsDigits() {
        #expect("\((34.43131234).rounded(decimals: 4))" == "34.4313")
        #expect("\((-118.6042).rounded(decimals: 7))" == "-118.6042")
    }

    @Test func aCoordinateRoundsBothDegrees() {
        let c = Coordinate(latitude: 40.78291234567, longitude: -73.96541234567).rounded(decimals: 7)
        #expect(c == Coordinate(latitude: 40.7829123, longitude: -73.9654123))
    }
}
