import CourierCore

/// Turns a response into a value (AFNetworking's response serializers): bytes, text, JSON, a
/// `Decodable`, or your own. Status and `Content-Type` validation is opt-in (`validating`):
/// unconditional content-type failures were AFNetworking's most complained-about default.
public protocol ResponseSerializer: Sendable {
    associatedtype Output: Sendable
    /// The value, or why the response does not make one (a `CourierError` is passed on as it
    /// is; anything else becomes `.responseFormat`).
    func serialize(_ response: Response) throws -> Output
}

/// The body as bytes.
public struct BytesSerializer: ResponseSerializer {
    public init() {}
    public func serialize(_ response: Response) -> [UInt8] { response.body }
}

/// The body as text, in the charset its `Content-Type` names (UTF-8 by default).
public struct StringSerializer: ResponseSerializer {
    public init() {}
    public func serialize(_ response: Response) throws -> String { try response.string() }
}

/// The body as a JSON value.
public struct JSONSerializer: ResponseSerializer {
    public init() {}
    public func serialize(_ response: Response) throws -> JSONValue { try response.json() }
}

/// The body decoded as `T` from JSON, through `CourierJSONDecoder` or any decoding function
/// (`CourierFoundation` adds one taking a `JSONDecoder`).
public struct DecodableSerializer<T: Decodable & Sendable>: ResponseSerializer {
    private let decodeBody: @Sendable (Response) throws -> T

    public init(_ type: T.Type = T.self, decoder: CourierJSONDecoder = CourierJSONDecoder()) {
        self.decodeBody = { response throws(CourierError) in try response.decode(T.self, using: decoder) }
    }

    /// The body decoded by `decode`.
    public init(_ type: T.Type = T.self, decodingWith decode: @escaping @Sendable (Response) throws -> T) {
        self.decodeBody = decode
    }

    public func serialize(_ response: Response) throws -> T { try decodeBody(response) }
}

/// Another serializer behind checks of the status and the media type.
public struct ValidatingSerializer<Base: ResponseSerializer>: ResponseSerializer {
    public let base: Base
    /// Statuses accepted (nil: any).
    public let statuses: Range<Int>?
    /// Media types accepted: exact (`application/json`) or a whole type (`text/*`); nil: any.
    public let contentTypes: [String]?

    public func serialize(_ response: Response) throws -> Base.Output {
        if let statuses, !statuses.contains(response.status) {
            throw CourierError(.httpStatus, "status \(response.status) is outside \(statuses.lowerBound)..<\(statuses.upperBound)",
                               status: response.status).attaching(response)
        }
        if let contentTypes {
            let media = response.headers["Content-Type"].map(Self.mediaType) ?? ""
            guard contentTypes.contains(where: { Self.matches(media, $0.lowercased()) }) else {
                throw CourierError(.unexpectedContentType,
                                   "\(media.isEmpty ? "no Content-Type" : media) (expected \(contentTypes.joined(separator: " or ")))")
            }
        }
        return try base.serialize(response)
    }

    /// `type/subtype` of a field value, lower-cased, without parameters.
    static func mediaType(_ value: String) -> String {
        String((value.split(separator: ";", maxSplits: 1).first ?? "").trimmingSpaces).lowercased()
    }

    static func matches(_ media: String, _ pattern: String) -> Bool {
        if pattern == "*/*" { return !media.isEmpty }
        if pattern.hasSuffix("/*") { return media.hasPrefix(pattern.dropLast()) }
        return media == pattern
    }
}

extension ResponseSerializer {
    /// This serializer, after checking the status (200..<300 by default) and, when given, the
    /// media type.
    public func validating(statuses: Range<Int>? = 200..<300, contentTypes: [String]? = nil) -> ValidatingSerializer<Self> {
        ValidatingSerializer(base: self, statuses: statuses, contentTypes: contentTypes)
    }
}

extension Response {
    /// The response through `serializer`.
    public func serialized<S: ResponseSerializer>(by serializer: S) throws(CourierError) -> S.Output {
        do {
            return try serializer.serialize(self)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(.responseFormat, "\(error)")
        }
    }
}

extension Engine {
    /// Sends `operation` and serializes its response.
    public func send<S: ResponseSerializer>(_ operation: HTTPOperation, as serializer: S) async throws(CourierError) -> S.Output {
        try await send(operation).serialized(by: serializer)
    }
}
