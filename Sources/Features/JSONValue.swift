import Foundation

/// A parsed JSON document, kept as values so loaders can walk it with paths for errors.
public enum JSONValue: Decodable, Hashable, Sendable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let b = try? container.decode(Bool.self) { self = .bool(b) }
        else if let n = try? container.decode(Double.self) { self = .number(n) }
        else if let s = try? container.decode(String.self) { self = .string(s) }
        else if let a = try? container.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    /// "an object", "a string"...: for messages.
    public var kind: String {
        switch self {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }

    /// Parses a document; a syntax error names the line and column. Nesting deeper than
    /// `FeatureLimits.jsonDepth` and numbers beyond a `Double` are refused first (see
    /// `JSONPreflight`), so Foundation only sees documents it can parse within bounded stack.
    public static func parse(_ data: Data, file: String) throws(FeatureError) -> JSONValue {
        try JSONPreflight.check(data, file: file)
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw GeoJSON.syntaxError(data, file: file)
        }
    }

    public var propertyValue: PropertyValue {
        switch self {
        case .object(let o): return .object(o.mapValues(\.propertyValue))
        case .array(let a): return .array(a.map(\.propertyValue))
        case .string(let s): return .string(s)
        case .number(let n): return .number(n)
        case .bool(let b): return .bool(b)
        case .null: return .null
        }
    }
}
