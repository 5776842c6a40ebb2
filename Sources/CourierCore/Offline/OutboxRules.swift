import Glibc

/// What goes into an outbox entry and what takes one out.
///
/// An entry leaves the outbox only when the server **answered** (any status: the application
/// judges the answer); every other outcome keeps it, so nothing frozen is ever lost. Among those,
/// `waitsForNetwork` tells the failures that mean "not reachable now" (the CLI's exit 75, a
/// flush on the next network change) from the ones a network change will not fix (a rejected
/// certificate, a malformed answer), which are reported as such and still kept.
package enum OutboxRules {
    /// Unresolvable, refused, timed out, reset or cut before an answer: try again later.
    package static func waitsForNetwork(_ error: CourierError) -> Bool {
        switch error.code.primary {
        case .dnsFailure, .connectFailed, .timeout, .connectionReset, .emptyReply, .sendFailed: return true
        default: return false
        }
    }

    /// The entry for a request about to be sent (its final method, URL, headers and body, the
    /// Idempotency-Key header included). Bodies in memory are copied; a file body is referred to
    /// by its absolute path, size and SHA-256; a streamed or multipart body cannot be frozen.
    package static func entry(for transfer: Transfer, id: String, kind: String, now: Int64) throws(CourierError) -> OutboxEntry {
        let body: OutboxEntry.Body
        switch transfer.body {
        case .empty: body = .none
        case .bytes(let bytes): body = .bytes(bytes)
        case .file(let path):
            let absolute = Self.absolute(path)
            let digest = try FileDigest.of(absolute)
            body = .file(path: absolute, size: digest.size, sha256: digest.sha256)
        case .multipart, .stream:
            throw CourierError(.invalidArgument, "a streamed or multipart body cannot wait in the outbox (send bytes or a file)")
        }
        let fields = transfer.headers.map { OutboxEntry.Field(name: $0.name, value: $0.value) }
        return OutboxEntry(id: id, kind: kind, method: transfer.method.rawValue, url: transfer.url.description,
                           headers: fields, body: body, created: now)
    }

    /// The entry's headers, as a request sends them.
    package static func headers(of entry: OutboxEntry) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for field in entry.headers { headers.add(name: field.name, value: field.value) }
        return headers
    }

    /// The entry's body, ready to send: a referred file is checked first (`.fileChanged`).
    package static func body(of entry: OutboxEntry) throws(CourierError) -> RequestBody {
        switch entry.body {
        case .none: return .empty
        case .bytes(let bytes): return .bytes(bytes)
        case .file(let path, let size, let sha256):
            try FileDigest.verify(path, size: size, sha256: sha256)
            return .file(path: path)
        }
    }

    private static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
