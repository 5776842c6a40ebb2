/// HTTP Strict Transport Security (RFC 6797): the hosts that said, over https, that they are to
/// be reached over https only. A request to `http://` one of them goes to `https://` instead (the
/// port 80 becoming 443, another port kept, as curl does), before any byte leaves in the clear;
/// so does a redirect to one.
///
/// Kept in memory, and in a file in curl's `--hsts` format when given one: a line per host,
/// `host "YYYYMMDD HH:MM:SS"` (the expiry, UTC), the host dot-prefixed when its subdomains are
/// covered too; `#` lines are comments. A line that does not read is skipped, as curl does; the
/// file is written back by `save` (atomically). Shared by any number of requests and threads.
public final class HSTSStore: @unchecked Sendable {
    /// One known host.
    public struct Entry: Sendable, Equatable {
        public var host: String
        public var includesSubdomains: Bool
        /// Epoch seconds (UTC) when it stops being known.
        public var expires: Int64
    }

    private let lock = Lock()
    private var known: [String: Entry] = [:]
    /// Where `save()` writes (nil: memory only).
    public let path: String?

    /// An empty store, in memory only.
    public init() { path = nil }

    /// A store read from `path` (a missing file is an empty store) and written back there by
    /// `save()`. `.fileRead` for a file that cannot be read.
    public init(file path: String) throws(CourierError) {
        self.path = path
        guard let text = try TextFile.read(path, limit: 16 << 20) else { return }
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            if let entry = Self.entry(line) { known[entry.host] = entry }
        }
    }

    /// The hosts known now (expired ones left out), sorted by name.
    public var entries: [Entry] { entries(now: HTTPDate.now()) }

    package func entries(now: Int64) -> [Entry] {
        lock.withLock { known.values.filter { $0.expires > now } }.sorted { $0.host < $1.host }
    }

    /// Whether `host` is to be reached over https only: known itself, or a parent domain known
    /// with its subdomains (RFC 6797 section 8.2).
    public func requiresHTTPS(_ host: String) -> Bool { requiresHTTPS(host, now: HTTPDate.now()) }

    package func requiresHTTPS(_ host: String, now: Int64) -> Bool {
        var name = Substring(Self.normalized(host))
        return lock.withLock {
            if let entry = known[String(name)], entry.expires > now { return true }
            while let dot = name.firstIndex(of: ".") {
                name = name[name.index(after: dot)...]
                if let entry = known[String(name)], entry.includesSubdomains, entry.expires > now { return true }
            }
            return false
        }
    }

    /// Takes a `Strict-Transport-Security` value `host` sent over https (RFC 6797 section 6.1):
    /// `max-age` (required; 0 forgets the host) and `includeSubDomains`. IP literals are never
    /// noted (section 8.1.1), nor a value that does not read.
    public func note(_ value: String, from host: String) { note(value, from: host, now: HTTPDate.now()) }

    package func note(_ value: String, from host: String, now: Int64) {
        let name = Self.normalized(host)
        guard !name.isEmpty, !Cookie.isIPAddress(name), let directives = Self.directives(value) else { return }
        lock.withLock {
            if directives.maxAge == 0 {
                known[name] = nil
            } else {
                let expires = now > Int64.max - directives.maxAge ? Int64.max : now + directives.maxAge
                known[name] = Entry(host: name, includesSubdomains: directives.subdomains, expires: expires)
            }
        }
    }

    /// Writes the store to its file in curl's format (nothing for a memory-only store).
    public func save() throws(CourierError) {
        guard let path else { return }
        var text = "# HSTS cache, curl's format: host (dot-prefixed with its subdomains) and expiry (UTC).\n"
            + "# Written by Courier.\n"
        for entry in entries {
            // (Beyond the year 9999 a stamp cannot say it: curl's "unlimited".)
            let stamp = entry.expires >= Self.lastStamp ? "unlimited" : HTTPDate.compactStamp(entry.expires)
            text += (entry.includesSubdomains ? "." : "") + entry.host + " \"" + stamp + "\"\n"
        }
        try TextFile.writeAtomically(text, to: path)
    }

    /// `url` over https when its host requires it (nil when it does not, or is https already).
    package func upgrade(_ url: CourierURL) -> CourierURL? {
        guard url.scheme == .http, requiresHTTPS(url.host) else { return nil }
        var upgraded = url
        upgraded.scheme = .https
        if url.port == 80 { upgraded.port = 443 }
        return upgraded
    }

    /// 10000-01-01T00:00:00Z: the first moment a four-digit year cannot name.
    private static let lastStamp: Int64 = 253_402_300_800

    // MARK: - Reading

    private static func normalized(_ host: String) -> String {
        var name = host.lowercased()
        while name.hasSuffix(".") { name.removeLast() }
        return name
    }

    /// A line of the file, or nil (a comment, a blank, anything that does not read).
    private static func entry(_ line: Substring) -> Entry? {
        let text = line.trimmingSpaces
        guard !text.isEmpty, !text.hasPrefix("#"), let space = text.firstIndex(of: " ") else { return nil }
        var host = text[..<space]
        let stamp = text[text.index(after: space)...].trimmingSpaces
        guard stamp.count >= 2, stamp.first == "\"", stamp.last == "\"" else { return nil }
        let inner = stamp.dropFirst().dropLast()
        let subdomains = host.hasPrefix(".")
        if subdomains { host = host.dropFirst() }
        guard !host.isEmpty, !host.contains("\""), let expires = inner == "unlimited" ? Int64.max : HTTPDate.parseCompactStamp(inner) else {
            return nil
        }
        return Entry(host: normalized(String(host)), includesSubdomains: subdomains, expires: expires)
    }

    /// RFC 6797 section 6.1's directives: `max-age` exactly once (a number, perhaps quoted),
    /// `includeSubDomains` at most once; others ignored. nil when the value breaks that.
    private static func directives(_ value: String) -> (maxAge: Int64, subdomains: Bool)? {
        var maxAge: Int64?
        var subdomains = false
        var seen: Set<String> = []
        for part in value.split(separator: ";") {
            let directive = part.trimmingSpaces
            if directive.isEmpty { continue }
            // ("=" alone, or "=5": a directive without a name makes the value unreadable.)
            let pieces = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pieces[0].trimmingSpaces.lowercased()
            guard !name.isEmpty else { return nil }
            guard seen.insert(name).inserted else { return nil }
            switch name {
            case "max-age":
                guard pieces.count == 2 else { return nil }
                var number = pieces[1].trimmingSpaces
                if number.count >= 2, number.first == "\"", number.last == "\"" { number = number.dropFirst().dropLast() }
                guard !number.isEmpty, number.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
                maxAge = Int64(number) ?? Int64.max  // (digits beyond Int64: as long as can be)
            case "includesubdomains":
                guard pieces.count == 1 else { return nil }
                subdomains = true
            default:
                continue
            }
        }
        return maxAge.map { ($0, subdomains) }
    }
}
