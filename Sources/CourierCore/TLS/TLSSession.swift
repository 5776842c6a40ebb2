import COpenSSL
import Glibc

/// TLS on one connection: an `SSL` whose I/O is a custom BIO over Courier's own buffers.
///
/// Bytes-in/bytes-out: the connection hands received ciphertext to `receive`, takes plaintext
/// from `readPlaintext`, gives plaintext to `write`, and sends whatever accumulated in `outgoing`.
/// The BIO copies straight between OpenSSL and these buffers (h2o's approach; a pair of memory
/// BIOs would add one more copy each way). Everything runs on the loop thread.
package final class TLSSession {
    /// Where the handshake stands after feeding it.
    package enum HandshakeProgress {
        case inProgress
        case done
        case failed(CourierError)
    }

    /// What reading plaintext found.
    package enum ReadResult {
        /// This many plaintext bytes are in the buffer.
        case bytes(Int)
        /// No complete record yet: wait for more ciphertext.
        case wantMore
        /// The server sent close_notify: a clean end of stream.
        case closed
        /// The stream is broken.
        case failed(CourierError)
    }

    let ssl: OpaquePointer
    let host: String
    let port: UInt16
    let configuration: TLSConfiguration
    /// Ciphertext waiting to be written to the socket.
    package var outgoing = RawBuffer(capacity: 2048)
    /// Ciphertext received and not yet consumed by OpenSSL.
    private var incoming = UnsafeRawBufferPointer(start: nil, count: 0)
    private(set) var handshakeDone = false
    private(set) var receivedCloseNotify = false
    /// The first certificate verification error (X509_V_*), 0 when none.
    package private(set) var verifyResult: Int32 = 0
    /// Called with each new session (ticket) the server issues, to cache it for resumption;
    /// only once the server was trusted (a resumed session skips the certificate checks, so one
    /// from a connection that failed them must never be offered again).
    var onNewSession: ((OpaquePointer) -> Void)?
    /// The checks after the handshake passed (`evaluateTrust`).
    private var trusted = false
    /// Sessions that arrived before the checks ran (TLS 1.2's, made by the handshake itself):
    /// cached if the checks pass, freed otherwise. Owned references.
    private var sessionsBeforeTrust: [OpaquePointer] = []
    /// Where handshake messages are recorded (`record(into:)`), when the request asked.
    var trace: ConnectionTrace?

    /// What the handshake offers by ALPN.
    let alpn: ALPNOffer

    /// Sets up TLS for a connection to `host`; `session` resumes an earlier one when given;
    /// `alpn` is what the connection may speak (the context's own offer is HTTP/1.1's).
    package init?(context: TLSContext, host: String, port: UInt16, session: OpaquePointer?, alpn: ALPNOffer = .http1) {
        guard let ssl = SSL_new(context.context) else { return nil }
        self.ssl = ssl
        // A fully qualified name ("localhost.", "example.com."): the dot is for DNS (which keeps
        // it); SNI (RFC 6066 section 3: no trailing dot) and certificate matching use the name
        // without it, as curl does.
        let host = host.utf8.count > 1 && host.utf8.last == UInt8(ascii: ".") ? String(host.dropLast()) : host
        self.host = host
        self.port = port
        self.alpn = alpn
        configuration = context.configuration
        guard let bio = BIO_new(TLSSession.bioMethod) else {
            SSL_free(ssl)
            return nil
        }
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
        SSL_set_bio(ssl, bio, bio)
        SSL_set_ex_data(ssl, TLSContext.sessionIndex, Unmanaged.passUnretained(self).toOpaque())
        let isIPLiteral = SocketAddress(ipLiteral: host, port: 0) != nil
        if isIPLiteral {
            // No SNI for addresses (RFC 6066 section 3); the certificate must name the IP.
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = courier_SSL_set_tlsext_host_name(ssl, host)
            SSL_set1_host(ssl, host)
        }
        if alpn != .http1, configuration.offersALPN {
            _ = alpn.wire.withUnsafeBufferPointer { SSL_set_alpn_protos(ssl, $0.baseAddress, UInt32($0.count)) }
        }
        if let session, configuration.sessionResumption { SSL_set_session(ssl, session) }
        SSL_set_connect_state(ssl)
    }

    deinit {
        for session in sessionsBeforeTrust { SSL_SESSION_free(session) }
        SSL_free(ssl)
        outgoing.free()
    }

    /// Whether the handshake resumed a session.
    package var resumed: Bool { SSL_session_reused(ssl) == 1 }

    // MARK: - Handshake

    /// Advances the handshake with `ciphertext` (empty to start it). On `.done` the peer has
    /// passed every check this configuration asks for.
    ///
    /// OpenSSL reads one record at a time and stops at the handshake's last message, so on `.done`
    /// whatever followed it in `ciphertext` is still unread: the caller reads it as records
    /// (`readPlaintext`) before the buffer goes away. Go's crypto/tls sends its session ticket
    /// in the same flight as its Finished; dropping it shifted the record sequence numbers and
    /// failed the next record's MAC.
    package func handshake(_ ciphertext: UnsafeRawBufferPointer) -> HandshakeProgress {
        incoming = ciphertext
        ERR_clear_error()
        let status = SSL_do_handshake(ssl)
        if status == 1 {
            handshakeDone = true
            if let error = evaluateTrust() {
                incoming = UnsafeRawBufferPointer(start: nil, count: 0)
                dropSessionsBeforeTrust()
                return .failed(error)
            }
            trusted = true
            if !sessionsBeforeTrust.isEmpty {
                let held = sessionsBeforeTrust
                sessionsBeforeTrust = []
                for session in held {
                    if let store = onNewSession { store(session) } else { SSL_SESSION_free(session) }
                }
            }
            return .done
        }
        incoming = UnsafeRawBufferPointer(start: nil, count: 0)
        let reason = SSL_get_error(ssl, status)
        if reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE { return .inProgress }
        return .failed(handshakeError())
    }

    private func dropSessionsBeforeTrust() {
        for session in sessionsBeforeTrust { SSL_SESSION_free(session) }
        sessionsBeforeTrust = []
    }

    /// The handshake failed: a verification problem when one was recorded, else what OpenSSL says.
    private func handshakeError() -> CourierError {
        let reason = TLSErrors.firstReason()
        let text = TLSErrors.drain()
        switch reason {
        case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE,
             SSL_R_VERSION_TOO_LOW, SSL_R_VERSION_TOO_HIGH:
            return CourierError(.tlsProtocolVersion, text)
        case SSL_R_CERTIFICATE_VERIFY_FAILED where verifyResult != 0:
            return Self.verificationError(verifyResult)
        default:
            return CourierError(.tlsHandshake, text)
        }
    }

    /// The built-in checks (chain, host, pins) and the application's hook, after the handshake.
    private func evaluateTrust() -> CourierError? {
        var verdict: CourierError? = nil
        if configuration.verification == .full {
            if verifyResult != 0 {
                verdict = Self.verificationError(verifyResult)
            } else if SSL_get0_peer_certificate(ssl) == nil {
                verdict = CourierError(.tlsUntrusted, "the server sent no certificate")
            }
        }
        let pinSets = configuration.pinSets(for: host)
        let needChain = !pinSets.isEmpty || configuration.trustEvaluator != nil
        let chain = needChain ? peerChain() : []
        let keyHashes = needChain ? chain.map { Self.publicKeySHA256(of: $0.certificate) } : []
        var pinMatched: Bool? = nil
        if !pinSets.isEmpty {
            pinMatched = keyHashes.contains { hash in pinSets.contains { $0.sha256.contains(hash) } }
        }
        let context = needChain
            ? TrustContext(host: host, port: port, chain: chain.map(\.der), verificationError: verdict,
                           pinMatched: pinMatched, publicKeySHA256: keyHashes)
            : nil
        if pinMatched == false, let context {
            configuration.trustEvaluator?.pinMismatch?(context)
            if configuration.pinningMode == .enforce {
                let seen = keyHashes.map { "sha256//" + Base64.encode($0) }.joined(separator: ";")
                return CourierError(.tlsPinMismatch, "\(host): chain keys \(seen)")
            }
        }
        if let evaluator = configuration.trustEvaluator, let context {
            if evaluator.evaluate(context) { return nil }
            return verdict ?? CourierError(.tlsRejectedByHook, host)
        }
        return verdict
    }

    /// Maps an X509_V_* code to the error a caller can act on.
    package static func verificationError(_ code: Int32) -> CourierError {
        let text = String(cString: X509_verify_cert_error_string(Int(code)))
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CRL_HAS_EXPIRED:
            return CourierError(.tlsExpired, text)
        case X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CRL_NOT_YET_VALID:
            return CourierError(.tlsNotYetValid, text)
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH, X509_V_ERR_EMAIL_MISMATCH:
            return CourierError(.tlsHostMismatch, text)
        default:
            return CourierError(.tlsUntrusted, text)
        }
    }

    private struct ChainCertificate {
        let certificate: OpaquePointer
        let der: [UInt8]
    }

    /// The verified chain when there is one, else what the peer sent (leaf first).
    private func peerChain() -> [ChainCertificate] {
        guard let stack = SSL_get0_verified_chain(ssl) ?? SSL_get_peer_cert_chain(ssl) else { return [] }
        var chain: [ChainCertificate] = []
        for i in 0..<courier_sk_X509_num(stack) {
            guard let certificate = courier_sk_X509_value(stack, i) else { continue }
            var der: UnsafeMutablePointer<UInt8>? = nil
            let length = i2d_X509(certificate, &der)
            guard length > 0, let der else { continue }
            chain.append(ChainCertificate(certificate: certificate, der: Array(UnsafeBufferPointer(start: der, count: Int(length)))))
            courier_OPENSSL_free(der)
        }
        return chain
    }

    /// SHA-256 of the certificate's DER SubjectPublicKeyInfo: what `sha256//` pins name.
    static func publicKeySHA256(of certificate: OpaquePointer) -> [UInt8] {
        guard let key = X509_get0_pubkey(certificate) else { return [] }
        return publicKeySHA256(ofKey: key)
    }

    /// SHA-256 of a public key's DER SubjectPublicKeyInfo.
    package static func publicKeySHA256(ofKey key: OpaquePointer) -> [UInt8] {
        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PUBKEY(key, &der)
        guard length > 0, let der else { return [] }
        defer { courier_OPENSSL_free(der) }
        var digest = [UInt8](repeating: 0, count: 32)
        _ = digest.withUnsafeMutableBufferPointer { SHA256(der, Int(length), $0.baseAddress) }
        return digest
    }

    /// The `sha256//` pin of the public key in a file (curl's `--pinnedpubkey FILE`): a PEM or DER
    /// public key, or a certificate (whose key is taken).
    package static func pin(fromKeyFile path: String) -> Result<[UInt8], CourierError> {
        guard let bio = BIO_new_file(path, "r") else {
            return .failure(CourierError(.invalidArgument, "\(path): \(TLSErrors.drain())"))
        }
        defer { BIO_free(bio) }
        defer { ERR_clear_error() }
        if let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) {
            defer { EVP_PKEY_free(key) }
            return .success(publicKeySHA256(ofKey: key))
        }
        _ = BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)
        if let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            defer { X509_free(certificate) }
            return .success(publicKeySHA256(of: certificate))
        }
        _ = BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)
        if let key = d2i_PUBKEY_bio(bio, nil) {
            defer { EVP_PKEY_free(key) }
            return .success(publicKeySHA256(ofKey: key))
        }
        return .failure(CourierError(.invalidArgument, "\(path): not a PEM or DER public key or certificate"))
    }

    // MARK: - Records

    /// Plaintext out: encrypted into `outgoing`.
    package func write(_ plaintext: UnsafeRawBufferPointer) -> CourierError? {
        guard let base = plaintext.baseAddress, plaintext.count > 0 else { return nil }
        var written = 0
        clearErrors()
        guard SSL_write_ex(ssl, base, plaintext.count, &written) == 1, written == plaintext.count else {
            return CourierError(.sendFailed, "TLS write: \(TLSErrors.drain())")
        }
        return nil
    }

    /// Ciphertext in: consumed by the following `readPlaintext` calls.
    package func receive(_ ciphertext: UnsafeRawBufferPointer) {
        incoming = ciphertext
    }

    /// Decrypts into `buffer`. Call until `.wantMore`: every record in the received ciphertext is
    /// processed (including post-handshake messages such as session tickets, which yield none).
    package func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        var count = 0
        clearErrors()
        if SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .bytes(count) }
        switch SSL_get_error(ssl, 0) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            incoming = UnsafeRawBufferPointer(start: nil, count: 0)
            return .wantMore
        case SSL_ERROR_ZERO_RETURN:
            receivedCloseNotify = true
            return .closed
        default:
            return .failed(CourierError(.connectionReset, "TLS: \(TLSErrors.drain())"))
        }
    }

    /// Empties the thread's OpenSSL error queue, as SSL_get_error needs before each record call.
    /// It is nearly always empty already (every failure drains it): looking costs a fraction of
    /// ERR_clear_error's pass over all sixteen slots (about 200 instructions a call).
    @inline(__always)
    private func clearErrors() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    /// Queues a close_notify alert (sent with `outgoing`), so the server sees a clean close.
    package func shutdown() {
        guard handshakeDone, SSL_get_shutdown(ssl) & courier_SSL_SENT_SHUTDOWN() == 0 else { return }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        _ = TLSErrors.drain()
    }

    // MARK: - OpenSSL callbacks

    /// Records the first verification error and lets the handshake finish; `evaluateTrust`
    /// decides afterwards (with pins and the application's hook).
    static let verifyCallback: @convention(c) (Int32, OpaquePointer?) -> Int32 = { preverifyOK, store in
        guard preverifyOK == 0, let store,
              let raw = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
              let sessionPointer = SSL_get_ex_data(OpaquePointer(raw), TLSContext.sessionIndex) else { return 1 }
        let session = Unmanaged<TLSSession>.fromOpaque(sessionPointer).takeUnretainedValue()
        if session.verifyResult == 0 { session.verifyResult = X509_STORE_CTX_get_error(store) }
        return 1
    }

    /// A new session (ticket) arrived: hand it to the runtime's cache. Returning 1 keeps the
    /// reference OpenSSL passed.
    static let newSessionCallback: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        guard let ssl, let session, let pointer = SSL_get_ex_data(ssl, TLSContext.sessionIndex) else { return 0 }
        let tls = Unmanaged<TLSSession>.fromOpaque(pointer).takeUnretainedValue()
        guard let store = tls.onNewSession, tls.configuration.sessionResumption else { return 0 }
        if tls.trusted {
            store(session)
        } else {
            tls.sessionsBeforeTrust.append(session)
        }
        return 1
    }

    /// The custom BIO: writes append to `outgoing`, reads copy from `incoming`.
    nonisolated(unsafe) static let bioMethod: OpaquePointer = {
        let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "courier")!
        BIO_meth_set_write(method) { bio, data, length in
            guard let bio, let data, length > 0, let pointer = BIO_get_data(bio) else { return 0 }
            let session = Unmanaged<TLSSession>.fromOpaque(pointer).takeUnretainedValue()
            session.outgoing.append(UnsafeRawBufferPointer(start: data, count: Int(length)))
            return length
        }
        BIO_meth_set_read(method) { bio, data, length in
            guard let bio, let data, let pointer = BIO_get_data(bio) else { return 0 }
            let session = Unmanaged<TLSSession>.fromOpaque(pointer).takeUnretainedValue()
            courier_BIO_clear_retry_flags(bio)
            guard session.incoming.count > 0 else {
                courier_BIO_set_retry_read(bio)
                return -1
            }
            let count = min(Int(length), session.incoming.count)
            UnsafeMutableRawPointer(data).copyMemory(from: session.incoming.baseAddress!, byteCount: count)
            session.incoming = UnsafeRawBufferPointer(rebasing: session.incoming[count...])
            return Int32(count)
        }
        BIO_meth_set_ctrl(method) { _, command, _, _ in
            command == BIO_CTRL_FLUSH ? 1 : 0
        }
        BIO_meth_set_create(method) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        BIO_meth_set_destroy(method) { _ in 1 }
        return method
    }()
}

extension PinSet {
    /// A pin set from curl's `--pinnedpubkey` argument, so the CLI and the C ABI read it alike:
    /// `"sha256//BASE64"` (several joined with ";"), or the path of a public key or certificate
    /// file (PEM or DER) whose key is pinned.
    public init(pinnedPublicKey: String) throws(CourierError) {
        if pinnedPublicKey.hasPrefix("sha256//") {
            try self.init(pins: [pinnedPublicKey])
        } else {
            self.init(sha256: [try TLSSession.pin(fromKeyFile: pinnedPublicKey).get()])
        }
    }
}
