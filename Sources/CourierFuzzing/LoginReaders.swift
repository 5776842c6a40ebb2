import CourierCore

/// What servers and users' files hand the login and HSTS code: `WWW-Authenticate` values (the
/// challenges read, the Digest one chosen and answered), `.netrc` files, HSTS files and
/// `Strict-Transport-Security` values. Input: a selector byte, then the text. Invariants: nothing
/// traps; a chosen Digest challenge has a realm and a nonce and its answer is one line; a
/// `.netrc` either is refused with `.netrcSyntax` or answers lookups with entries it holds; an
/// HSTS store never notes an IP address nor keeps an entry that is not a known host's.
package enum LoginReading {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard let selector = input.first else { return }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: input[1...]), as: UTF8.self)
        switch selector % 3 {
        case 0: challenges(text)
        case 1: netrc(text)
        default: hsts(text)
        }
    }

    private static func challenges(_ text: String) {
        let values = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        _ = AuthChallengeParser.challenges(in: values)
        guard let challenge = DigestChallenge.best(in: values) else { return }
        precondition(!challenge.nonce.isEmpty, "a Digest challenge without a nonce was chosen")
        let answer = challenge.answer(DigestLogin(user: "u", password: "p"), method: "GET", uri: "/", cnonce: "c")
        precondition(answer.hasPrefix("Digest ") && !answer.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                     "an answer with a control character: \(answer.debugDescription)")
    }

    private static func netrc(_ text: String) {
        let parsed: Netrc
        do {
            parsed = try Netrc(parsing: text)
        } catch {
            precondition(error.code == .netrcSyntax, "a .netrc refused with \(error.code)")
            return
        }
        for entry in parsed.entries {
            guard let machine = entry.machine, let found = parsed.credentials(forHost: machine) else { continue }
            precondition(parsed.entries.contains { $0.login == found.login || $0.login == nil }, "a login that is in no entry")
        }
    }

    private static func hsts(_ text: String) {
        let store = HSTSStore()
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "|", maxSplits: 1)
            let host = parts.count == 2 ? String(parts[0]) : "example.com"
            store.note(String(parts.last ?? ""), from: host, now: 1_000)
        }
        for entry in store.entries(now: 0) {
            precondition(!entry.host.contains(":") && !entry.host.hasSuffix("."), "noted \(entry.host)")
            precondition(store.requiresHTTPS(entry.host, now: 0) || entry.expires <= 0, "a kept entry that is not known")
        }
    }
}
