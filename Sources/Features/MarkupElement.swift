import Foundation

/// A small XML DOM that remembers where each element starts, so loaders can say
/// "line 12, column 5" about a bad value.
final class MarkupElement {
    let name: String
    let attributes: [String: String]
    let line: Int
    let column: Int
    var children: [MarkupElement] = []
    var text = ""

    init(name: String, attributes: [String: String], line: Int, column: Int) {
        self.name = name
        localName = name.split(separator: ":").last.map(String.init) ?? name
        self.attributes = attributes
        self.line = line
        self.column = column
    }

    var place: String { "line \(line), column \(column)" }
    var trimmedText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// The first child with a name (namespace prefixes ignored).
    func child(_ name: String) -> MarkupElement? { children.first { $0.localName == name } }
    func children(_ name: String) -> [MarkupElement] { children.filter { $0.localName == name } }
    /// The name without its namespace prefix (`gx:Track`: `Track`).
    let localName: String

    /// Every descendant with a name, depth first.
    func descendants(_ name: String) -> [MarkupElement] {
        children.flatMap { ($0.localName == name ? [$0] : []) + $0.descendants(name) }
    }

    /// Parses a document with libxml2 (see `MarkupReader`); errors carry the line and
    /// column where the parser stopped.
    static func parse(_ data: Data, file: String) throws(FeatureError) -> MarkupElement {
        try MarkupReader.parse(data, file: file)
    }

    /// Parses a document whose root must be `<root>` (a GPX or KML file), naming `format`
    /// and the root found when it is not.
    static func parse(_ data: Data, file: String, root name: String, format: String) throws(FeatureError) -> MarkupElement {
        let root = try parse(data, file: file)
        guard root.localName == name else {
            throw FeatureError(file: file, place: root.place, reason: "not a \(format) file (the root is <\(root.name)>, not <\(name)>)")
        }
        return root
    }
}
