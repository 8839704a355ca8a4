import Foundation

/// Google's encoded polyline format: each latitude and longitude delta, scaled by 10^precision
/// and rounded, zig-zag encoded in 5-bit chunks offset by 63. Precision 5 is Google's; 6 is
/// OSRM's and Valhalla's. See https://developers.google.com/maps/documentation/utilities/polylinealgorithm.
public enum EncodedPolyline {
    public static func encode(_ coordinates: [Coordinate], precision: Int = 5) -> String {
        let factor = pow(10.0, Double(precision))
        var output = [UInt8]()
        var previousLat = 0, previousLon = 0
        for coordinate in coordinates {
            let lat = Int((coordinate.latitude * factor).rounded())
            let lon = Int((coordinate.longitude * factor).rounded())
            append(lat - previousLat, to: &output)
            append(lon - previousLon, to: &output)
            previousLat = lat
            previousLon = lon
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func append(_ delta: Int, to output: inout [UInt8]) {
        var value = delta < 0 ? ~(delta << 1) : delta << 1
        while value >= 0x20 {
            output.append(UInt8((0x20 | (value & 0x1f)) + 63))
            value >>= 5
        }
        output.append(UInt8(value + 63))
    }

    /// Decodes a polyline, throwing an error that names the offset of a bad character or a
    /// truncated value.
    public static func decode(_ text: String, precision: Int = 5) throws(TileMathError) -> [Coordinate] {
        let factor = pow(10.0, Double(precision))
        let bytes = Array(text.utf8)
        var index = 0
        var lat = 0, lon = 0
        var coordinates = [Coordinate]()

        func next() throws(TileMathError) -> Int {
            var result = 0, shift = 0
            while true {
                guard index < bytes.count else {
                    throw .invalidPolyline(text, reason: "truncated value at offset \(index)")
                }
                let byte = Int(bytes[index]) - 63
                guard (0..<64).contains(byte), shift < 60 else {
                    throw .invalidPolyline(text, reason: "unexpected character at offset \(index)")
                }
                index += 1
                result |= (byte & 0x1f) << shift
                shift += 5
                if byte < 0x20 { break }
            }
            return result & 1 != 0 ? ~(result >> 1) : result >> 1
        }

        while index < bytes.count {
            lat += try next()
            guard index < bytes.count else {
                throw .invalidPolyline(text, reason: "latitude without longitude at offset \(index)")
            }
            lon += try next()
            coordinates.append(Coordinate(latitude: Double(lat) / factor, longitude: Double(lon) / factor))
        }
        return coordinates
    }
}
