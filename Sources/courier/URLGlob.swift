/// curl's URL globbing: `[1-100]`, `[001-100]` (zero-padded), `[a-z]`, `[1-10:2]` (step) and
/// `{one,two}` expand one argument into many URLs, in order. `-g` turns it off.
enum URLGlob {
    struct GlobError: Error { var message: String }

    static func expand(_ pattern: String) throws(GlobError) -> [String] {
        var results = [""]
        var chars = Substring(pattern)
        while let open = chars.firstIndex(where: { $0 == "[" || $0 == "{" }) {
            let literal = String(chars[..<open])
            results = results.map { $0 + literal }
            let closer: Character = chars[open] == "[" ? "]" : "}"
            guard let close = chars[open...].firstIndex(of: closer) else {
                throw GlobError(message: "unmatched \(chars[open]) in URL")
            }
            let inner = String(chars[chars.index(after: open)..<close])
            let choices = chars[open] == "[" ? try range(inner) : inner.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard results.count * choices.count <= 10_000_000 else { throw GlobError(message: "URL glob expands to too many URLs") }
            results = results.flatMap { prefix in choices.map { prefix + $0 } }
            chars = chars[chars.index(after: close)...]
        }
        return results.map { $0 + chars }
    }

    private static func range(_ spec: String) throws(GlobError) -> [String] {
        var body = Substring(spec)
        var step = 1
        if let colon = body.firstIndex(of: ":") {
            guard let s = Int(body[body.index(after: colon)...]), s > 0 else { throw GlobError(message: "bad step in [\(spec)]") }
            step = s
            body = body[..<colon]
        }
        let parts = body.split(separator: "-", maxSplits: 1)
        guard parts.count == 2 else { throw GlobError(message: "bad range [\(spec)]") }
        if let low = Int(parts[0]), let high = Int(parts[1]), low <= high {
            let width = parts[0].hasPrefix("0") && parts[0].count > 1 ? parts[0].count : 0
            return stride(from: low, through: high, by: step).map { n in
                let digits = String(n)
                return digits.count < width ? String(repeating: "0", count: width - digits.count) + digits : digits
            }
        }
        if parts[0].count == 1, parts[1].count == 1, let a = parts[0].unicodeScalars.first?.value, let b = parts[1].unicodeScalars.first?.value, a <= b {
            return stride(from: a, through: b, by: step).compactMap { Unicode.Scalar($0).map { String(Character($0)) } }
        }
        throw GlobError(message: "bad range [\(spec)]")
    }
}
