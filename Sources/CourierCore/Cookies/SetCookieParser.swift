/// A `Set-Cookie` field value read as RFC 6265bis section 5.6 says, before the storage rules
/// (`CookieJar`) decide whether and how it is kept.
package struct SetCookie: Equatable, Sendable {
    package var name: String
    package var value: String
    /// Epoch seconds from Expires (nil when absent or unreadable).
    package var expires: Int64?
    /// Max-Age seconds (nil when absent or malformed); it wins over Expires.
    package var maxAge: Int64?
    /// The Domain attribute, lower-case, leading dot removed; nil when absent or empty.
    package var domain: String?
    /// The Path attribute when it starts with "/"; nil for the default path.
    package var path: String?
    package var secure = false
    package var httpOnly = false
    package var sameSite: String?

    /// Longest name plus value, and longest attribute value (section 5.6).
    static let nameValueLimit = 4096
    static let attributeLimit = 1024

    /// nil when the value must be ignored (control characters, an empty name and value, too long).
    package static func parse(_ field: String) -> SetCookie? {
        let bytes = Array(field.utf8)
        // Section 5.6 step 1: a control character other than HTAB means the whole field is ignored.
        if bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { return nil }
        let pieces = bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        let pair = pieces[0]
        var name: [UInt8] = []
        var value: [UInt8]
        if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
            name = trimmed(pair[pair.startIndex..<equals])
            value = trimmed(pair[(equals + 1)...])
        } else {
            // A nameless cookie: the whole pair is its value.
            value = trimmed(pair[...])
        }
        guard !(name.isEmpty && value.isEmpty), name.count + value.count <= nameValueLimit else { return nil }
        var cookie = SetCookie(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        for attribute in pieces.dropFirst() {
            let equals = attribute.firstIndex(of: UInt8(ascii: "="))
            let key = String(decoding: trimmed(equals.map { attribute[attribute.startIndex..<$0] } ?? attribute[...]), as: UTF8.self).lowercased()
            let raw = equals.map { trimmed(attribute[($0 + 1)...]) } ?? []
            guard raw.count <= attributeLimit else { continue }
            let text = String(decoding: raw, as: UTF8.self)
            switch key {
            case "expires":
                if let date = CookieDate.parse(raw) { cookie.expires = date }
            case "max-age":
                if let seconds = maxAge(raw) { cookie.maxAge = seconds }
            case "domain":
                var domain = text.lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                cookie.domain = domain.isEmpty ? nil : domain
            case "path":
                cookie.path = text.hasPrefix("/") ? text : nil
            case "secure":
                cookie.secure = true
            case "httponly":
                cookie.httpOnly = true
            case "samesite":
                switch text.lowercased() {
                case "strict": cookie.sameSite = "Strict"
                case "lax": cookie.sameSite = "Lax"
                case "none": cookie.sameSite = "None"
                default: cookie.sameSite = nil
                }
            default:
                break
            }
        }
        return cookie
    }

    /// Max-Age: an optional "-" then digits (anything else is ignored); huge values saturate.
    private static func maxAge(_ raw: [UInt8]) -> Int64? {
        var digits = raw[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var total: Int64 = 0
        for digit in digits {
            let (times, o1) = total.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int64(digit - 0x30))
            if o1 || o2 { total = .max; break }
            total = sum
        }
        return negative ? -total : total
    }

    private static func trimmed(_ slice: ArraySlice<UInt8>) -> [UInt8] {
        var view = slice
        while let first = view.first, first == 0x20 || first == 0x09 { view = view.dropFirst() }
        while let last = view.last, last == 0x20 || last == 0x09 { view = view.dropLast() }
        return Array(view)
    }
}

/// The cookie-date algorithm of RFC 6265bis section 5.1.1: tokens in any order, the first that
/// looks like a time, a day of month, a month, a year; lenient as browsers are.
package enum CookieDate {
    package static func parse(_ bytes: [UInt8]) -> Int64? {
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        let isDelimiter: (UInt8) -> Bool = { b in
            b == 0x09 || (b >= 0x20 && b <= 0x2F) || (b >= 0x3B && b <= 0x40) || (b >= 0x5B && b <= 0x60) || (b >= 0x7B && b <= 0x7E)
        }
        for token in bytes.split(whereSeparator: isDelimiter) {
            let text = Array(token)
            if time == nil, let parsed = timeOf(text) { time = parsed; continue }
            if day == nil, let parsed = leadingNumber(text, minDigits: 1, maxDigits: 2) { day = parsed; continue }
            if month == nil, let parsed = monthOf(text) { month = parsed; continue }
            if year == nil, let parsed = leadingNumber(text, minDigits: 2, maxDigits: 4) { year = parsed; continue }
        }
        guard var year, let day, let month, let (hour, minute, second) = time else { return nil }
        if year >= 70 && year <= 99 { year += 1900 }
        if year >= 0 && year <= 69 { year += 2000 }
        guard day >= 1, day <= 31, year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        guard day <= daysIn(month: month, year: year) else { return nil }
        return Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// hh:mm:ss, each one or two digits, anything after allowed.
    private static func timeOf(_ token: [UInt8]) -> (Int, Int, Int)? {
        let parts = token.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let h = leadingNumber(Array(parts[0]), minDigits: 1, maxDigits: 2, whole: true),
              let m = leadingNumber(Array(parts[1]), minDigits: 1, maxDigits: 2, whole: true),
              let s = leadingNumber(Array(parts[2]), minDigits: 1, maxDigits: 2) else { return nil }
        return (h, m, s)
    }

    /// A number of `minDigits`...`maxDigits` digits at the start, followed by a non-digit or
    /// nothing (nothing at all when `whole`).
    private static func leadingNumber(_ token: [UInt8], minDigits: Int, maxDigits: Int, whole: Bool = false) -> Int? {
        let digits = token.prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard digits.count >= minDigits, digits.count <= maxDigits, !whole || digits.count == token.count else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func monthOf(_ token: [UInt8]) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
