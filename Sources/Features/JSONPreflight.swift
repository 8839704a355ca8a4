import Foundation

/// One pass over a JSON document's bytes before Foundation parses it, refusing what
/// Foundation handles badly or vaguely:
///
/// - arrays and objects nested deeper than `FeatureLimits.jsonDepth`: Foundation's parser
///   and `JSONDecoder` recurse once per level (a `[[[[...` file 100,000 deep would need
///   hundreds of megabytes of stack; Foundation stops at 512, which still needs about 1 MB
///   in a debug build);
/// - numbers a `Double` cannot hold (`1e309` is infinity, `1e-400` rounds to zero), which
///   `JSONDecoder` only reports as "not valid JSON": here the error names the JSON path.
///
/// It is a tokenizer, not a validator: it never fails on bad syntax (Foundation reports
/// that with a line and column), only on the two problems above. Linear time, no recursion.
enum JSONPreflight {
    private struct Container {
        var isObject: Bool
        /// The element index in an array.
        var index = 0
        /// The current member's key in an object, as bytes of the document (escapes kept).
        var key: Range<Int>?
        /// In an object, whether the next string is a key (after `{` or `,`, before `:`).
        var expectingKey: Bool
    }

    static func check(_ data: Data, file: String, maxDepth: Int = FeatureLimits.jsonDepth) throws(FeatureError) {
        let problem = data.withUnsafeBytes { bytes in scan(bytes, file: file, maxDepth: maxDepth) }
        if let problem { throw problem }
    }

    private static func scan(_ bytes: UnsafeRawBufferPointer, file: String, maxDepth: Int) -> FeatureError? {
        var stack = [Container]()
        var line = 1, lineStart = 0
        var i = 0
        let count = bytes.count
        while i < count {
            switch bytes[i] {
            case UInt8(ascii: "\n"):
                line += 1
                lineStart = i + 1
                i += 1
            case UInt8(ascii: "\""):
                let start = i + 1
                i = start
                while i < count, bytes[i] != UInt8(ascii: "\"") {
                    if bytes[i] == UInt8(ascii: "\\") { i += 1 }
                    if i < count, bytes[i] == UInt8(ascii: "\n") { line += 1; lineStart = i + 1 }
                    i += 1
                }
                let end = min(i, count)
                if let last = stack.indices.last, stack[last].isObject, stack[last].expectingKey {
                    stack[last].key = start..<end
                }
                i += 1
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                guard stack.count < maxDepth else {
                    let at = path(stack, bytes, limit: 8)
                    return FeatureError(file: file, place: "line \(line), column \(i - lineStart + 1)",
                                        reason: "arrays and objects nested deeper than \(maxDepth) levels (TileKit's limit for JSON)"
                                            + (at.isEmpty ? "" : ", inside \(at)"))
                }
                let isObject = bytes[i] == UInt8(ascii: "{")
                stack.append(Container(isObject: isObject, expectingKey: isObject))
                i += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                _ = stack.popLast()
                i += 1
            case UInt8(ascii: ","):
                if let last = stack.indices.last {
                    if stack[last].isObject {
                        stack[last].expectingKey = true
                        stack[last].key = nil
                    } else {
                        stack[last].index += 1
                    }
                }
                i += 1
            case UInt8(ascii: ":"):
                if let last = stack.indices.last, stack[last].isObject { stack[last].expectingKey = false }
                i += 1
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let start = i
                while i < count, isNumberByte(bytes[i]) { i += 1 }
                if let reason = numberProblem(UnsafeRawBufferPointer(rebasing: bytes[start..<i])) {
                    let at = path(stack, bytes, limit: nil)
                    return FeatureError(file: file, place: at.isEmpty ? "line \(line), column \(start - lineStart + 1)" : at, reason: reason)
                }
            default:
                i += 1
            }
        }
        return nil
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return true
        default: return false
        }
    }

    /// Why a number token cannot be a `Double`, or nil (also nil for a malformed token,
    /// which Foundation reports).
    private static func numberProblem(_ token: UnsafeRawBufferPointer) -> String? {
        let text = String(decoding: token, as: UTF8.self)
        guard let value = Double(text) else { return nil }
        let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
        if !value.isFinite {
            return "the number \(shown) is too large for a double (beyond ±1.8e308)"
        }
        // A zero from nonzero digits underflowed: JSONDecoder refuses it.
        let mantissa = token.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        if value == 0, mantissa.contains(where: { (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) {
            return "the number \(shown) is too small for a double (it rounds to zero)"
        }
        return nil
    }

    /// The place being read, as the GeoJSON reader writes paths: `features[3].geometry.coordinates[0]`.
    /// With a limit, only the first components (deep paths end with "…").
    private static func path(_ stack: [Container], _ bytes: UnsafeRawBufferPointer, limit: Int?) -> String {
        var out = ""
        for (depth, container) in stack.enumerated() {
            if let limit, depth == limit { return out + "…" }
            if container.isObject {
                guard let key = container.key else { break }
                let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[key]), as: UTF8.self)
                out += (out.isEmpty ? "" : ".") + (name.count > 40 ? name.prefix(40) + "…" : Substring(name))
            } else {
                out += "[\(container.index)]"
            }
        }
        return out
    }
}
