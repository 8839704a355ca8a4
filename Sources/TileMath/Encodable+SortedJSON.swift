public import Foundation

extension Encodable {
    /// The value as JSON with its keys sorted by UTF-8 code units, plus any other
    /// `formatting`; throws `EncodingError` for a number that is not finite. Sorted, so the
    /// same value always writes the same bytes (without `.sortedKeys`, Foundation on Linux
    /// orders keys as its dictionaries happen to). TileKit's one way of writing JSON.
    public func sortedJSON(_ formatting: JSONEncoder.OutputFormatting = []) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = formatting.union(.sortedKeys)
        return try encoder.encode(self)
    }

    /// `sortedJSON` as text, with slashes left unescaped (what TileKit prints and streams),
    /// plus any other `formatting` (`.prettyPrinted`); nil when a number is not finite.
    public func sortedJSONText(_ formatting: JSONEncoder.OutputFormatting = []) -> String? {
        (try? sortedJSON(formatting.union(.withoutEscapingSlashes))).map { String(decoding: $0, as: UTF8.self) }
    }
}
