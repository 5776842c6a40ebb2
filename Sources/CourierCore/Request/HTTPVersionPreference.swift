/// Which HTTP version a request may go over: an engine-wide default that each operation may
/// override (curl's `--http1.1`, `--http2`, `--http2-prior-knowledge`).
///
/// HTTP/2 is negotiated by ALPN on https. On http:// Courier does not try the h2c Upgrade
/// (RFC 9113 section 3.1 deprecates it): `.http2Preferred` stays on HTTP/1.1 there, and
/// `.http2Only` speaks HTTP/2 from the first byte (prior knowledge), as curl does.
public enum HTTPVersionPreference: Sendable, Hashable, CaseIterable {
    /// HTTP/1.1 only: ALPN offers `http/1.1`.
    case http1Only
    /// HTTP/2 when the server agrees by ALPN, HTTP/1.1 otherwise (the default). A server that
    /// answers a stream with `HTTP_1_1_REQUIRED` gets the request again over HTTP/1.1, and its
    /// origin stays on HTTP/1.1 for the life of the process.
    case http2Preferred
    /// HTTP/2 or nothing: ALPN offers only `h2` on https; on http:// the connection speaks h2c
    /// with prior knowledge (the server must expect it).
    case http2Only

    /// What a TLS handshake offers for this preference.
    package var alpn: ALPNOffer {
        switch self {
        case .http1Only: return .http1
        case .http2Preferred: return .http2AndHTTP1
        case .http2Only: return .http2
        }
    }
}

/// The protocols a TLS handshake offers by ALPN (RFC 7301).
package enum ALPNOffer: Sendable, Hashable {
    case http1, http2AndHTTP1, http2

    /// The extension's wire form: length-prefixed names.
    package var wire: [UInt8] {
        switch self {
        case .http1: return [8] + Array("http/1.1".utf8)
        case .http2AndHTTP1: return [2] + Array("h2".utf8) + [8] + Array("http/1.1".utf8)
        case .http2: return [2] + Array("h2".utf8)
        }
    }

    /// The names, for people (`-v`'s "ALPN: offers h2,http/1.1").
    package var text: String {
        switch self {
        case .http1: return "http/1.1"
        case .http2AndHTTP1: return "h2,http/1.1"
        case .http2: return "h2"
        }
    }
}
