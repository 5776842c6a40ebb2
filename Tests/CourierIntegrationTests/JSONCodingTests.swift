import Foundation
import Testing
@testable import Courier
import CourierCore

/// Courier's own JSON coders (no sockets): they must read and write what Foundation's do, so a
/// model moved from JSONDecoder/JSONEncoder keeps working, and fail with a path a caller can use.
@Suite("JSON coders")
struct JSONCodingTests {
    enum Kind: String, Codable, Equatable { case small, large }
    enum Shape: Codable, Equatable { case circle(radius: Double), square(Int), none }

    struct Inner: Codable, Equatable {
        var id: Int64
        var ratio: Double
        var flag: Bool
    }

    struct Model: Codable, Equatable {
        var name: String
        var count: Int
        var big: UInt64
        var negative: Int8
        var single: Float
        var kind: Kind
        var shape: Shape
        var inner: Inner
        var items: [Inner]
        var tags: [String: Int]
        var optional: String?
        var missing: Int?
        var holes: [Int?]
        var nested: [[Bool]]
        var text: String
    }

    static let model = Model(
        name: "café ✓", count: -42, big: .max, negative: -128, single: 0.1, kind: .large,
        shape: .circle(radius: 2.5), inner: Inner(id: 9_007_199_254_740_993, ratio: 1e-7, flag: true),
        items: [Inner(id: 1, ratio: 0.5, flag: false), Inner(id: -2, ratio: 1e300, flag: true)],
        tags: ["a": 1, "b": 2], optional: "here", missing: nil, holes: [1, nil, 3], nested: [[true], [], [false, true]],
        text: "quote \" backslash \\ newline \n tab \t control \u{1} emoji 🙂")

    @Test func roundTripsWithFoundationBothWays() throws {
        let ours = try CourierJSONEncoder().encode(Self.model)
        #expect(try JSONDecoder().decode(Model.self, from: Data(ours)) == Self.model, "Foundation reads what Courier writes")
        let theirs = try JSONEncoder().encode(Self.model)
        #expect(try CourierJSONDecoder().decode(Model.self, from: Array(theirs)) == Self.model, "Courier reads what Foundation writes")
        #expect(try CourierJSONDecoder().decode(Model.self, from: ours) == Self.model)
        // A nil optional is left out, as JSONEncoder does; the large integers are exact.
        let text = String(decoding: ours, as: UTF8.self)
        #expect(!text.contains("missing"))
        #expect(text.contains("18446744073709551615") && text.contains("9007199254740993"))
    }

    @Test func sortedOutputMatchesFoundationByteForByte() throws {
        struct Plain: Codable { var zeta: Int; var alpha: [String]; var mid: Bool?; var nested: [String: Double] }
        let value = Plain(zeta: 1, alpha: ["x", "y"], mid: nil, nested: ["b": 1.5, "a": -0.25])
        let foundation = JSONEncoder()
        foundation.outputFormatting = .sortedKeys
        let ours = try CourierJSONEncoder(sortedKeys: true).encode(value)
        #expect(String(decoding: ours, as: UTF8.self) == String(decoding: try foundation.encode(value), as: UTF8.self))
        #expect(String(decoding: ours, as: UTF8.self) == #"{"alpha":["x","y"],"nested":{"a":-0.25,"b":1.5},"zeta":1}"#)
    }

    struct CamelKeys: Codable, Equatable {
        var userId = 1, baseURLPath = 2, myURL = 3, URLString = 4, simple = 5, _private = 6, trailing_ = 7, a1B2 = 8, x = 9
        var already_snake = 10, HTTP2Enabled = 11, ab1c = 12, a__b = 13, aB = 14, ÉcoleName = 15
    }

    struct SnakeSource: Codable, Equatable {
        var userId = 0, baseUrlPath = 0, _leading = 0, trailing_ = 0, doubleUnder = 0, plain = 0, urlValue = 0
        var x1Y = 0, aBcD = 0, httpStatus = 0
    }

    @Test func keyCaseConversionsMatchFoundation() throws {
        let foundation = JSONEncoder()
        foundation.keyEncodingStrategy = .convertToSnakeCase
        foundation.outputFormatting = .sortedKeys
        let ours = try CourierJSONEncoder(keyEncoding: .convertToSnakeCase, sortedKeys: true).encode(CamelKeys())
        #expect(String(decoding: ours, as: UTF8.self) == String(decoding: try foundation.encode(CamelKeys()), as: UTF8.self))
        #expect(String(decoding: ours, as: UTF8.self).contains(#""base_url_path":2"#))
        #expect(String(decoding: ours, as: UTF8.self).contains(#""u_rl_string":4"#), "Foundation's reading of a leading acronym, kept")

        let document = Array(#"{"user_id":1,"base_url_path":2,"_leading":3,"trailing_":4,"double__under":5,"plain":6,"URL_value":7,"x_1y":8,"a_bC_d":9,"HTTP_Status":10}"#.utf8)
        let fromSnake = JSONDecoder()
        fromSnake.keyDecodingStrategy = .convertFromSnakeCase
        let expected = try fromSnake.decode(SnakeSource.self, from: Data(document))
        #expect(try CourierJSONDecoder(keyDecoding: .convertFromSnakeCase).decode(SnakeSource.self, from: document) == expected)
        #expect(expected.baseUrlPath == 2 && expected.httpStatus == 10, "the comparison compares something")

        struct Account: Codable, Equatable { var userId: Int; var displayName: String }
        let account = try CourierJSONDecoder(keyDecoding: .convertFromSnakeCase).decode(Account.self, from: Array(#"{"user_id":7,"display_name":"Ann"}"#.utf8))
        #expect(account == Account(userId: 7, displayName: "Ann"))
        #expect(String(decoding: try CourierJSONEncoder(keyEncoding: .convertToSnakeCase).encode(account), as: UTF8.self)
                == #"{"user_id":7,"display_name":"Ann"}"#, "members in the order the type encodes them")

        // A dictionary's keys are data: neither coder converts them (nor do Foundation's), while
        // the members of the values inside it still are.
        let byName = ["someKey": Account(userId: 1, displayName: "B")]
        let snakeEncoded = try CourierJSONEncoder(keyEncoding: .convertToSnakeCase).encode(byName)
        #expect(String(decoding: snakeEncoded, as: UTF8.self) == #"{"someKey":{"user_id":1,"display_name":"B"}}"#)
        #expect(try JSONDecoder().decode([String: [String: Int]].self, from: foundation.encode(["someKey": ["innerKey": 1]])) == ["someKey": ["innerKey": 1]])
        #expect(try CourierJSONDecoder(keyDecoding: .convertFromSnakeCase).decode([String: Account].self, from: snakeEncoded) == byName)
    }

    @Test func numbersDecodeOnlyWhenTheyFitExactly() throws {
        let decoder = CourierJSONDecoder()
        func decode<T: Decodable>(_ type: T.Type, _ text: String) throws(CourierError) -> T { try decoder.decode(type, from: Array(text.utf8)) }
        #expect(try decode([Int].self, "[1e3, 2.0, -0, 12]") == [1000, 2, 0, 12])
        #expect(try decode(Int64.self, "9223372036854775807") == .max)
        #expect(try decode(Double.self, "1E-2") == 0.01)
        #expect(try decode(Float.self, "3.5") == 3.5)
        for (type, text) in [(Int.self as any Decodable.Type, "1.5"), (UInt8.self, "300"), (UInt.self, "-1"),
                             (Int64.self, "9223372036854775808"), (Double.self, "1e400"), (Float.self, "1e39")] {
            do {
                _ = try decoder.decode(type, from: JSONValue(parsing: text))
                Issue.record("\(text) decoded as \(type)")
            } catch {
                #expect(error.code == .decodeMismatch && (error.detail ?? "").contains(text), "\(error)")
            }
        }
    }

    @Test func errorsNameThePathAndTheKind() throws {
        struct Item: Decodable { var id: Int; var name: String }
        struct Feed: Decodable { var items: [Item] }
        let decoder = CourierJSONDecoder()
        func failure(_ text: String) -> CourierError? {
            switch Result(catching: { () throws(CourierError) in try decoder.decode(Feed.self, from: Array(text.utf8)) }) {
            case .success: return nil
            case .failure(let error): return error
            }
        }
        let missing = failure(#"{"items":[{"id":1,"name":"a"},{"name":"b"}]}"#)
        #expect(missing?.code == .decodeMismatch && missing?.detail == #"missing key "id" at .items[1]"#, "\(String(describing: missing))")
        let wrongType = failure(#"{"items":[{"id":"1","name":"a"}]}"#)
        #expect(wrongType?.code == .decodeMismatch && wrongType?.detail?.contains("expected Int at .items[0].id: found a string") == true,
                "\(String(describing: wrongType))")
        let null = failure(#"{"items":null}"#)
        #expect(null?.code == .decodeMismatch && null?.detail?.hasPrefix("missing") == true, "\(String(describing: null))")
        let notJSON = failure(#"{"items":[}"#)
        #expect(notJSON?.code == .invalidJSON && notJSON?.detail?.contains("byte 10") == true, "\(String(describing: notJSON))")
        let short = failure(#"{"items":[{"id":1,"name":"a"}]"#)
        #expect(short?.code == .invalidJSON, "\(String(describing: short))")
    }

    @Test func unkeyedContainersReadNullsAndRetryAnElement() throws {
        /// Reads each element as an Int, else as a String: a failed read must not consume it.
        struct Mixed: Decodable, Equatable {
            var values: [String]
            init(values: [String]) { self.values = values }
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                values = []
                while !container.isAtEnd {
                    if try container.decodeNil() { values.append("nil"); continue }
                    if let number = try? container.decode(Int.self) { values.append("#\(number)") } else { values.append(try container.decode(String.self)) }
                }
            }
        }
        #expect(try CourierJSONDecoder().decode(Mixed.self, from: Array(#"[1,"a",null,2]"#.utf8)) == Mixed(values: ["#1", "a", "nil", "#2"]))
        // A repeated member: the last value wins, as in JSONDecoder.
        #expect(try CourierJSONDecoder().decode([String: Int].self, from: Array(#"{"a":1,"a":2}"#.utf8)) == ["a": 2])
    }

    @Test func valuesJSONCannotCarryAreRefused() throws {
        struct Bad: Encodable { var values: [Double] }
        do {
            _ = try CourierJSONEncoder().encode(Bad(values: [1, .nan]))
            Issue.record("NaN was encoded")
        } catch {
            #expect(error.code == .invalidArgument && (error.detail ?? "").contains(".values[1]"), "\(error)")
        }
        #expect(throws: CourierError.self) { try CourierJSONEncoder().encode(Double.infinity) }
        // A type that encodes nothing is an empty object, as JSONEncoder writes it.
        struct Empty: Encodable { func encode(to encoder: any Encoder) throws {} }
        #expect(try CourierJSONEncoder().encode(Empty()) == Array("{}".utf8))
        #expect(try CourierJSONEncoder().encode("top") == Array(#""top""#.utf8))
    }

    @Test func subclassesEncodeTheirSuperUnderSuper() throws {
        class Base: Codable { var a = 1 }
        final class Derived: Base {
            var b = 2
            enum Keys: String, CodingKey { case b }
            override init() { super.init() }
            required init(from decoder: any Decoder) throws {
                b = try decoder.container(keyedBy: Keys.self).decode(Int.self, forKey: .b)
                try super.init(from: try decoder.container(keyedBy: Keys.self).superDecoder())
            }
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(b, forKey: .b)
                try super.encode(to: container.superEncoder())
            }
        }
        let value = Derived()
        value.a = 5
        let ours = try CourierJSONEncoder(sortedKeys: true).encode(value)
        #expect(String(decoding: ours, as: UTF8.self) == #"{"b":2,"super":{"a":5}}"#)
        let back = try CourierJSONDecoder().decode(Derived.self, from: ours)
        #expect(back.a == 5 && back.b == 2)
    }
}
