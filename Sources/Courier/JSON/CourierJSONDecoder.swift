import CourierCore

/// Decodes `Decodable` values from JSON without Foundation.
///
/// `Response.decode(_:)` and `DecodableSerializer` use it. It is Courier's own so that the library
/// does not load Foundation (2 MiB of every process's resident memory, and its start-up) to read
/// a JSON body; code that wants `JSONDecoder`'s date and data strategies imports
/// `CourierFoundation`, which adds `decode(_:using: JSONDecoder)` and friends.
///
/// Types decode as they do with `JSONDecoder`'s default strategies: numbers into any integer or
/// floating-point type that holds them exactly (`1e3` is a valid `Int`, `1.5` is not), strings,
/// booleans, `null` as nil, arrays, and objects by key.
public struct CourierJSONDecoder: Sendable {
    /// How object keys in the document map to coding keys.
    public enum KeyDecoding: Sendable, Hashable {
        /// A key matches the coding key spelled the same.
        case useDefaultKeys
        /// `user_id` in the document matches the coding key `userId` (`JSONDecoder`'s rule).
        case convertFromSnakeCase
    }

    /// How object keys map to coding keys.
    public var keyDecoding: KeyDecoding
    /// Handed to every `init(from:)` as `decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    public init(keyDecoding: KeyDecoding = .useDefaultKeys, userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.keyDecoding = keyDecoding
        self.userInfo = userInfo
    }

    /// Parses `bytes` as JSON and decodes a `T` from it. A document that is not JSON throws
    /// `.invalidJSON` with the byte offset; one that does not fit `T` throws `.decodeMismatch`
    /// naming the path (`.items[2].id`) and what was expected.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(CourierError) -> T {
        try decode(type, from: try JSONValue(parsing: bytes))
    }

    /// Decodes a `T` from an already parsed document.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws(CourierError) -> T {
        do {
            return try JSONValueDecoding(value, path: [], options: self).decodeNested(type)
        } catch let error as DecodingError {
            throw CourierError(.decodeMismatch, Self.describe(error))
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(.decodeMismatch, "\(error)")
        }
    }

    /// A `DecodingError` in a sentence, with the coding path as a caller would write it.
    package static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return joined.isEmpty ? "top level" : joined
        }
        switch error {
        case .typeMismatch(let type, let context): return "expected \(type) at \(path(context)): \(context.debugDescription)"
        case .valueNotFound(let type, let context): return "missing \(type) value at \(path(context))"
        case .keyNotFound(let key, let context): return "missing key \"\(key.stringValue)\" at \(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription) at \(path(context))"
        @unknown default: return "\(error)"
        }
    }
}

/// The `Decoder` handed to `init(from:)`: one JSON value and where it sits in the document.
private struct JSONValueDecoding: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let options: CourierJSONDecoder
    /// The keys of this object are a dictionary's, not coding keys: never converted (as
    /// `JSONDecoder` leaves a `[String: T]`'s keys alone).
    var literalKeys = false
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    init(_ value: JSONValue, path: [any CodingKey], options: CourierJSONDecoder) {
        self.value = value
        self.codingPath = path
        self.options = options
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw JSONValueDecoding.mismatch([String: Any].self, value, codingPath)
        }
        return KeyedDecodingContainer(KeyedJSONContainer<Key>(members, path: codingPath, options: options, literalKeys: literalKeys))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw JSONValueDecoding.mismatch([Any].self, value, codingPath)
        }
        return UnkeyedJSONContainer(elements, path: codingPath, options: options)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleJSONValue(self) }

    static func mismatch(_ expected: Any.Type, _ found: JSONValue, _ path: [any CodingKey]) -> DecodingError {
        if case .null = found {
            return .valueNotFound(expected, .init(codingPath: path, debugDescription: "found null"))
        }
        return .typeMismatch(expected, .init(codingPath: path, debugDescription: "found \(found.kindName)"))
    }

    // MARK: Scalars (shared by the three containers)

    func decodeBool() throws -> Bool {
        guard case .bool(let b) = value else { throw Self.mismatch(Bool.self, value, codingPath) }
        return b
    }

    func decodeString() throws -> String {
        guard case .string(let s) = value else { throw Self.mismatch(String.self, value, codingPath) }
        return s
    }

    /// An integer type from a number that it holds exactly: `12`, `-3`, `1e3`, `2.0`; `1.5` or
    /// 300 as a `UInt8` are data errors naming the number.
    func decodeInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard case .number(let text) = value else { throw Self.mismatch(T.self, value, codingPath) }
        if let exact = T(text, radix: 10) { return exact }
        if let double = Double(text), double.rounded(.towardZero) == double, let exact = T(exactly: double) { return exact }
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "the number \(text) does not fit in \(T.self)"))
    }

    func decodeFloatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type) throws -> T {
        guard case .number(let text) = value else { throw Self.mismatch(T.self, value, codingPath) }
        guard let parsed = T(text), parsed.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "the number \(text) does not fit in \(T.self)"))
        }
        return parsed
    }

    func decodeNested<T: Decodable>(_ type: T.Type) throws -> T {
        var decoding = self
        decoding.literalKeys = T.self is any StringKeyedDictionary.Type
        return try T(from: decoding)
    }
}

extension JSONValue {
    /// What kind of value this is, for error messages.
    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// A key that is an array index or the `super` of `superDecoder()`.
struct JSONCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue; self.intValue = nil }
    init(intValue: Int) { self.stringValue = "Index \(intValue)"; self.intValue = intValue }
    static let superKey = JSONCodingKey(stringValue: "super")
}

private struct SingleJSONValue: SingleValueDecodingContainer {
    let decoding: JSONValueDecoding
    init(_ decoding: JSONValueDecoding) { self.decoding = decoding }
    var codingPath: [any CodingKey] { decoding.codingPath }

    func decodeNil() -> Bool { decoding.value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try decoding.decodeBool() }
    func decode(_ type: String.Type) throws -> String { try decoding.decodeString() }
    func decode(_ type: Double.Type) throws -> Double { try decoding.decodeFloatingPoint(type) }
    func decode(_ type: Float.Type) throws -> Float { try decoding.decodeFloatingPoint(type) }
    func decode(_ type: Int.Type) throws -> Int { try decoding.decodeInteger(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoding.decodeInteger(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoding.decodeInteger(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoding.decodeInteger(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoding.decodeInteger(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoding.decodeInteger(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoding.decodeInteger(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoding.decodeInteger(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoding.decodeInteger(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoding.decodeInteger(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoding.decodeNested(type) }
}

private struct KeyedJSONContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let codingPath: [any CodingKey]
    let options: CourierJSONDecoder
    /// Members by key (converted when the options say so); a repeated key's last value wins.
    let members: [String: JSONValue]
    /// Keys in document order, for `allKeys`.
    let order: [String]

    init(_ pairs: [(key: String, value: JSONValue)], path: [any CodingKey], options: CourierJSONDecoder, literalKeys: Bool) {
        var members = [String: JSONValue](minimumCapacity: pairs.count)
        var order: [String] = []
        order.reserveCapacity(pairs.count)
        for pair in pairs {
            let key = options.keyDecoding == .convertFromSnakeCase && !literalKeys ? JSONKeyCase.camelCase(fromSnakeCase: pair.key) : pair.key
            if members.updateValue(pair.value, forKey: key) == nil { order.append(key) }
        }
        self.members = members
        self.order = order
        self.codingPath = path
        self.options = options
    }

    var allKeys: [Key] { order.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValueDecoding {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no member \"\(key.stringValue)\""))
        }
        return JSONValueDecoding(value, path: codingPath + [key], options: options)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).value == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try member(key).decodeBool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try member(key).decodeString() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try member(key).decodeFloatingPoint(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try member(key).decodeFloatingPoint(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try member(key).decodeInteger(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try member(key).decodeInteger(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try member(key).decodeInteger(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try member(key).decodeInteger(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try member(key).decodeInteger(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try member(key).decodeInteger(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try member(key).decodeInteger(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try member(key).decodeInteger(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try member(key).decodeInteger(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try member(key).decodeInteger(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try member(key).decodeNested(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try member(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try member(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoding(members["super"] ?? .null, path: codingPath + [JSONCodingKey.superKey], options: options)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoding(members[key.stringValue] ?? .null, path: codingPath + [key], options: options)
    }
}

private struct UnkeyedJSONContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    let options: CourierJSONDecoder
    private(set) var currentIndex = 0

    init(_ elements: [JSONValue], path: [any CodingKey], options: CourierJSONDecoder) {
        self.elements = elements
        self.codingPath = path
        self.options = options
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The next element, consumed only when `read` succeeds (as `JSONDecoder` does, so a caller
    /// may try another type on the same element).
    private mutating func next<T>(_ type: T.Type, _ read: (JSONValueDecoding) throws -> T) throws -> T {
        let key = JSONCodingKey(intValue: currentIndex)
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath + [key], debugDescription: "the array has no more elements"))
        }
        let value = try read(JSONValueDecoding(elements[currentIndex], path: codingPath + [key], options: options))
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any?.self, .init(codingPath: codingPath, debugDescription: "the array has no more elements"))
        }
        if elements[currentIndex] == .null { currentIndex += 1; return true }
        return false
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.decodeBool() } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.decodeString() } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.decodeFloatingPoint(type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.decodeFloatingPoint(type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.decodeInteger(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try $0.decodeNested(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { $0 }
    }
}
