import Foundation

/// A WGS84 position in degrees.
///
/// `latitude` is north-positive in [-90, 90] and `longitude` east-positive in [-180, 180]
/// when valid; the type does not enforce this, so a value read from user input should be
/// checked with `validated()` at the edge. Axis order `[lon, lat]` appears only at the
/// GeoJSON and TileJSON boundary.
public struct Coordinate: Hashable, Sendable, CustomStringConvertible {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The latitude limit of Web Mercator: the map is a square, so the poles are cut at
    /// atan(sinh(π)) ≈ 85.0511287798°.
    public static let maxMercatorLatitude = 85.051128779806592377796715521925

    /// The same limit rounded to six decimals, as mercantile clamps to it and TileJSON
    /// documents write it (85.051129°, a hair beyond the exact limit, so the edge row of
    /// tiles is still covered): tile ranges and the bounds of a map without bounds use it.
    public static let roundedMaxMercatorLatitude = 85.051129

    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// Returns the coordinate when it is valid, otherwise throws naming the bad value and,
    /// when swapping would make it valid, suggesting the swap (`LON,LAT` is easy to reverse).
    public func validated() throws(TileMathError) -> Coordinate {
        guard latitude.isFinite, longitude.isFinite else {
            throw .invalidCoordinate(self, reason: "not a finite number")
        }
        if abs(latitude) > 90 {
            var reason = "latitude \(latitude.shortDescription) is out of range [-90, 90]"
            if abs(longitude) <= 90 {
                reason += "; coordinates are LON,LAT: did you mean \(latitude.shortDescription),\(longitude.shortDescription)?"
            }
            throw .invalidCoordinate(self, reason: reason)
        }
        if abs(longitude) > 180 {
            throw .invalidCoordinate(self, reason: "longitude \(longitude.shortDescription) is out of range [-180, 180]")
        }
        return self
    }

    /// The same place with its longitude wrapped into [-180, 180).
    public var wrapped: Coordinate {
        var lon = (longitude + 180).truncatingRemainder(dividingBy: 360)
        if lon < 0 { lon += 360 }
        return Coordinate(latitude: latitude, longitude: lon - 180)
    }

    public var description: String { "\(longitude.shortDescription),\(latitude.shortDescription)" }

    /// Both degrees at `digits` decimals (`Double.rounded(decimals:)`): 7 is about a centimetre,
    /// what map.json and the game's event lines print.
    public func rounded(decimals digits: Int) -> Coordinate {
        Coordinate(latitude: latitude.rounded(decimals: digits), longitude: longitude.rounded(decimals: digits))
    }
}

extension Double {
    /// The shortest text that reads back as the same value, without a trailing ".0".
    public var shortDescription: String {
        if self == rounded(), abs(self) < 1e15 { return String(Int64(self)) }
        return description
    }

    /// The value at `digits` decimals, rounded as printf rounds the exact binary value, so
    /// it prints with at most those digits; `(value * 1e7).rounded() / 1e7` differs in the
    /// last digit for about 3% of positions, where the multiplication itself rounds.
    /// Zero comes back as 0, never -0.
    public func rounded(decimals digits: Int) -> Double {
        let value = Double(String(format: "%.\(digits)f", self)) ?? self
        return value == 0 ? 0 : value
    }

    var radians: Double { self * .pi / 180 }
    var degrees: Double { self * 180 / .pi }
}
