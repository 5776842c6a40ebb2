/// JSON for people: OCNet's `OCNetPrintDecodeJSON`, which logs a response's JSON indented and with
/// its text readable (Chinese, emoji and accents as themselves, never as `\u` escapes).
extension JSONValue {
    /// Indented JSON text: `indent` spaces per level, one member or element per line, `"key": value`,
    /// members in document order, numbers as written, empty containers as `{}` and `[]`; strings
    /// escape only quotes, backslashes and control characters. For logs and debugging: the compact
    /// `description` is what goes over the wire.
    ///
    /// ```swift
    /// print(try response.json().prettyPrinted())
    /// ```
    public func prettyPrinted(indent: Int = 2) -> String {
        var out = ""
        writePretty(to: &out, level: 0, indent: max(0, indent))
        return out
    }

    private func writePretty(to out: inout String, level: Int, indent: Int) {
        switch self {
        case .array(let elements) where !elements.isEmpty:
            out += "["
            for (i, element) in elements.enumerated() {
                out += i > 0 ? ",\n" : "\n"
                Self.pad(&out, level + 1, indent)
                element.writePretty(to: &out, level: level + 1, indent: indent)
            }
            out += "\n"
            Self.pad(&out, level, indent)
            out += "]"
        case .object(let members) where !members.isEmpty:
            out += "{"
            for (i, member) in members.enumerated() {
                out += i > 0 ? ",\n" : "\n"
                Self.pad(&out, level + 1, indent)
                JSONValue.writeString(member.key, to: &out)
                out += ": "
                member.value.writePretty(to: &out, level: level + 1, indent: indent)
            }
            out += "\n"
            Self.pad(&out, level, indent)
            out += "}"
        case .null, .bool, .number, .string, .array, .object:
            out += description
        }
    }

    private static func pad(_ out: inout String, _ level: Int, _ indent: Int) {
        out += String(repeating: " ", count: level * indent)
    }
}
