import Foundation
import TileMath
import TileSources

/// Parsers for command-line values; each error names the value and what was expected.
enum Parse {
    static func number(_ text: String, _ what: String) throws(CLIError) -> Double {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else {
            throw .usage("\(what) \"\(text)\" is not a number")
        }
        return value
    }

    static func zoom(_ text: String) throws(CLIError) -> Int {
        guard let zoom = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw .usage("zoom \"\(text)\" is not a whole number")
        }
        guard (0...TileID.maxZoom).contains(zoom) else {
            throw .usage("zoom \(zoom) is out of range [0, \(TileID.maxZoom)]")
        }
        return zoom
    }

    static func count(_ text: String, _ what: String, _ range: ClosedRange<Int>) throws(CLIError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw .usage("\(what) \"\(text)\" is not a whole number in \(range.lowerBound)...\(range.upperBound == Int.max ? "" : String(range.upperBound))")
        }
        return value
    }

    /// Repeated `--var NAME=VALUE` options → template variables.
    static func variables(_ assignments: [String]) throws(CLIError) -> [String: String] {
        var variables = [String: String]()
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw .usage("--var \"\(assignment)\" is not NAME=VALUE")
            }
            variables[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return variables
    }

    static func optionalZoom(_ text: String?) throws(CLIError) -> Int? {
        guard let text else { return nil }
        return try zoom(text)
    }

    static func scheme(_ text: String?) throws(CLIError) -> TileScheme? {
        guard let text else { return nil }
        guard let scheme = TileScheme(rawValue: text.lowercased()) else { throw .usage("scheme \"\(text)\" is not xyz or tms") }
        return scheme
    }

    /// `Z` or `A-B` (inclusive).
    static func zoomRange(_ text: String) throws(CLIError) -> ClosedRange<Int> {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2, !parts[0].isEmpty {
            let low = try zoom(String(parts[0])), high = try zoom(String(parts[1]))
            guard low <= high else { throw .usage("zoom range \(text): \(low) is greater than \(high)") }
            return low...high
        }
        let single = try zoom(text)
        return single...single
    }

    /// `LON,LAT` (GeoJSON order) or two whitespace-separated numbers.
    static func coordinate(_ text: String) throws(CLIError) -> Coordinate {
        let parts = text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
        guard parts.count == 2 else {
            throw .usage("coordinate \"\(text)\" is not LON,LAT")
        }
        return try coordinate(lon: String(parts[0]), lat: String(parts[1]))
    }

    static func coordinate(lon: String, lat: String) throws(CLIError) -> Coordinate {
        let coordinate = Coordinate(latitude: try number(lat, "latitude"), longitude: try number(lon, "longitude"))
        do {
            return try coordinate.validated()
        } catch {
            throw .usage(error.description)
        }
    }

    /// `W,S,E,N` in degrees; south must not exceed north; west may exceed east (antimeridian).
    static func boundingBox(_ text: String) throws(CLIError) -> BoundingBox {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else { throw .usage("bounding box \"\(text)\" is not W,S,E,N") }
        let names = ["west", "south", "east", "north"]
        var values = [Double]()
        for (name, part) in zip(names, parts) { values.append(try number(String(part), name)) }
        let box = BoundingBox(west: values[0], south: values[1], east: values[2], north: values[3])
        do {
            return try box.validated()
        } catch {
            throw .usage("bounding box \(text): \(error.description)")
        }
    }

    static func tile(_ text: String) throws(CLIError) -> TileID {
        do {
            return try TileID(parsing: text.trimmingCharacters(in: .whitespaces))
        } catch {
            throw .usage(error.description)
        }
    }
}
