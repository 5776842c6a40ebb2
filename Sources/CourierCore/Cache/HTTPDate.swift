import Glibc

/// HTTP dates (RFC 9110 section 5.6.7) as seconds since the Unix epoch, without Foundation.
///
/// The cache reads Date, Expires and Last-Modified on every store and writes If-Modified-Since on
/// revalidation; a calendar library would cost more than the whole lookup. Recipients must accept
/// the two obsolete forms besides IMF-fixdate, and a two-digit RFC 850 year that seems more than
/// 50 years ahead is taken as the past century (section 5.6.7).
package enum HTTPDate {
    private static let months: [[UInt8]] = ["jan", "feb", "mar", "apr", "may", "jun",
                                            "jul", "aug", "sep", "oct", "nov", "dec"].map { Array($0.utf8) }
    private static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    package static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Parses IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), RFC 850 ("Sunday, 06-Nov-94
    /// 08:49:37 GMT") or asctime ("Sun Nov  6 08:49:37 1994"); nil for anything else. `now` (epoch
    /// seconds) resolves RFC 850's two-digit years.
    package static func parse(_ text: String, now: Int64 = 0) -> Int64? {
        var text = text
        return text.withUTF8 { parse(bytes: UnsafeRawBufferPointer($0), now: now) }
    }

    package static func parse(bytes: UnsafeRawBufferPointer, now: Int64 = 0) -> Int64? {
        var scanner = Scanner(bytes)
        scanner.skipSpaces()
        // The day name: letters, then either "," (IMF-fixdate, RFC 850) or a space (asctime).
        guard scanner.skipLetters() >= 3 else { return nil }
        if scanner.take(UInt8(ascii: ",")) {
            scanner.skipSpaces()
            guard let day = scanner.number(maxDigits: 2) else { return nil }
            if scanner.take(UInt8(ascii: "-")) {
                // RFC 850: 06-Nov-94
                guard let month = scanner.month(), scanner.take(UInt8(ascii: "-")),
                      let yy = scanner.number(exactDigits: 2) else { return nil }
                guard let time = scanner.timeOfDay(), scanner.gmt() else { return nil }
                let year = twoDigitYear(yy, now: now)
                return epochSeconds(year: year, month: month, day: day, time: time)
            }
            guard scanner.take(UInt8(ascii: " ")), let month = scanner.month(), scanner.take(UInt8(ascii: " ")),
                  let year = scanner.number(exactDigits: 4), let time = scanner.timeOfDay(), scanner.gmt() else { return nil }
            return epochSeconds(year: year, month: month, day: day, time: time)
        }
        // asctime: "Nov  6 08:49:37 1994"
        guard scanner.take(UInt8(ascii: " ")), let month = scanner.month(), scanner.take(UInt8(ascii: " ")) else { return nil }
        _ = scanner.take(UInt8(ascii: " "))
        guard let day = scanner.number(maxDigits: 2), let time = scanner.timeOfDay(), scanner.take(UInt8(ascii: " ")),
              let year = scanner.number(exactDigits: 4) else { return nil }
        scanner.skipSpaces()
        guard scanner.atEnd else { return nil }
        return epochSeconds(year: year, month: month, day: day, time: time)
    }

    /// IMF-fixdate for epoch seconds: what Courier sends (If-Modified-Since) and generates (a 504's Date).
    package static func format(_ seconds: Int64) -> String {
        let t = fields(seconds)
        let weekday = Int((t.days % 7 + 11) % 7)  // 1970-01-01 was a Thursday
        return "\(dayNames[weekday]), \(two(t.day)) \(monthNames[Int(t.month) - 1]) \(t.year) \(t.clock) GMT"
    }

    /// Epoch seconds as `YYYYMMDD HH:MM:SS` in UTC: curl's stamp in its HSTS and alt-svc files.
    package static func compactStamp(_ seconds: Int64) -> String {
        let t = fields(seconds)
        return t.year + two(t.month) + two(t.day) + " " + t.clock
    }

    /// What both stamps are made of: days since the epoch, the four-digit year (year 0 is
    /// "0000", as parsers demand), month, day and `HH:MM:SS`.
    private static func fields(_ seconds: Int64) -> (days: Int64, year: String, month: Int64, day: Int64, clock: String) {
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let digits = String(year)
        let fourDigitYear = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return (days, fourDigitYear, month, day, "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))")
    }

    private static func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// The epoch seconds of a `YYYYMMDD HH:MM:SS` stamp (UTC); nil for anything else.
    package static func parseCompactStamp(_ text: Substring) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 17, bytes[8] == 0x20, bytes[11] == UInt8(ascii: ":"), bytes[14] == UInt8(ascii: ":") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8), let hour = number(9..<11),
              let minute = number(12..<14), let second = number(15..<17) else { return nil }
        return epochSeconds(year: year, month: month, day: day, time: (hour, minute, second))
    }

    /// The current wall-clock time in epoch seconds (the cache's "now").
    package static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }

    private static func twoDigitYear(_ yy: Int64, now: Int64) -> Int64 {
        // A clock reading outside years 0-9999 (from a damaged file) is taken at the nearer end.
        let clamped = min(max(now, 0), 253_402_300_799)
        let currentYear = civil(fromDays: floorDivide(clamped, 86_400)).year
        var year = currentYear - currentYear % 100 + yy
        if year > currentYear + 50 { year -= 100 }
        return year
    }

    package static func epochSeconds(year: Int64, month: Int64, day: Int64, time: (Int64, Int64, Int64)) -> Int64? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              time.0 < 24, time.1 < 60, time.2 < 61 else { return nil }
        return days(fromCivil: year, month, day) * 86_400 + time.0 * 3600 + time.1 * 60 + min(time.2, 59)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (the era arithmetic of Howard
    /// Hinnant's "chrono-compatible low-level date algorithms").
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// A cursor over the date's bytes.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func skipSpaces() {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        }

        mutating func skipLetters() -> Int {
            let start = index
            while index < bytes.count, (bytes[index] | 0x20) >= UInt8(ascii: "a"), (bytes[index] | 0x20) <= UInt8(ascii: "z") { index += 1 }
            return index - start
        }

        mutating func number(maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            let start = index
            while index < bytes.count, index - start < maxDigits, ByteClass.isDigit(bytes[index]) {
                value = value * 10 + Int64(bytes[index] &- UInt8(ascii: "0"))
                index += 1
            }
            return index > start ? value : nil
        }

        mutating func number(exactDigits: Int) -> Int64? {
            let start = index
            guard let value = number(maxDigits: exactDigits), index - start == exactDigits else { return nil }
            // More digits than the form allows is not this form.
            if index < bytes.count, ByteClass.isDigit(bytes[index]) { return nil }
            return value
        }

        mutating func month() -> Int64? {
            guard index + 3 <= bytes.count else { return nil }
            let candidate = [bytes[index] | 0x20, bytes[index + 1] | 0x20, bytes[index + 2] | 0x20]
            guard let found = HTTPDate.months.firstIndex(of: candidate) else { return nil }
            index += 3
            return Int64(found + 1)
        }

        /// " 08:49:37"
        mutating func timeOfDay() -> (Int64, Int64, Int64)? {
            guard take(UInt8(ascii: " ")), let h = number(exactDigits: 2), take(UInt8(ascii: ":")),
                  let m = number(exactDigits: 2), take(UInt8(ascii: ":")), let s = number(exactDigits: 2) else { return nil }
            return (h, m, s)
        }

        /// " GMT" and nothing after it but whitespace.
        mutating func gmt() -> Bool {
            guard take(UInt8(ascii: " ")), index + 3 <= bytes.count,
                  bytes[index] == UInt8(ascii: "G"), bytes[index + 1] == UInt8(ascii: "M"), bytes[index + 2] == UInt8(ascii: "T") else { return false }
            index += 3
            skipSpaces()
            return atEnd
        }
    }
}
