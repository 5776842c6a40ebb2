import CourierCore

/// The snake_case ⇄ camelCase key conversions of Courier's JSON coders. They follow Foundation's
/// `JSONEncoder`/`JSONDecoder` strategies word for word, quirks included, so a model moved over
/// from Foundation writes and reads the same keys on the wire.
enum JSONKeyCase {
    /// `user_id` → `userId`, `HTTP_status` → `httpStatus`: leading and trailing underscores
    /// stay; the words between underscores are joined, the first lowercased and each later one
    /// capitalized (its first letter upper, the rest lower; a letter after a digit starts a word,
    /// so `x_1y` → `x1Y`). A key with a single word is left as it is.
    static func camelCase(fromSnakeCase key: String) -> String {
        let scalars = Array(key.unicodeScalars)
        guard let first = scalars.firstIndex(where: { $0 != "_" }) else { return key }
        let last = scalars.lastIndex(where: { $0 != "_" })!
        let words = scalars[first...last].split(separator: "_")
        guard words.count > 1 else { return key }
        var out = String.UnicodeScalarView(scalars[..<first])
        out.append(contentsOf: String(String.UnicodeScalarView(words[0])).lowercased().unicodeScalars)
        for word in words.dropFirst() {
            var afterLetter = false
            for scalar in word {
                let isLetter = scalar.properties.isAlphabetic
                out.append(contentsOf: (isLetter && !afterLetter ? String(scalar).uppercased() : String(scalar).lowercased()).unicodeScalars)
                afterLetter = isLetter
            }
        }
        out.append(contentsOf: scalars[(last + 1)...])
        return String(out)
    }

    /// `userId` → `user_id`, `baseURLPath` → `base_url_path`, and, as Foundation writes it,
    /// `URLString` → `u_rl_string`: past the first character, a word ends before each uppercase
    /// letter, and a run of capitals followed by a lowercase letter is a word up to the capital
    /// before that letter. Words are lowercased and joined with underscores; leading and trailing
    /// underscores stay.
    static func snakeCase(fromCamelCase key: String) -> String {
        let scalars = Array(key.unicodeScalars)
        guard let first = scalars.firstIndex(where: { $0 != "_" }) else { return key }
        let end = scalars.lastIndex(where: { $0 != "_" })! + 1
        func isUpper(_ s: Unicode.Scalar) -> Bool {
            s.properties.generalCategory == .uppercaseLetter || s.properties.generalCategory == .titlecaseLetter
        }
        func isLower(_ s: Unicode.Scalar) -> Bool { s.properties.generalCategory == .lowercaseLetter }
        func next(_ test: (Unicode.Scalar) -> Bool, from start: Int) -> Int? {
            (start..<end).first { test(scalars[$0]) }
        }
        var words: [Range<Int>] = []
        var wordStart = first
        var searchFrom = first + 1
        while let upper = next(isUpper, from: searchFrom) {
            words.append(wordStart..<upper)
            guard let lower = next(isLower, from: upper) else {
                wordStart = upper
                break
            }
            if lower == upper + 1 {
                wordStart = upper
            } else {
                words.append(upper..<(lower - 1))
                wordStart = lower - 1
            }
            searchFrom = lower + 1
        }
        words.append(wordStart..<end)
        var out = String.UnicodeScalarView(scalars[..<first])
        for (i, word) in words.enumerated() {
            if i > 0 { out.append("_") }
            out.append(contentsOf: String(String.UnicodeScalarView(scalars[word])).lowercased().unicodeScalars)
        }
        out.append(contentsOf: scalars[end...])
        return String(out)
    }
}

/// Marks `[String: T]`, whose keys are data rather than coding keys: the key strategies leave
/// them as they are (Foundation's coders do the same).
protocol StringKeyedDictionary {}
extension Dictionary: StringKeyedDictionary where Key == String {}
