import CourierCore

/// Encodes `Encodable` values as JSON without Foundation: `JSONBody`'s encoder.
///
/// Courier's own for the reason `CourierJSONDecoder` is; `CourierFoundation` adds
/// `JSONBody(_:configure:)` with a `JSONEncoder` for its date and data strategies.
///
/// Output is compact UTF-8 JSON; object members keep the order the type encodes them in (or
/// sorted, when asked); integers are written exactly, floating-point numbers in their shortest
/// round-trip form; NaN and infinities, which JSON cannot carry, are an error.
public struct CourierJSONEncoder: Sendable {
    /// How coding keys become object keys.
    public enum KeyEncoding: Sendable, Hashable {
        /// A key is written as the coding key spells it.
        case useDefaultKeys
        /// `userId` is written `user_id` (`JSONEncoder`'s rule).
        case convertToSnakeCase
    }

    /// How coding keys become object keys.
    public var keyEncoding: KeyEncoding
    /// Object members sorted by key (byte order of their UTF-8), for stable output.
    public var sortedKeys: Bool
    /// Handed to every `encode(to:)` as `encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    public init(keyEncoding: KeyEncoding = .useDefaultKeys, sortedKeys: Bool = false,
                userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.keyEncoding = keyEncoding
        self.sortedKeys = sortedKeys
        self.userInfo = userInfo
    }

    /// `value` as JSON text. A value that JSON cannot carry (NaN, infinity) or whose `encode(to:)`
    /// throws is `.invalidArgument` naming the path.
    public func encode<T: Encodable>(_ value: T) throws(CourierError) -> [UInt8] {
        try encodeValue(value).utf8Bytes
    }

    /// `value` as a `JSONValue` tree, for a caller that adds to it before sending.
    public func encodeValue<T: Encodable>(_ value: T) throws(CourierError) -> JSONValue {
        let root = JSONNode()
        do {
            try JSONValueEncoding(root, path: [], options: self).encodeNested(value, into: root, at: [])
        } catch let error as EncodingError {
            throw CourierError(.invalidArgument, "the value cannot be encoded as JSON: \(Self.describe(error))")
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(.invalidArgument, "the value cannot be encoded as JSON: \(error)")
        }
        return root.built(sortedKeys: sortedKeys)
    }

    private static func describe(_ error: EncodingError) -> String {
        switch error {
        case .invalidValue(let value, let context):
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return "\(value) at \(path.isEmpty ? "top level" : path): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

/// What an `encode(to:)` has written so far at one place of the document. Containers are values
/// that must write into their parent, so the tree is built from these shared nodes and turned
/// into a `JSONValue` at the end.
private final class JSONNode {
    enum Content {
        case unset
        case value(JSONValue)
        case object(keys: [String], nodes: [String: JSONNode])
        case array([JSONNode])
    }
    var content: Content = .unset

    init() {}
    init(_ value: JSONValue) { content = .value(value) }

    /// The member node for `key`, made on first use (a repeated key keeps its first position and
    /// its last value, as `JSONEncoder` does).
    func member(_ key: String) -> JSONNode {
        var keys: [String] = []
        var nodes: [String: JSONNode] = [:]
        if case .object(let k, let n) = content { keys = k; nodes = n }
        content = .unset  // keeps the arrays uniquely referenced while they grow
        let node: JSONNode
        if let existing = nodes[key] {
            node = existing
        } else {
            node = JSONNode()
            nodes[key] = node
            keys.append(key)
        }
        content = .object(keys: keys, nodes: nodes)
        return node
    }

    func appendElement() -> JSONNode {
        var elements: [JSONNode] = []
        if case .array(let e) = content { elements = e }
        content = .unset
        let node = JSONNode()
        elements.append(node)
        content = .array(elements)
        return node
    }

    func makeObject() { if case .object = content {} else { content = .object(keys: [], nodes: [:]) } }
    func makeArray() { if case .array = content {} else { content = .array([]) } }

    func built(sortedKeys: Bool) -> JSONValue {
        switch content {
        case .unset: return .object([])  // a type that encoded nothing, as JSONEncoder writes it
        case .value(let value): return value
        case .array(let nodes): return .array(nodes.map { $0.built(sortedKeys: sortedKeys) })
        case .object(let keys, let nodes):
            let ordered = sortedKeys ? keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } : keys
            return .object(ordered.map { (key: $0, value: nodes[$0]!.built(sortedKeys: sortedKeys)) })
        }
    }
}

/// The `Encoder` handed to `encode(to:)`: the node it writes and its place in the document.
private struct JSONValueEncoding: Encoder {
    let node: JSONNode
    let codingPath: [any CodingKey]
    let options: CourierJSONEncoder
    /// The keys written here are a dictionary's, not coding keys: never converted (as
    /// `JSONEncoder` leaves a `[String: T]`'s keys alone).
    var literalKeys = false
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    init(_ node: JSONNode, path: [any CodingKey], options: CourierJSONEncoder) {
        self.node = node
        self.codingPath = path
        self.options = options
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedJSONWriter<Key>(encoding: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedJSONWriter(encoding: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleJSONWriter(encoding: self) }

    func objectKey(_ key: some CodingKey) -> String {
        options.keyEncoding == .convertToSnakeCase && !literalKeys ? JSONKeyCase.snakeCase(fromCamelCase: key.stringValue) : key.stringValue
    }

    func child(_ node: JSONNode, _ key: any CodingKey) -> JSONValueEncoding {
        JSONValueEncoding(node, path: codingPath + [key], options: options)
    }

    static func number<T: BinaryFloatingPoint & LosslessStringConvertible>(_ value: T, _ path: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "JSON has no NaN or infinity"))
        }
        return .number(value.description)
    }

    func encodeNested<T: Encodable>(_ value: T, into target: JSONNode, at path: [any CodingKey]) throws {
        var encoding = JSONValueEncoding(target, path: path, options: options)
        encoding.literalKeys = value is any StringKeyedDictionary
        try value.encode(to: encoding)
    }
}

private struct SingleJSONWriter: SingleValueEncodingContainer {
    let encoding: JSONValueEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }

    private func set(_ value: JSONValue) { encoding.node.content = .value(value) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(try JSONValueEncoding.number(value, codingPath)) }
    mutating func encode(_ value: Float) throws { set(try JSONValueEncoding.number(value, codingPath)) }
    mutating func encode(_ value: Int) throws { set(.number(String(value))) }
    mutating func encode(_ value: Int8) throws { set(.number(String(value))) }
    mutating func encode(_ value: Int16) throws { set(.number(String(value))) }
    mutating func encode(_ value: Int32) throws { set(.number(String(value))) }
    mutating func encode(_ value: Int64) throws { set(.number(String(value))) }
    mutating func encode(_ value: UInt) throws { set(.number(String(value))) }
    mutating func encode(_ value: UInt8) throws { set(.number(String(value))) }
    mutating func encode(_ value: UInt16) throws { set(.number(String(value))) }
    mutating func encode(_ value: UInt32) throws { set(.number(String(value))) }
    mutating func encode(_ value: UInt64) throws { set(.number(String(value))) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encoding.encodeNested(value, into: encoding.node, at: codingPath) }
}

private struct KeyedJSONWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoding: JSONValueEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }

    private func set(_ value: JSONValue, _ key: Key) { encoding.node.member(encoding.objectKey(key)).content = .value(value) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(try JSONValueEncoding.number(value, codingPath + [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(try JSONValueEncoding.number(value, codingPath + [key]), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.number(String(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.number(String(value)), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoding.encodeNested(value, into: encoding.node.member(encoding.objectKey(key)), at: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoding.child(encoding.node.member(encoding.objectKey(key)), key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoding.child(encoding.node.member(encoding.objectKey(key)), key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        encoding.child(encoding.node.member("super"), JSONCodingKey.superKey)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoding.child(encoding.node.member(encoding.objectKey(key)), key)
    }
}

private struct UnkeyedJSONWriter: UnkeyedEncodingContainer {
    let encoding: JSONValueEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }
    var count: Int {
        if case .array(let elements) = encoding.node.content { return elements.count }
        return 0
    }

    private var nextKey: JSONCodingKey { JSONCodingKey(intValue: count) }
    private func append(_ value: JSONValue) { encoding.node.appendElement().content = .value(value) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try JSONValueEncoding.number(value, codingPath + [nextKey])) }
    mutating func encode(_ value: Float) throws { append(try JSONValueEncoding.number(value, codingPath + [nextKey])) }
    mutating func encode(_ value: Int) throws { append(.number(String(value))) }
    mutating func encode(_ value: Int8) throws { append(.number(String(value))) }
    mutating func encode(_ value: Int16) throws { append(.number(String(value))) }
    mutating func encode(_ value: Int32) throws { append(.number(String(value))) }
    mutating func encode(_ value: Int64) throws { append(.number(String(value))) }
    mutating func encode(_ value: UInt) throws { append(.number(String(value))) }
    mutating func encode(_ value: UInt8) throws { append(.number(String(value))) }
    mutating func encode(_ value: UInt16) throws { append(.number(String(value))) }
    mutating func encode(_ value: UInt32) throws { append(.number(String(value))) }
    mutating func encode(_ value: UInt64) throws { append(.number(String(value))) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = nextKey
        try encoding.encodeNested(value, into: encoding.node.appendElement(), at: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = nextKey
        return encoding.child(encoding.node.appendElement(), key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = nextKey
        return encoding.child(encoding.node.appendElement(), key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let key = nextKey
        return encoding.child(encoding.node.appendElement(), key)
    }
}
