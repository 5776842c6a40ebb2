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

    /// A glob's values, each made when asked for: `[1-10000000]` holds three numbers, not ten
    /// million strings.
    enum Choices {
        case list([String])
        /// `first`, `first + step`, … (`count` of them), zero-padded to `width` digits.
        case numbers(first: Int, step: Int, count: Int, width: Int)
        /// Single characters from `first`, `step` code points apart.
        case letters(first: UInt32, step: UInt32, count: Int)

        var count: Int {
            switch self {
            case .list(let values): values.count
            case .numbers(_, _, let count, _), .letters(_, _, let count): count
            }
        }

        func value(at index: Int) -> String {
            switch self {
            case .list(let values):
                return values[index]
            case .numbers:
                var digits: [UInt8] = []
                append(at: index, to: &digits)
                return String(decoding: digits, as: UTF8.self)
            case .letters(let first, let step, _):
                return Unicode.Scalar(first + UInt32(index) * step).map { String(Character($0)) } ?? ""
            }
        }

        /// Appends the value at `index` to a URL being built (numbers written digit by digit,
        /// with no String in between).
        func append(at index: Int, to url: inout [UInt8]) {
            guard case .numbers(let first, let step, _, let width) = self else {
                url.append(contentsOf: value(at: index).utf8)
                return
            }
            var n = first + index * step
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: any Int's 19 digits
            var count = 0
            withUnsafeMutableBytes(of: &digits) { buffer in
                repeat {
                    buffer[23 - count] = UInt8(ascii: "0") + UInt8(n % 10)
                    n /= 10
                    count += 1
                } while n > 0
                for _ in count..<max(count, width) { url.append(UInt8(ascii: "0")) }
                url.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
            }
        }
    }

    /// A parsed argument: literal text and glob choices in turn. Its URLs are made one at a time
    /// (`expansion(at:)`), so a glob of a million URLs holds no million strings.
    struct Pattern {
        enum Segment {
            case literal(String)
            case choices(Choices)
        }
        var segments: [Segment]
        /// How many URLs it stands for (the product of its globs' sizes).
        var count: Int
        /// For each segment, how many URLs pass before its glob moves on (the product of the sizes
        /// of the globs after it): the first glob varies slowest, as curl orders them.
        private var strides: [Int]
        /// The literal text's length, to size each URL once.
        private var literalLength: Int

        init(segments: [Segment], count: Int) {
            self.segments = segments
            self.count = count
            var strides = [Int](repeating: 1, count: segments.count)
            var product = 1
            var literalLength = 0
            for position in segments.indices.reversed() {
                strides[position] = product
                switch segments[position] {
                case .literal(let text): literalLength += text.utf8.count
                case .choices(let choices): product *= choices.count
                }
            }
            self.strides = strides
            self.literalLength = literalLength
        }

        /// The `index`-th URL, and its globs' values when `wantsValues` (for `-o` names). Built as
        /// bytes: appending to a String costs about 300 instructions a piece.
        func expansion(at index: Int, values wantsValues: Bool = true) -> Expansion {
            var url: [UInt8] = []
            url.reserveCapacity(literalLength + 8 * (segments.count - 1) + 8)
            var values: [String] = []
            for position in segments.indices {
                switch segments[position] {
                case .literal(let text):
                    url.append(contentsOf: text.utf8)
                case .choices(let choices):
                    let pick = (index / strides[position]) % choices.count
                    if wantsValues {
                        let value = choices.value(at: pick)
                        url.append(contentsOf: value.utf8)
                        values.append(value)
                    } else {
                        choices.append(at: pick, to: &url)
                    }
                }
            }
            return Expansion(url: String(decoding: url, as: UTF8.self), values: values)
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
            let choices = closer == "]" ? try range(inner) : .list(inner.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
            let (total, overflow) = count.multipliedReportingOverflow(by: choices.count)
            guard !overflow, total <= 10_000_000 else { throw GlobError(message: "URL glob expands to too many URLs") }
            count = total
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

    private static func range(_ spec: String) throws(GlobError) -> Choices {
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
            return .numbers(first: low, step: step, count: (high - low) / step + 1, width: width)
        }
        // (A range across the surrogate code points would name characters that do not exist.)
        if parts[0].count == 1, parts[1].count == 1, let a = parts[0].unicodeScalars.first?.value, let b = parts[1].unicodeScalars.first?.value, a <= b,
           b < 0xD800 || a > 0xDFFF {
            return .letters(first: a, step: UInt32(min(step, Int(UInt32.max))), count: Int((b - a) / UInt32(min(step, Int(UInt32.max)))) + 1)
        }
        throw GlobError(message: "bad range [\(spec)]")
    }
}
