/// curl's URL globbing: `[1-100]`, `[001-100]` (zero-padded), `[a-z]`, `[1-10:2]` (step) and
/// `{one,two}` expand one argument into many URLs, in order; each expansion keeps the values its
/// globs took, for `-o 'file_#1.txt'`. A bracketed IPv6 address (`[::1]`, `[fe80::1%25eth0]`) is
/// not a glob, as in curl. `-g` turns globbing off.
enum URLGlob {
    struct GlobError: Error { var message: String }

    /// One URL of an expansion and the value of each glob in it (`#1` is `values[0]`).
    struct Expansion: Equatable {
        var url: String
        var values: [String]
    }

    /// A parsed argument: literal text and glob choices in turn. Its URLs are made one at a time
    /// (`expansion(at:)`), so a glob of a million URLs holds no million strings.
    struct Pattern {
        enum Segment {
            case literal(String)
            case choices([String])
        }

        var segments: [Segment]
        /// How many URLs it stands for (the product of its globs' sizes).
        var count: Int

        /// The `index`-th URL (the first glob varies slowest, as curl orders them).
        func expansion(at index: Int, values wantsValues: Bool = true) -> Expansion {
            var picks = [Int](repeating: 0, count: segments.count)
            var rest = index
            var length = 0
            for position in segments.indices.reversed() {
                switch segments[position] {
                case .literal(let text):
                    length += text.utf8.count
                case .choices(let choices):
                    picks[position] = rest % choices.count
                    rest /= choices.count
                    length += choices[picks[position]].utf8.count
                }
            }
            var url = ""
            url.reserveCapacity(length)
            var values: [String] = []
            for (position, segment) in segments.enumerated() {
                switch segment {
                case .literal(let text):
                    url += text
                case .choices(let choices):
                    url += choices[picks[position]]
                    if wantsValues { values.append(choices[picks[position]]) }
                }
            }
            return Expansion(url: url, values: values)
        }
    }

    /// Parses `pattern`'s globs.
    static func parse(_ pattern: String) throws(GlobError) -> Pattern {
        var segments: [Pattern.Segment] = []
        var count = 1
        var chars = Substring(pattern)
        var literal = ""
        while let open = chars.firstIndex(where: { $0 == "[" || $0 == "{" }) {
            literal += chars[..<open]
            let closer: Character = chars[open] == "[" ? "]" : "}"
            guard let close = chars[open...].firstIndex(of: closer) else {
                throw GlobError(message: "unmatched \(chars[open]) in URL")
            }
            let inner = String(chars[chars.index(after: open)..<close])
            if closer == "]", isIPv6Literal(inner) {
                literal += chars[open...close]
                chars = chars[chars.index(after: close)...]
                continue
            }
            let choices = closer == "]" ? try range(inner) : inner.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard count * choices.count <= 10_000_000 else { throw GlobError(message: "URL glob expands to too many URLs") }
            count *= choices.count
            if !literal.isEmpty { segments.append(.literal(literal)) }
            segments.append(.choices(choices))
            literal = ""
            chars = chars[chars.index(after: close)...]
        }
        literal += chars
        if !literal.isEmpty { segments.append(.literal(literal)) }
        return Pattern(segments: segments, count: count)
    }

    /// Every URL of `pattern`, in order.
    static func expand(_ pattern: String) throws(GlobError) -> [Expansion] {
        let parsed = try parse(pattern)
        return (0..<parsed.count).map { parsed.expansion(at: $0) }
    }

    /// `-o` names: `#N` is the N-th glob's value in this URL (curl leaves `#N` without such a glob).
    static func outputName(_ template: String, values: [String]) -> String {
        guard template.contains("#") else { return template }
        var out = ""
        var chars = Substring(template)
        while let hash = chars.firstIndex(of: "#") {
            out += chars[..<hash]
            let digits = chars[chars.index(after: hash)...].prefix { $0.isASCII && $0.isNumber }
            if let n = Int(digits), n >= 1, n <= values.count {
                out += values[n - 1]
            } else {
                out += "#" + digits
            }
            chars = chars[digits.endIndex...]
        }
        return out + chars
    }

    /// Whether a bracket's content is an IPv6 address (hex digits, colons, dots for an embedded
    /// IPv4 tail), optionally with a zone id (`%25eth0` or `%eth0`): a host, not a range.
    static func isIPv6Literal(_ inner: String) -> Bool {
        var address = Substring(inner)
        if let percent = address.firstIndex(of: "%") {
            let zone = address[address.index(after: percent)...]
            guard !zone.isEmpty, zone.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._~%".contains($0)) }) else { return false }
            address = address[..<percent]
        }
        return address.contains(":") && address.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
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
