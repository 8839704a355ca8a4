import Foundation
internal import CXML2

/// Reads an XML document into a `MarkupElement` tree with libxml2's SAX2 push parser.
///
/// Hostile files are errors, never traps, and cost bounded work:
/// - no entity substitution (`XML_PARSE_NOENT` is off), and a document that declares an
///   entity is refused at the declaration, before anything can expand ("billion laughs");
/// - no network and no DTD loading (`XML_PARSE_NONET`, no `externalSubset` callback), so a
///   plist's `<!DOCTYPE ... "http://www.apple.com/DTDs/...">` is never fetched;
/// - no `XML_PARSE_HUGE` (libxml2 keeps its built-in size limits);
///   nesting and elements are counted here (`FeatureLimits.xmlDepth`, `.xmlElements`), as
///   the push parser does not limit depth;
/// - invalid UTF-8, bad processing instructions and unclosed tags are libxml2's fatal errors,
///   reported with its line and column.
///
/// The input is pushed in chunks: pushed whole, a 37 MB GPX fails with
/// `XML_ERR_INTERNAL_ERROR` (libxml2 refuses more than 10 MB of look-ahead without
/// `XML_PARSE_HUGE`; Foundation's XMLParser fails so too). Pushing stops at the first
/// error, so garbage is not scanned on.
enum MarkupReader {
    /// Bytes pushed to libxml2 at a time.
    static let chunkBytes = 64 << 10

    /// `maxDepth` and `maxElements` are parameters for tests; callers use the defaults.
    static func parse(_ data: Data, file: String, maxDepth: Int = FeatureLimits.xmlDepth,
                      maxElements: Int = FeatureLimits.xmlElements) throws(FeatureError) -> MarkupElement {
        _ = libraryReady
        let builder = TreeBuilder(file: file, maxDepth: maxDepth, maxElements: maxElements)
        var handler = saxHandler()
        let userData = Unmanaged.passUnretained(builder).toOpaque()
        guard let context = xmlCreatePushParserCtxt(&handler, userData, nil, 0, file) else {
            throw FeatureError(file: file, place: "file", reason: "libxml2 could not create a parser (out of memory?)")
        }
        defer { xmlFreeParserCtxt(context) }
        builder.context = context
        _ = xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))

        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            let base = bytes.bindMemory(to: CChar.self).baseAddress
            var offset = 0
            while builder.failure == nil {
                let count = min(chunkBytes, bytes.count - offset)
                let last = offset + count == bytes.count
                // Int32(count) cannot trap: count <= chunkBytes. The status is not checked:
                // it is also set by errors that do not fail a document (an undeclared
                // namespace prefix); failures arrive through `serror` and `wellFormed`.
                _ = xmlParseChunk(context, base.map { $0 + offset }, Int32(count), last ? 1 : 0)
                if last { break }
                offset += count
            }
        }
        if builder.failure == nil && context.pointee.wellFormed == 0 { builder.failLibxml2(code: context.pointee.errNo) }
        withExtendedLifetime(builder) {}
        return try builder.finish()
    }

    /// libxml2 wants `xmlInitParser` once before threads parse at the same time.
    private static let libraryReady: Void = xmlInitParser()

    /// The SAX2 callbacks: elements, text, and the declarations and references TileKit refuses.
    /// `initialized = XML_SAX2_MAGIC` makes libxml2 call `startElementNs` and `serror`.
    private static func saxHandler() -> xmlSAXHandler {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { userData, localName, prefix, _, _, _, attributeCount, _, attributes in
            TreeBuilder.from(userData)?.start(localName: localName, prefix: prefix, attributeCount: attributeCount, attributes: attributes)
        }
        handler.endElementNs = { userData, _, _, _ in TreeBuilder.from(userData)?.end() }
        handler.characters = { userData, text, length in TreeBuilder.from(userData)?.append(text, length) }
        handler.cdataBlock = { userData, text, length in TreeBuilder.from(userData)?.append(text, length) }
        handler.entityDecl = { userData, name, _, _, _, _ in TreeBuilder.from(userData)?.refuseEntityDeclaration(name) }
        handler.reference = { userData, name in TreeBuilder.from(userData)?.refuseReference(name) }
        handler.serror = { userData, error in TreeBuilder.from(userData)?.record(error) }
        return handler
    }
}

/// Builds the tree from SAX events and keeps the first problem. Lives only for one
/// `MarkupReader.parse` call, on its thread.
private final class TreeBuilder {
    let file: String
    let maxDepth: Int
    let maxElements: Int
    var context: xmlParserCtxtPtr?
    var root: MarkupElement?
    var stack: [MarkupElement] = []
    var elementCount = 0
    /// The first problem: libxml2's or TileKit's own (depth, size, entities).
    var failure: FeatureError?

    init(file: String, maxDepth: Int, maxElements: Int) {
        self.file = file
        self.maxDepth = maxDepth
        self.maxElements = maxElements
    }

    static func from(_ userData: UnsafeMutableRawPointer?) -> TreeBuilder? {
        userData.map { Unmanaged<TreeBuilder>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Where libxml2 is now (the end of the token just read).
    var place: String {
        guard let context else { return "line 1" }
        return "line \(xmlSAX2GetLineNumber(context)), column \(xmlSAX2GetColumnNumber(context))"
    }

    /// Keeps the first problem and halts libxml2 (no more callbacks, no more scanning).
    func stop(_ reason: String, place: String? = nil) {
        if failure == nil { failure = FeatureError(file: file, place: place ?? self.place, reason: reason) }
        if let context { xmlStopParser(context) }
    }

    func start(localName: UnsafePointer<xmlChar>?, prefix: UnsafePointer<xmlChar>?, attributeCount: Int32,
               attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        guard failure == nil, let localName else { return }
        guard stack.count < maxDepth else {
            return stop("elements nested deeper than \(maxDepth) levels (TileKit's limit)")
        }
        guard elementCount < maxElements else {
            return stop("more than \(maxElements) elements (TileKit's limit)")
        }
        elementCount += 1
        let local = String(cString: localName)
        let name = prefix.map { String(cString: $0) + ":" + local } ?? local
        let node = MarkupElement(name: name, attributes: Self.attributes(attributeCount, attributes),
                                 line: context.map { Int(xmlSAX2GetLineNumber($0)) } ?? 1,
                                 column: context.map { Int(xmlSAX2GetColumnNumber($0)) } ?? 1)
        if let parent = stack.last {
            parent.children.append(node)
        } else if root == nil {
            root = node
        }
        stack.append(node)
    }

    /// SAX2 attributes come as 5 pointers each: local name, prefix, URI, value start, value end.
    static func attributes(_ count: Int32, _ values: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) -> [String: String] {
        guard let values, count > 0 else { return [:] }
        var out = [String: String]()
        for index in 0..<Int(count) {
            let field = values + index * 5
            guard let localName = field[0], let start = field[3], let end = field[4], end >= start else { continue }
            let local = String(cString: localName)
            let name = field[1].map { String(cString: $0) + ":" + local } ?? local
            let bytes = UnsafeBufferPointer(start: start, count: end - start)
            let value = String(decoding: bytes, as: UTF8.self)
            // Without entity substitution libxml2 keeps an ampersand as "&#38;" in attribute
            // values (for a tree builder to decode later); decode it here.
            out[name] = bytes.contains(UInt8(ascii: "&")) ? value.replacingOccurrences(of: "&#38;", with: "&") : value
        }
        return out
    }

    func end() {
        guard failure == nil else { return }
        _ = stack.popLast()
    }

    func append(_ text: UnsafePointer<xmlChar>?, _ length: Int32) {
        guard failure == nil, let text, length > 0, let element = stack.last else { return }
        element.text += String(decoding: UnsafeBufferPointer(start: text, count: Int(length)), as: UTF8.self)
    }

    func refuseEntityDeclaration(_ name: UnsafePointer<xmlChar>?) {
        let entity = name.map { String(cString: $0) } ?? ""
        stop("the document declares the entity \"\(entity)\"; entity declarations are refused (they can expand a small file into gigabytes)")
    }

    func refuseReference(_ name: UnsafePointer<xmlChar>?) {
        let entity = name.map { String(cString: $0) } ?? ""
        stop("&\(entity); is not an entity XML defines (only &amp; &lt; &gt; &quot; &apos; and character references are read)")
    }

    /// libxml2's structured errors. Fatal errors (not well-formed) and errors fail the
    /// document; namespace errors (an undeclared `gx:` prefix, common in KML) and warnings
    /// do not, except a reference to an undeclared entity, whose text would silently vanish.
    func record(_ error: xmlErrorPtr?) {
        guard let error = error?.pointee else { return }
        let fatal = error.level == XML_ERR_FATAL
            || (error.level == XML_ERR_ERROR && error.domain != Int32(XML_FROM_NAMESPACE.rawValue))
            || error.code == Int32(XML_WAR_UNDECLARED_ENTITY.rawValue)
        guard fatal, failure == nil else { return }
        let message = error.message.map { String(cString: $0) } ?? "libxml2 error \(error.code)"
        var text = message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; ")
        // At the end of pushed input libxml2 says "Extra content at the end of the document"
        // or "Document is empty" also when the file simply stops: say what happened.
        if error.code == Int32(XML_ERR_DOCUMENT_END.rawValue) || error.code == Int32(XML_ERR_DOCUMENT_EMPTY.rawValue) {
            if let open = stack.last {
                text = "the file ends inside <\(open.name)> (opened at \(open.place))"
            } else if root == nil {
                text = "no XML element found (the file is empty or is not XML)"
            }
        }
        let place = error.line > 0 ? "line \(error.line)" + (error.int2 > 0 ? ", column \(error.int2)" : "") : self.place
        failure = FeatureError(file: file, place: place, reason: "malformed XML: " + text)
    }

    /// A document libxml2 found not well-formed without a fatal error reaching `serror`
    /// (it should not happen; kept so such a document never passes).
    func failLibxml2(code: Int32) {
        failure = FeatureError(file: file, place: place, reason: "malformed XML (libxml2 error \(code))")
    }

    func finish() throws(FeatureError) -> MarkupElement {
        if let failure { throw failure }
        if let open = stack.last {
            throw FeatureError(file: file, place: place, reason: "malformed XML: <\(open.name)> at \(open.place) is never closed")
        }
        guard let root else { throw FeatureError(file: file, place: "line 1", reason: "malformed XML: no root element (the file is empty)") }
        return root
    }
}
