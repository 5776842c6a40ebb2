import Courier
import CourierCore
import Foundation

// Foundation's JSONDecoder and JSONEncoder where Courier's own coders lack a strategy: dates
// (ISO 8601, epoch seconds, a formatter), Data as base64, pretty printing. Courier itself decodes
// and encodes with `CourierJSONDecoder`/`CourierJSONEncoder`, so a program that needs none of
// these never loads Foundation.

extension Response {
    /// The body decoded as JSON into `type` by `decoder`. The errors are those of
    /// `decode(_:)`: `.invalidJSON` for a body that is not JSON, `.decodeMismatch` with the path.
    public func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder) throws(CourierError) -> T {
        do {
            return try decoder.decode(type, from: Data(body))
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                throw CourierError(.invalidJSON, CourierJSONDecoder.describe(error))
            }
            throw CourierError(.decodeMismatch, CourierJSONDecoder.describe(error))
        } catch {
            throw CourierError(.decodeMismatch, "\(error)")
        }
    }
}

extension JSONBody {
    /// `value` encoded by a `JSONEncoder` that `configure` sets up (date and key strategies,
    /// formatting).
    public init(_ value: Value, configure: @escaping @Sendable (JSONEncoder) -> Void) {
        self.init(value, encodingWith: { value in
            let encoder = JSONEncoder()
            configure(encoder)
            return Array(try encoder.encode(value))
        })
    }
}

extension DecodableSerializer {
    /// The body decoded by a `JSONDecoder` that `configure` sets up.
    public init(_ type: T.Type = T.self, configure: @escaping @Sendable (JSONDecoder) -> Void) {
        self.init(type, decodingWith: { response in
            let decoder = JSONDecoder()
            configure(decoder)
            return try response.decode(T.self, using: decoder)
        })
    }
}
