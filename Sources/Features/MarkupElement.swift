import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

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
        self.attributes = attributes
        self.line = line
        self.column = column
    }

    var place: String { "line \(line), column \(column)" }
    var trimmedText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    /// The first child with a name (namespace prefixes ignored).
    func child(_ name: String) -> MarkupElement? { children.first { $0.localName == name } }
    func children(_ name: String) -> [MarkupElement] { children.filter { $0.localName == name } }
    var localName: String { name.split(separator: ":").last.map(String.init) ?? name }

    /// Every descendant with a name, depth first.
    func descendants(_ name: String) -> [MarkupElement] {
        children.flatMap { ($0.localName == name ? [$0] : []) + $0.descendants(name) }
    }

    /// Parses a document; errors carry the line and column where the parser stopped.
    static func parse(_ data: Data, file: String) throws(FeatureError) -> MarkupElement {
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        let ok = parser.parse()
        // On Linux parse() can return true and still set parserError (an unclosed element).
        guard ok, parser.parserError == nil, let root = builder.root, builder.stack.isEmpty else {
            var reason = "malformed XML"
            if let error = parser.parserError as NSError? { reason += " (XMLParser error \(error.code))" }
            if let open = builder.stack.last { reason += ": <\(open.name)> at \(open.place) is never closed" }
            throw FeatureError(file: file, place: "line \(parser.lineNumber), column \(parser.columnNumber)", reason: reason)
        }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: MarkupElement?
        var stack: [MarkupElement] = []

        func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            let node = MarkupElement(name: element, attributes: attributes, line: parser.lineNumber, column: parser.columnNumber)
            if let parent = stack.last { parent.children.append(node) } else if root == nil { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { stack.last?.text += string }
        func parser(_ parser: XMLParser, foundCDATA block: Data) { stack.last?.text += String(decoding: block, as: UTF8.self) }
        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) { _ = stack.popLast() }
    }
}
