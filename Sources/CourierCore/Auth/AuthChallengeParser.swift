/// The challenges of `WWW-Authenticate` (or `Proxy-Authenticate`) field values (RFC 9110
/// section 11.6.1): `scheme param=value, param="quoted", Other-Scheme ...`, several challenges in
/// one value or across values. A pure reader of untrusted bytes: anything it cannot read ends the
/// value it is in, never the whole field, and nothing is guessed.
package enum AuthChallengeParser {
    /// One challenge: its scheme (lower-cased) and its parameters (names lower-cased, values
    /// unquoted; a token68 is left out).
    package struct Challenge: Equatable {
        package var scheme: String
        package var parameters: [String: String]
    }

    /// Every challenge in `values`, in order.
    package static func challenges(in values: [String]) -> [Challenge] {
        var found: [Challenge] = []
        for value in values { read(Array(value.utf8), into: &found) }
        return found
    }

    private static func read(_ bytes: [UInt8], into found: inout [Challenge]) {
        var index = 0
        var current: Challenge?
        func skip(_ set: (UInt8) -> Bool) { while index < bytes.count, set(bytes[index]) { index += 1 } }
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        while true {
            skip { isSpace($0) || $0 == UInt8(ascii: ",") }
            guard index < bytes.count else { break }
            let start = index
            skip(ByteClass.isToken)
            guard index > start else { break }  // not a token: the rest of this value is unreadable
            let token = String(decoding: bytes[start..<index], as: UTF8.self).lowercased()
            skip(isSpace)
            if index < bytes.count, bytes[index] == UInt8(ascii: "="), current != nil {
                index += 1
                // A token68 ends in "=" runs: "abc==" is no parameter.
                if index < bytes.count, bytes[index] == UInt8(ascii: "=") { skip { $0 == UInt8(ascii: "=") }; continue }
                skip(isSpace)
                guard let value = readValue(bytes, &index) else { break }
                if current!.parameters[token] == nil { current!.parameters[token] = value }
            } else {
                if let current { found.append(current) }
                current = Challenge(scheme: token, parameters: [:])
                // A token68 after the scheme (Negotiate's "YII...==") is passed over: its
                // characters, "=" padding, then the value's end or a comma. Anything else is
                // the start of the parameters.
                let mark = index
                skip(isToken68)
                skip { $0 == UInt8(ascii: "=") }
                skip(isSpace)
                if index < bytes.count, bytes[index] != UInt8(ascii: ",") { index = mark }
            }
        }
        if let current { found.append(current) }
    }

    /// RFC 9110's token68 characters (besides the "=" padding).
    private static func isToken68(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// A token or a quoted-string (backslash escapes undone); nil when neither.
    private static func readValue(_ bytes: [UInt8], _ index: inout Int) -> String? {
        guard index < bytes.count else { return "" }
        guard bytes[index] == UInt8(ascii: "\"") else {
            let start = index
            while index < bytes.count, ByteClass.isToken(bytes[index]) || bytes[index] == UInt8(ascii: "/") { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        index += 1
        var value: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                value.append(bytes[index])
                index += 1
            default: value.append(byte)
            }
        }
        return nil  // an unterminated quoted-string
    }
}
