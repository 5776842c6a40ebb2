import COpenSSL

/// The newest TLS session (ticket) per pool key, for resumption.
///
/// Keyed by pool key, which includes the whole TLS configuration, so a session is only ever
/// offered to a server under the security context it was negotiated in. Loop thread only.
package final class TLSSessionCache {
    /// Owned references.
    private var sessions: [Int: OpaquePointer] = [:]

    package init() {}

    deinit { removeAll() }

    /// The session to resume for a new connection of `key`, if any (borrowed).
    package func session(for key: Int) -> OpaquePointer? {
        sessions[key]
    }

    /// Keeps `session` as the newest of `key`, taking ownership of the reference.
    package func store(_ session: OpaquePointer, for key: Int) {
        if let old = sessions.updateValue(session, forKey: key) { SSL_SESSION_free(old) }
    }

    /// Frees every session (shutdown).
    package func removeAll() {
        for session in sessions.values { SSL_SESSION_free(session) }
        sessions.removeAll()
    }
}
