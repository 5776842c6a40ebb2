/// A request conditional on the resource's modification time: curl's `-z/--time-cond` and
/// CURLOPT_TIMECONDITION. A server answers 304 (not modified since) or 412 (modified since) when
/// the condition is not met, and sends nothing it need not.
public enum TimeCondition: Sendable, Hashable {
    /// Only if modified after the time (`If-Modified-Since`; curl's `-z DATE`).
    case modifiedSince(Int64)
    /// Only if not modified after the time (`If-Unmodified-Since`; curl's `-z -DATE`).
    case unmodifiedSince(Int64)
    /// curl's `-z =DATE` (CURL_TIMECOND_LASTMOD): the time as a `Last-Modified` field.
    case lastModified(Int64)

    /// The times an HTTP date can name (years 0000 to 9999), in epoch seconds.
    public static let representable: ClosedRange<Int64> = -62_167_219_200...253_402_300_799

    /// The request field the condition is sent as (the time in epoch seconds, as an HTTP date;
    /// one outside `representable` is sent as its nearest end).
    public var field: (name: String, value: String) {
        let (name, time): (String, Int64)
        switch self {
        case .modifiedSince(let t): (name, time) = ("If-Modified-Since", t)
        case .unmodifiedSince(let t): (name, time) = ("If-Unmodified-Since", t)
        case .lastModified(let t): (name, time) = ("Last-Modified", t)
        }
        return (name, HTTPDate.format(min(max(time, Self.representable.lowerBound), Self.representable.upperBound)))
    }

    /// curl's `-z` argument: `[+|-|=]DATE`, DATE as curl reads dates (`parseDate`), or else a
    /// file whose modification time `modificationTime` gives. nil when it is neither (curl
    /// then warns and sends the request without a condition).
    public init?(curlArgument text: String, modificationTime: (String) -> Int64?) {
        var rest = Substring(text)
        var make: (Int64) -> TimeCondition = TimeCondition.modifiedSince
        switch rest.first {
        case "+": rest = rest.dropFirst()
        case "-": rest = rest.dropFirst(); make = TimeCondition.unmodifiedSince
        case "=": rest = rest.dropFirst(); make = TimeCondition.lastModified
        default: break
        }
        guard let time = Self.parseDate(String(rest)) ?? modificationTime(String(rest)) else { return nil }
        self = make(time)
    }

    /// A date as curl_getdate reads the common forms, in UTC unless a zone is named: HTTP's
    /// three ("Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6
    /// 08:49:37 1994"), and day, month name and year in any order with an optional time and zone
    /// ("06 Nov 1994", "1994 Nov 6 08:49:37", "Sun/Nov/6/94/GMT", "Sat, 11 Sep 2004 21:32:11
    /// +0200"), "20040912 15:05:58 -0700" and ISO's "2004-09-12". nil for anything else.
    public static func parseDate(_ text: String) -> Int64? {
        if let date = HTTPDate.parse(text) { return date }
        var year: Int64?, month: Int64?, day: Int64?, time: (Int64, Int64, Int64)?, zone: Int64 = 0
        var numbers: [Int64] = []
        for token in tokens(text) {
            if let value = Int64(token), token.allSatisfy(\.isWholeNumber) {
                // (A day, a two-digit year, a year, or yyyymmdd: no other number is a date's.)
                guard token.count <= 4 || token.count == 8 else { return nil }
                if token.count == 8 {
                    (year, month, day) = (value / 10_000, value / 100 % 100, value % 100)
                } else if token.count == 4, year == nil {
                    year = value
                } else {
                    numbers.append(value)
                }
            } else if token.contains(":") {
                let parts = token.split(separator: ":").compactMap { Int64($0) }
                guard parts.count >= 2, parts.count <= 3, time == nil else { return nil }
                time = (parts[0], parts[1], parts.count == 3 ? parts[2] : 0)
            } else if (token.first == "+" || token.first == "-"), token.count == 5, let offset = Int64(token.dropFirst()) {
                zone = (token.first == "-" ? -1 : 1) * (offset / 100 * 3600 + offset % 100 * 60)
            } else if let index = HTTPDate.monthNames.firstIndex(where: { token.lowercased().hasPrefix($0.lowercased()) }) {
                month = Int64(index + 1)
            } else if let offset = zones[token.uppercased()] {
                zone = offset * 3600
            } else if !weekdays.contains(where: { token.lowercased().hasPrefix($0) }) {
                return nil
            }
        }
        // The numbers left: with a year, [month,] day (ISO's 2004-09-12); without, day then year.
        if month == nil, year != nil, numbers.count == 2 { (month, numbers) = (numbers[0], [numbers[1]]) }
        if day == nil, let first = numbers.first { day = first; numbers.removeFirst() }
        if year == nil, let last = numbers.first { year = last < 70 ? 2000 + last : (last < 100 ? 1900 + last : last); numbers.removeFirst() }
        guard numbers.isEmpty, let year, let month, let day,
              let local = HTTPDate.epochSeconds(year: year, month: month, day: day, time: time ?? (0, 0, 0)) else { return nil }
        return local - zone
    }

    /// Words and numbers, split at spaces, commas, slashes, dots and the dashes between parts
    /// (a zone's sign stays with it).
    private static func tokens(_ text: String) -> [String] {
        var out: [String] = []
        var current = ""
        for character in text {
            if character == " " || character == "," || character == "/" || character == "." || character == "\t" {
                if !current.isEmpty { out.append(current) }
                current = ""
            } else if character == "-" || character == "+" {
                // A sign starts a zone after a time or an eight-digit date; else a dash splits.
                if !current.isEmpty { out.append(current) }
                let afterTimeOrDate = out.last.map { $0.contains(":") || ($0.count == 8 && $0.allSatisfy(\.isNumber)) } ?? false
                current = character == "+" || afterTimeOrDate ? String(character) : ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    private static let weekdays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    /// The zones curl_getdate names most (hours from UTC).
    private static let zones: [String: Int64] = ["GMT": 0, "UTC": 0, "Z": 0, "UT": 0, "WET": 0, "BST": 1, "CET": 1, "MET": 1,
                                                  "CEST": 2, "EET": 2, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5,
                                                  "MST": -7, "MDT": -6, "PST": -8, "PDT": -7, "JST": 9]
}
