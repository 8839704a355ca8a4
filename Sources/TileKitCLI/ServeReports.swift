import Foundation
import MapProjects
import Rendering
import TileMath

/// One line of `validate --json`: the file, whether it is sound, each problem by JSON path,
/// and with `--labels` how many named features got a label at each zoom.
struct ValidateReport: Encodable {
    struct Problem: Encodable {
        var path: String
        var message: String
    }

    var file: String
    var ok: Bool
    var problems: [Problem]
    var labels: [LabelPlacementCounts]?
}

/// The line `serve --json` prints once it listens: where, and each map's viewer and tiles.
struct ServeReadyReport: Encodable {
    struct Map: Encodable {
        var name: String
        var viewer: String
        var tiles: String
    }

    var url: String
    var port: Int
    var host: String
    var maps: [Map]
}

extension Encodable {
    /// Compact JSON with sorted keys and unescaped slashes (what the CLI prints), or "" if
    /// the value cannot be encoded (a non-finite number).
    var sortedJSONLine: String { sortedJSONText() ?? "" }
}
