/// The status line and header fields of a final (non-1xx) response.
public struct ResponseHead: Sendable, Equatable {
    /// The status code, 100...999 (llhttp rejects anything else).
    public var status: Int
    /// The minor HTTP version: 1 for HTTP/1.1, 0 for HTTP/1.0 (0 for HTTP/2 too).
    public var versionMinor: UInt8
    /// The major HTTP version: 1, or 2 for a response that came over HTTP/2.
    public var versionMajor: UInt8 = 1
    /// The reason phrase as sent ("OK"); informational only (RFC 9112 section 4).
    public var reason: String
    /// The header fields in received order.
    public var headers: HTTPHeaders

    /// Creates a head.
    public init(status: Int = 0, versionMinor: UInt8 = 1, reason: String = "", headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.versionMinor = versionMinor
        self.reason = reason
        self.headers = headers
    }

    /// The status line as received, for `curl -i`-style output (HTTP/2 has no reason phrase:
    /// "HTTP/2 200", as curl prints it).
    public var statusLine: String {
        versionMajor == 2 ? "HTTP/2 \(status)" : "HTTP/1.\(versionMinor) \(status)\(reason.isEmpty ? "" : " " + reason)"
    }

    /// The version as curl's `-w %{http_version}` prints it: "1.0", "1.1" or "2".
    public var versionText: String { versionMajor == 2 ? "2" : "1.\(versionMinor)" }
}

/// Size limits on what a server may send, each ending in its own error when exceeded.
public struct ResponseLimits: Sendable, Hashable {
    /// Status line plus header and trailer bytes: curl 8's bound, 300 KiB (some servers do send
    /// heads of over 100 KiB: long cookies, policy fields), still keeping a hostile one from
    /// growing a buffer without end.
    public var maxHeaderBytes: Int = 300 * 1024
    /// Header plus trailer fields.
    public var maxHeaderCount: Int = 10_000
    /// Body bytes as received on the wire (before content decoding); nil means no limit.
    public var maxBodyBytes: UInt64? = nil
    /// Body bytes after content decoding: the decompression-bomb bound. nil means
    /// "same as maxBodyBytes, or 1 GiB when that is unlimited".
    public var maxDecodedBytes: UInt64? = nil

    /// The defaults above.
    public init() {}

    /// The effective bound on decoded bytes.
    public var decodedLimit: UInt64 { maxDecodedBytes ?? maxBodyBytes ?? (1 << 30) }
}
