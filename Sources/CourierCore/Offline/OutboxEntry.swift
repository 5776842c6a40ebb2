/// One frozen request as the outbox journal keeps it: everything needed to send it again in a
/// later process, and the identifier that makes a resend recognisable.
///
/// `id` goes out as the `Idempotency-Key` header on every attempt, so a request that was in
/// flight when the process died, and is sent again by the next one, is the same request to a
/// server that honours the key (draft-ietf-httpapi-idempotency-key-header).
public struct OutboxEntry: Sendable, Equatable {
    /// The request body: bytes kept in the journal, or a file referred to by path with the size
    /// and SHA-256 it had when frozen (a changed file is refused, not sent: `.fileChanged`).
    public enum Body: Sendable, Equatable {
        case none
        case bytes([UInt8])
        case file(path: String, size: UInt64, sha256: [UInt8])
    }

    /// A header field as sent.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The stable identifier (32 lower-case hex digits), also the Idempotency-Key.
    public var id: String
    /// Order of freezing; entries are sent in this order. Assigned by the journal.
    public var sequence: UInt64
    /// What the application calls this kind of operation ("draft", "favourite"): handlers
    /// registered for a kind get the outcome of every entry of that kind, in any later process.
    public var kind: String
    public var method: String
    public var url: String
    public var headers: [Field]
    public var body: Body
    /// Seconds since 1970 when it was frozen.
    public var created: Int64

    package init(id: String = OutboxEntry.newID(), kind: String, method: String, url: String,
                headers: [Field] = [], body: Body = .none, created: Int64 = 0) {
        self.id = id
        self.sequence = 0
        self.kind = kind
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.created = created
    }

    /// 128 random bits as hex, from the kernel's generator.
    package static func newID() -> String { Hex.random128() }

    /// Whether `text` is an identifier `newID` could have made (a journal file name must be one).
    static func isValidID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

/// How much an outbox may hold: `.outboxFull` beyond (entries, and bytes on disk).
public struct OutboxLimits: Sendable {
    public var entries: Int
    public var bytes: Int
    public init(entries: Int = 1000, bytes: Int = 64 << 20) {
        self.entries = entries
        self.bytes = bytes
    }
}
