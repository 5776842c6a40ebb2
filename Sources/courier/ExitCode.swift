import Courier
import CourierCore

/// curl's documented exit codes (libcurl-errors.3) for the failures Courier reports, so scripts
/// written against curl keep working.
enum ExitCode {
    static let usage: Int32 = 2
    /// curl's CURLE_NOT_BUILT_IN: a feature this build does not have (HTTP/2, HTTP/3).
    static let notBuiltIn: Int32 = 4
    static let httpError: Int32 = 22
    /// sysexits' EX_TEMPFAIL: --outbox kept a request its host did not answer; try again later
    /// (`--outbox DIR --flush`).
    static let tryAgainLater: Int32 = 75

    static func forError(_ error: CourierError) -> Int32 {
        let code = error.code
        switch code.primary {
        case .invalidArgument: return 2
        case .invalidURL: return 3
        case .unsupportedScheme: return 1
        case .invalidHeader: return 43
        case .dnsFailure: return code == .proxyResolve ? 5 : 6
        case .connectFailed: return code == .localBind ? 45 : 7
        case .timeout: return 28
        case .connectionReset: return 56
        case .emptyReply: return 52
        case .truncatedBody: return 18
        case .malformedResponse: return code == .badChunk ? 56 : 8
        case .headersTooLarge: return 100
        case .bodyTooLarge: return 63
        case .tooManyRedirects: return 47
        case .redirectRejected: return code == .redirectWithoutLocation ? 3 : 1
        case .decodingFailed: return code == .decodedTooLarge ? 63 : 61
        case .cancelled, .shutdown: return 42
        case .sendFailed: return 55
        case .fileError: return code == .fileRead || code == .bodySource || code == .netrcSyntax ? 26 : 23
        case .rangeError: return 33
        case .tls:
            switch code {
            case .tlsUntrusted, .tlsHostMismatch, .tlsExpired, .tlsNotYetValid, .tlsRejectedByHook: return 60
            case .tlsPinMismatch: return 90
            case .tlsClientCertificate: return 58
            case .tlsCAFile: return 77
            case .tlsTruncated: return 56
            case .tlsCipher: return 59
            default: return 35
            }
        case .httpStatus: return 22
        // curl's CURLE_HTTP2 (16) for the connection, CURLE_HTTP2_STREAM (92) for one stream.
        case .http2: return code == .http2StreamReset ? 92 : 16
        case .proxy:
            // curl 7.88: an unusable proxy string is 5; a refused, cut or non-HTTP answer to
            // CONNECT is 56; its 97 (CURLE_PROXY) is every failed SOCKS handshake.
            switch code {
            case .proxyUnsupported: return 5
            case .proxySocksConnect, .proxySocksAuth, .proxySocksHandshake: return 97
            default: return 56
            }
        case .outbox: return 23  // the journal could not be written (locked, full, no space)
        default: return 1
        }
    }
}
