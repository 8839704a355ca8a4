/// An optional property that an `Encodable` type writes as JSON `null` when absent, where the
/// synthesized encoding would leave the key out: for outputs whose readers expect every key
/// (`tilekit info`'s `"attribution": null`). Decoding is not needed: these are outputs.
@propertyWrapper
public struct NullIfAbsent<Value: Encodable>: Encodable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension NullIfAbsent: Sendable where Value: Sendable {}
extension NullIfAbsent: Equatable where Value: Equatable {}
