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
                return String(unsafeUninitializedCapacity: longestValue) { write(at: index, into: $0, offset: 0) }
            case .letters(let first, let step, _):
                return Unicode.Scalar(first + UInt32(index) * step).map { String(Character($0)) } ?? ""
            }
        }

        /// The most UTF-8 bytes one value takes (to size a URL before writing it).
        var longestValue: Int {
            switch self {
            case .list(let values): values.reduce(0) { max($0, $1.utf8.count) }
            case .numbers(_, _, _, let width): max(width, 20)
            case .letters: 4
            }
        }

        /// Writes the value at `index` into `url` at `offset` (at least `longestValue` bytes free)
        /// and returns its length: numbers digit by digit, with no String in between.
        func write(at index: Int, into url: UnsafeMutableBufferPointer<UInt8>, offset: Int) -> Int {
            guard case .numbers(let first, let step, _, let width) = self else {
                var value = value(at: index)
                return value.withUTF8 { bytes in
                    UnsafeMutableBufferPointer(rebasing: url[offset...]).initialize(fromContentsOf: bytes)
                }
            }
            var n = first + index * step
            var digits = 1
            var scale = 10
            while n >= scale, digits < 19 {
                digits += 1
                scale &*= 10
            }
            let length = max(digits, width)
            var position = offset + length
            repeat {
                position -= 1
                url[position] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
            } while n > 0
            while position > offset {
                position -= 1
                url[position] = UInt8(ascii: "0")
            }
            return length
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
        /// The longest URL it makes, in UTF-8 bytes: each is written into a String of that
        /// capacity at once.
        private var longestURL: Int

        init(segments: [Segment], count: Int) {
            self.segments = segments
            self.count = count
            var strides = [Int](repeating: 1, count: segments.count)
            var product = 1
            var longest = 0
            for position in segments.indices.reversed() {
                strides[position] = product
                switch segments[position] {
                case .literal(let text): longest += text.utf8.count
                case .choices(let choices):
                    product *= choices.count
                    longest += choices.longestValue
                }
            }
            self.strides = strides
            self.longestURL = longest
        }

        /// The `index`-th URL, and its globs' values when `wantsValues` (for `-o` names). Written
        /// straight into the String's storage, sized once: appending to a String costs about 300
        /// instructions a piece, and an array of bytes in between an allocation and a copy more.
        func expansion(at index: Int, values wantsValues: Bool = true) -> Expansion {
            var values: [String] = []
            let url = String(unsafeUninitializedCapacity: longestURL) { buffer in
                var length = 0
                for position in segments.indices {
                    switch segments[position] {
                    case .literal(var text):
                        length += text.withUTF8 { UnsafeMutableBufferPointer(rebasing: buffer[length...]).initialize(fromContentsOf: $0) }
                    case .choices(let choices):
                        let pick = (index / strides[position]) % choices.count
                        let written = choices.write(at: pick, into: buffer, offset: length)
                        if wantsValues { values.append(String(decoding: UnsafeBufferPointer(rebasing: buffer[length..<(length + written)]), as: UTF8.self)) }
                        length += written
                    }
                }
                return length
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
            // (`[0-9223372036854775807]` has one value more than an Int counts: refused, not a trap.)
            let (count, overflow) = ((high - low) / step).addingReportingOverflow(1)
            guard !overflow else { throw GlobError(message: "URL glob expands to too many URLs") }
            return .numbers(first: low, step: step, count: count, width: width)
        }
        // (A range across the surrogate code points would name characters that do not exist.)
        if parts[0].count == 1, parts[1].count == 1, let a = parts[0].unicodeScalars.first?.value, let b = parts[1].unicodeScalars.first?.value, a <= b,
           b < 0xD800 || a > 0xDFFF {
            return .letters(first: a, step: UInt32(min(step, Int(UInt32.max))), count: Int((b - a) / UInt32(min(step, Int(UInt32.max)))) + 1)
        }
        throw GlobError(message: "bad range [\(spec)]")
    }
}
