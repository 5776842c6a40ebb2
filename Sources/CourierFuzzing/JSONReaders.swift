import Courier

/// A JSON response body through `JSONValue(parsing:)` and `CourierJSONDecoder`, the way
/// `Response.json()` and `decode(_:)` read one from a server. Invariants: only `.invalidJSON` or
/// `.decodeMismatch` ever comes out; a document that parses re-parses from its own serialization
/// to the same value; decoding as a nested model and re-encoding it gives a document that decodes
/// to the same model (under both key strategies); the parser's depth limit holds (no stack
/// overflow on deep nesting).
package enum JSONReading {
    struct Leaf: Codable, Equatable {
        var id: Int64?
        var name: String?
        var ratio: Double?
        var small: UInt8?
        var flag: Bool?
        var tags: [String]?
        var userId: Int?
    }

    indirect enum Tree: Codable, Equatable {
        case leaf(Leaf)
        case list([Tree?])
        case map([String: Tree])
    }

    struct Document: Codable, Equatable {
        var leaf: Leaf?
        var items: [Leaf]?
        var tree: Tree?
        var numbers: [Double]?
    }

    package static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            precondition(error.code == .invalidJSON, "the parser failed with \(error.code)")
            return
        }
        do {
            let again = try JSONValue(parsing: value.utf8Bytes)
            precondition(again == value, "a document did not survive its own serialization")
        } catch {
            preconditionFailure("the parser refused its own output: \(error)")
        }
        for keys in [CourierJSONDecoder.KeyDecoding.useDefaultKeys, .convertFromSnakeCase] {
            let decoder = CourierJSONDecoder(keyDecoding: keys)
            let encoder = CourierJSONEncoder(keyEncoding: keys == .useDefaultKeys ? .useDefaultKeys : .convertToSnakeCase)
            roundTrip(Document.self, value, decoder, encoder)
            roundTrip(Tree.self, value, decoder, encoder)
            roundTrip([String: Leaf].self, value, decoder, encoder)
        }
    }

    private static func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ value: JSONValue, _ decoder: CourierJSONDecoder,
                                                         _ encoder: CourierJSONEncoder) {
        let decoded: T
        do {
            decoded = try decoder.decode(type, from: value)
        } catch {
            precondition(error.code == .decodeMismatch, "decoding failed with \(error.code)")
            return
        }
        do {
            let again = try decoder.decode(type, from: try encoder.encode(decoded))
            precondition(again == decoded, "a decoded value did not survive encoding")
        } catch {
            // A Double read from the document is finite, so nothing decoded is unencodable.
            preconditionFailure("a decoded value could not be encoded again: \(error)")
        }
    }
}
