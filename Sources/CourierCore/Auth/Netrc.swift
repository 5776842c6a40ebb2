import Glibc

/// A `.netrc` file: which user name and password go to which host (curl's `-n`, `--netrc-file`;
/// the file ftp and curl have read for decades, httpx's `NetRCAuth`).
///
/// Read as curl 7.88 reads it: whitespace-separated tokens, `machine NAME` starting an entry,
/// `default` one that matches any host, `login` and `password` (values may be quoted, with `\"`,
/// `\\`, `\n`, `\r`, `\t` escapes), `account` skipped, `macdef` skipping to the next blank line.
/// A file that breaks those rules is refused whole (`.netrcSyntax`), never half-used.
public struct Netrc: Sendable, Equatable {
    /// One entry: its machine (nil for `default`), login and password.
    public struct Entry: Sendable, Equatable {
        public var machine: String?
        public var login: String?
        public var password: String?
    }

    public private(set) var entries: [Entry] = []

    /// Reads `text`.
    public init(parsing text: String) throws(CourierError) {
        var tokens = try Self.tokens(text)[...]
        var current: Entry?
        func close() { if let current { entries.append(current) } }
        while let token = tokens.popFirst() {
            switch token.text {
            case "machine" where !token.quoted:
                guard let name = tokens.popFirst() else { throw Self.syntax("'machine' without a name") }
                close()
                current = Entry(machine: name.text.lowercased())
            case "default" where !token.quoted:
                close()
                current = Entry(machine: nil)
            case "login" where !token.quoted, "password" where !token.quoted, "account" where !token.quoted:
                guard current != nil else { throw Self.syntax("'\(token.text)' before any 'machine' or 'default'") }
                guard let value = tokens.popFirst() else { throw Self.syntax("'\(token.text)' without a value") }
                if token.text == "login" { current!.login = value.text }
                if token.text == "password" { current!.password = value.text }
            case "macdef" where !token.quoted:
                // Its name, then the macro to the next blank line (its lines marked as such).
                guard tokens.popFirst() != nil else { throw Self.syntax("'macdef' without a name") }
                while let next = tokens.first, next.inMacro { tokens.removeFirst() }
            default:
                throw Self.syntax("unexpected '\(token.text.prefix(40))'")
            }
        }
        close()
    }

    /// The file at `path` (nil: `$HOME/.netrc`, curl's default); nil when there is no such file
    /// (curl then goes on without credentials). Other read failures are `.fileRead`.
    public static func load(_ path: String? = nil) throws(CourierError) -> Netrc? {
        guard let path = path ?? getenv("HOME").map({ String(cString: $0) + "/.netrc" }) else { return nil }
        // (A credentials file has no business being large: the reader is bounded.)
        guard let text = try TextFile.read(path, limit: 1 << 20) else { return nil }
        do {
            return try Netrc(parsing: text)
        } catch {
            throw CourierError(.netrcSyntax, "\(path): \(error.detail ?? error.message)")
        }
    }

    /// The login and password for `host` (case-insensitive): the first `machine` entry naming
    /// it, else the `default` entry; with `user` (a URL's), only an entry whose login is `user`
    /// or that has none. A match without a password gives "" (as curl); nil when none matches.
    public func credentials(forHost host: String, user: String? = nil) -> (login: String, password: String)? {
        let name = host.lowercased()
        let candidates = entries.filter { $0.machine == name } + entries.filter { $0.machine == nil }
        for entry in candidates {
            if let user, let login = entry.login, login != user { continue }
            guard let login = entry.login ?? user else { continue }
            return (login, entry.password ?? "")
        }
        return nil
    }

    // MARK: - Reading

    private struct Token {
        var text: String
        var quoted = false
        var inMacro = false
    }

    private static func syntax(_ detail: String) -> CourierError { CourierError(.netrcSyntax, ".netrc parser error: \(detail)") }

    /// The file's tokens; a macro's lines (after `macdef NAME`, to a blank line) marked.
    private static func tokens(_ text: String) throws(CourierError) -> [Token] {
        var tokens: [Token] = []
        var macro = false
        var pendingMacroName = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if macro {
                if line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { macro = false }
                else { tokens.append(Token(text: String(line), inMacro: true)) }
                continue
            }
            var characters = line[...]
            while true {
                characters = characters.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
                guard let first = characters.first else { break }
                var token = Token(text: "")
                if first == "\"" {
                    token.quoted = true
                    characters.removeFirst()
                    var closed = false
                    while let character = characters.popFirst() {
                        if character == "\"" { closed = true; break }
                        if character == "\\", let escaped = characters.popFirst() {
                            switch escaped {
                            case "n": token.text.append("\n")
                            case "r": token.text.append("\r")
                            case "t": token.text.append("\t")
                            default: token.text.append(escaped)
                            }
                        } else {
                            token.text.append(character)
                        }
                    }
                    if !closed { throw syntax("an unterminated quoted value") }
                } else {
                    let word = characters.prefix { $0 != " " && $0 != "\t" && $0 != "\r" }
                    token.text = String(word)
                    characters = characters.dropFirst(word.count)
                }
                tokens.append(token)
                if pendingMacroName {
                    pendingMacroName = false
                    macro = true
                } else if token.text == "macdef", !token.quoted {
                    pendingMacroName = true
                }
            }
            if pendingMacroName { throw syntax("'macdef' without a name") }
        }
        return tokens
    }
}
