import CourierCore

/// A JSON document as a Swift value, parsed without Foundation.
///
/// `Response.json()` returns this when the caller wants to look around a document rather than
/// decode it into a type (`Response.decode(_:)` does that). Numbers keep their text form when they
/// would lose precision as a `Double`, so large integer IDs survive a round trip.
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
    /// `null`
    case null
    /// `true` / `false`
    case bool(Bool)
    /// A number, as written in the document.
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; keys keep document order.
    case object([(key: String, value: JSONValue)])

    /// The member named `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Element `index` of an array, or nil.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string value, or nil.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The number as a Double, or nil.
    public var doubleValue: Double? { if case .number(let n) = self { return Double(n) }; return nil }
    /// The number as an Int when it is an exact integer, or nil.
    public var intValue: Int? { if case .number(let n) = self { return Int(n) }; return nil }
    /// The Bool value, or nil.
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    /// The elements of an array, or nil.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y || (Double(x) != nil && Double(x) == Double(y))
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }

    /// Compact JSON text.
    public var description: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Serializes as compact JSON.
    public var utf8Bytes: [UInt8] { Array(description.utf8) }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let elements):
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(member.key, to: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    /// `s` as a JSON string literal (quotes, escapes), appended to `out` (also `courier -w`'s).
    package static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// Parses a complete JSON text (RFC 8259). Errors are `.invalidJSON` with the byte offset.
    public init(parsing bytes: [UInt8]) throws(CourierError) {
        var parser = JSONParser(bytes: bytes)
        self = try parser.parseDocument()
    }

    /// Parses a complete JSON text from a string.
    public init(parsing text: String) throws(CourierError) {
        try self.init(parsing: Array(text.utf8))
    }
}

/// A recursive-descent JSON parser with a depth limit, so hostile nesting cannot blow the stack.
private struct JSONParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    static let maxDepth = 512

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws(CourierError) -> JSONValue {
        // A UTF-8 byte order mark is tolerated (RFC 8259 section 8.1 allows ignoring it).
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    func fail(_ reason: String) -> CourierError {
        CourierError(.invalidJSON, "\(reason) at byte \(index)")
    }

    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    mutating func parseValue() throws(CourierError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character \"\(Character(Unicode.Scalar(bytes[index])))\"")
        }
    }

    mutating func expect(_ word: StaticString) throws(CourierError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("unexpected end") }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] { throw fail("invalid literal") }
        index += count
    }

    mutating func parseObject() throws(CourierError) -> JSONValue {
        depth += 1
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected \":\"") }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end in object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw fail("expected \",\" or \"}\"")
        }
    }

    mutating func parseArray() throws(CourierError) -> JSONValue {
        depth += 1
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end in array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw fail("expected \",\" or \"]\"")
        }
    }

    mutating func parseNumber() throws(CourierError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid fraction") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    mutating func parseString() throws(CourierError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var runStart = index
        var text = ""
        while true {
            guard index < bytes.count else { throw fail("unterminated string") }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                text += try validUTF8(runStart, index)
                index += 1
                text.unicodeScalars.append(contentsOf: scalars)
                return text
            }
            if b < 0x20 { throw fail("control character in string") }
            if b == UInt8(ascii: "\\") {
                text += try validUTF8(runStart, index)
                text.unicodeScalars.append(contentsOf: scalars)
                scalars = String.UnicodeScalarView()
                index += 1
                guard index < bytes.count else { throw fail("unterminated escape") }
                switch bytes[index] {
                case UInt8(ascii: "\""): text += "\""
                case UInt8(ascii: "\\"): text += "\\"
                case UInt8(ascii: "/"): text += "/"
                case UInt8(ascii: "b"): text += "\u{8}"
                case UInt8(ascii: "f"): text += "\u{c}"
                case UInt8(ascii: "n"): text += "\n"
                case UInt8(ascii: "r"): text += "\r"
                case UInt8(ascii: "t"): text += "\t"
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\\"), bytes[index + 2] == UInt8(ascii: "u") else {
                            throw fail("lone surrogate")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("invalid surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(code) {
                        throw fail("lone surrogate")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid escape") }
                    text.unicodeScalars.append(scalar)
                default:
                    throw fail("invalid escape")
                }
                index += 1
                runStart = index
                continue
            }
            index += 1
        }
    }

    mutating func hex4() throws(CourierError) -> UInt32 {
        guard index + 4 < bytes.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for i in 1...4 {
            let b = bytes[index + i]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
        }
        index += 4
        return value
    }

    func validUTF8(_ start: Int, _ end: Int) throws(CourierError) -> String {
        guard start < end else { return "" }
        guard let s = String(validating: bytes[start..<end], as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
        return s
    }
}
