import CourierCore

/// Turns a value into a request body and the `Content-Type` that describes it (AFNetworking's
/// request serializers). Set one with `HTTPOperation.setBody(_:)`; write your own for other formats.
public protocol RequestSerializer: Sendable {
    /// The body, or why it cannot be made.
    func serialize() throws -> SerializedBody
}

/// What a `RequestSerializer` produced.
public struct SerializedBody: Sendable {
    /// The bytes (or file, stream, form) to send.
    public var body: RequestBody
    /// Its type; nil leaves the field to the request.
    public var contentType: String?

    public init(body: RequestBody, contentType: String?) {
        self.body = body
        self.contentType = contentType
    }
}

/// `application/x-www-form-urlencoded` fields in the order given, repeated names kept
/// (`tag=a&tag=b`), encoded as browsers do (space as `+`).
public struct FormFields: RequestSerializer, Hashable {
    /// The fields, in order.
    public var fields: [Field]

    /// One name and value.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Fields in this order.
    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { Field($0.0, $0.1) }
    }

    /// A dictionary's fields, sorted by name (a dictionary has no order of its own).
    public init(_ dictionary: [String: String]) {
        self.init(dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// The encoded text.
    public var encoded: String {
        fields.map { ParameterEncoding.escape($0.name, spaceAsPlus: true) + "=" + ParameterEncoding.escape($0.value, spaceAsPlus: true) }
            .joined(separator: "&")
    }

    public func serialize() -> SerializedBody {
        SerializedBody(body: .bytes(Array(encoded.utf8)), contentType: "application/x-www-form-urlencoded")
    }
}

/// Any `Encodable` as JSON (`application/json`), through Courier's `CourierJSONEncoder` (key
/// case, sorted keys), or through any encoding function (`CourierFoundation` adds one taking a
/// `JSONEncoder` for its date and data strategies).
public struct JSONBody<Value: Encodable & Sendable>: RequestSerializer {
    public let value: Value
    private let encodeValue: @Sendable (Value) throws -> [UInt8]

    public init(_ value: Value, encoder: CourierJSONEncoder = CourierJSONEncoder()) {
        self.value = value
        self.encodeValue = { value throws(CourierError) in try encoder.encode(value) }
    }

    /// `value` encoded by `encode` (whose error becomes `.invalidArgument` saying so).
    public init(_ value: Value, encodingWith encode: @escaping @Sendable (Value) throws -> [UInt8]) {
        self.value = value
        self.encodeValue = encode
    }

    public func serialize() throws -> SerializedBody {
        let bytes: [UInt8]
        do {
            bytes = try encodeValue(value)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(.invalidArgument, "the JSON body cannot be encoded: \(error)")
        }
        return SerializedBody(body: .bytes(bytes), contentType: "application/json")
    }
}

/// Bytes as they are, with the type given (nil: none).
public struct RawBody: RequestSerializer, Hashable {
    public var bytes: [UInt8]
    public var contentType: String?

    public init(_ bytes: [UInt8], contentType: String? = "application/octet-stream") {
        self.bytes = bytes
        self.contentType = contentType
    }

    public func serialize() -> SerializedBody { SerializedBody(body: .bytes(bytes), contentType: contentType) }
}

/// A multipart form (files streamed from disk) serializes to itself; its boundary is the type's.
extension MultipartForm: RequestSerializer {
    public func serialize() -> SerializedBody { SerializedBody(body: .multipart(self), contentType: contentType) }
}

extension HTTPOperation {
    /// Sets the body from `serializer`, with its `Content-Type` unless the request set one.
    /// Throws (before any I/O) what the serializer threw, as a `CourierError`.
    public func setBody(_ serializer: some RequestSerializer) throws(CourierError) {
        let made: SerializedBody
        do {
            made = try serializer.serialize()
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(.invalidArgument, "the body cannot be serialized: \(error)")
        }
        body = made.body
        if let type = made.contentType, !headers.contains("Content-Type") { headers.add(name: "Content-Type", value: type) }
    }
}
