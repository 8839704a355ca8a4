import Foundation
import TileMath

/// The map.json `tilekit init` writes, kept as ordered keys with a note each, so the same
/// list becomes the file (keys in a reading order, one layer a line) and its README. The
/// order is for people, so it is laid out here; every value is written by the one JSON
/// writer (`sortedJSONText`).
struct ProjectDocument {
    struct Entry {
        var key: String
        /// The value as JSON text.
        var json: String
        /// What the key does, for the README.
        var note: String

        init(_ key: String, _ value: some Encodable, _ note: String) {
            self.key = key
            self.json = ProjectDocument.text(value)
            self.note = note
        }
    }

    /// A value as compact JSON; "null" for a number that is not finite (init's values are
    /// checked coordinates and zooms, so this does not happen).
    static func text(_ value: some Encodable) -> String { value.sortedJSONText() ?? "null" }

    /// `[longitude, latitude]` to 7 decimals (about a centimetre).
    static func position(_ c: Coordinate) -> [Double] {
        let r = c.rounded(decimals: 7)
        return [r.longitude, r.latitude]
    }

    /// `[west, south, east, north]` to 7 decimals.
    static func box(_ b: BoundingBox) -> [Double] { [b.west, b.south, b.east, b.north].map { $0.rounded(decimals: 7) } }

    var map = [Entry]()
    var layers = [ProjectLayer]()
    var game: Entry?
    /// Where the project's files came from, one README line each.
    var sources = [String]()

    var json: String {
        var lines = map.map { "  \(Self.text($0.key)): \($0.json)" }
        let layerLines = layers.map { layer in
            "    {" + ([("id", Self.text(layer.id))] + layer.entries.map { ($0.key, $0.json) })
                .map { "\(Self.text($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
        }
        lines.append("  \"layers\": [\n" + layerLines.joined(separator: ",\n") + "\n  ]")
        if let game { lines.append("  \"game\": \(game.json)") }
        return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
    }

    func readme(name: String, title: String) -> String {
        var text = """
        # \(title)

        A map project made by `tilekit init`. Serve it and open the viewer:

            tilekit serve map.json
            # then http://127.0.0.1:8080/maps/\(name)/

        `tilekit validate map.json` checks it after an edit (every problem with its JSON path);
        the server's start page (http://127.0.0.1:8080/) shows the lines that put this map into
        an iOS, Android or web app.

        ## map.json, key by key


        """
        for entry in map { text += "- `\(entry.key)`: `\(entry.json)`: \(entry.note).\n" }
        text += "- `layers`: bottom to top. The viewer shows the first visible base layer under every visible overlay.\n"
        for layer in layers {
            text += "  - `\(layer.id)`: \(layer.about).\n"
            text += "    - `id`: its name in URLs (/maps/\(name)/layers/\(layer.id)/{z}/{x}/{y}.png).\n"
            for entry in layer.entries { text += "    - `\(entry.key)`: `\(entry.json)`: \(entry.note).\n" }
        }
        if let game { text += "- `game`: \(game.note).\n" }
        if !sources.isEmpty {
            text += "\n## The files\n\n" + sources.map { "- \($0)\n" }.joined()
        }
        text += """

        Other keys a map may have: `attribution`, `missing-tile` (204 or 404), `cors`; a layer's
        `minzoom`/`maxzoom`, `native-minzoom`, `fallback`, `replaces-base`, `max-age`, `format`,
        and `remote` layers (a URL template of a tile server with its `cache` and `user-agent`).
        TileKit's README describes each.

        """
        return text
    }
}

/// One layer of the map.json `init` writes.
struct ProjectLayer {
    var id: String
    /// What it shows, for the README.
    var about: String
    var entries: [ProjectDocument.Entry]
}
