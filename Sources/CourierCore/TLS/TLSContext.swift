import COpenSSL
import Glibc

/// An OpenSSL `SSL_CTX` built from one `TLSConfiguration`.
///
/// Building one loads the extra roots and the client certificate (the system roots are read once
/// per process, `SystemTrustRoots`), which takes milliseconds, so the runtime keeps one per
/// distinct configuration and every connection with that configuration
/// shares it. Sessions are not cached inside OpenSSL (`NO_INTERNAL_STORE`): the runtime keeps the
/// latest per pool key, which already includes the configuration, so a session is never offered to
/// a server under another security context.
package final class TLSContext {
    let context: OpaquePointer
    let configuration: TLSConfiguration
    private var passphrase: UnsafeMutablePointer<CChar>?

    /// Index of the `TLSSession` pointer in each SSL's ex_data.
    static let sessionIndex: Int32 = courier_SSL_get_ex_new_index()

    private init(context: OpaquePointer, configuration: TLSConfiguration) {
        self.context = context
        self.configuration = configuration
    }

    deinit {
        SSL_CTX_free(context)
        if let passphrase { free(passphrase) }
    }

    /// The certificates and revocation lists this context's store holds now (the hashed directory
    /// lookup adds the ones it finds while verifying): for tests of what a configuration trusts.
    package var trustedObjectCount: Int {
        guard let store = SSL_CTX_get_cert_store(context) else { return 0 }
        X509_STORE_lock(store)
        defer { X509_STORE_unlock(store) }
        return X509_STORE_get0_objects(store).map { Int(courier_sk_X509_OBJECT_num($0)) } ?? 0
    }

    /// Whether this context verifies against the process's one shared system store.
    package var sharesTheSystemRoots: Bool {
        SSL_CTX_get_cert_store(context) == SystemTrustRoots.shared?.pointer
    }

    /// Builds a context; the errors are the configuration's (`.tlsCAFile`, `.tlsClientCertificate`).
    package static func make(_ configuration: TLSConfiguration) -> Result<TLSContext, CourierError> {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            return .failure(CourierError(.tlsHandshake, "SSL_CTX_new: \(TLSErrors.drain())"))
        }
        let tls = TLSContext(context: ctx, configuration: configuration)
        _ = courier_SSL_CTX_set_min_proto_version(ctx, Int32(configuration.minimumVersion.rawValue))
        if let maximum = configuration.maximumVersion {
            _ = courier_SSL_CTX_set_max_proto_version(ctx, Int32(maximum.rawValue))
        }
        _ = courier_SSL_CTX_set_options(ctx, courier_SSL_OP_NO_COMPRESSION())
        if let error = applyCipherChoices(ctx, configuration) { return .failure(error) }
        // Idle pooled connections give their TLS record buffers back.
        _ = courier_SSL_CTX_set_mode(ctx, Int(SSL_MODE_RELEASE_BUFFERS))

        // Verification always runs (unless turned off) but never aborts the handshake: the
        // callback records the first error and Courier decides afterwards, with the pins and the
        // application's hook, before a single request byte is sent.
        if configuration.verification == .full {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, TLSSession.verifyCallback)
        } else {
            SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        }
        // The system's own bundle named as the CA file (a binding passing SSL_CERT_FILE on, a C
        // program naming it) trusts what the system store does, which looks the same roots up in
        // the hashed directory instead of parsing the whole file for this context.
        let systemBundle = configuration.caDirectory == nil && configuration.caFile.map(SystemTrustRoots.isSystemBundle) == true
        let useSystem = configuration.useSystemTrustStore || systemBundle
        let extraRoots = !systemBundle && (configuration.caFile != nil || configuration.caDirectory != nil)
        if useSystem, let system = SystemTrustRoots.shared {
            if extraRoots { system.seed(ctx) } else { system.share(with: ctx) }
        }
        if extraRoots {
            if SSL_CTX_load_verify_locations(ctx, configuration.caFile, configuration.caDirectory) != 1 {
                let what = [configuration.caFile, configuration.caDirectory].compactMap { $0 }.joined(separator: ", ")
                return .failure(CourierError(.tlsCAFile, "\(what): \(TLSErrors.drain())"))
            }
        }
        if let certificate = configuration.clientCertificateFile {
            if let passphrase = configuration.clientKeyPassphrase {
                tls.passphrase = strdup(passphrase)
                SSL_CTX_set_default_passwd_cb_userdata(ctx, tls.passphrase)
            }
            guard SSL_CTX_use_certificate_chain_file(ctx, certificate) == 1 else {
                return .failure(CourierError(.tlsClientCertificate, "\(certificate): \(TLSErrors.drain())"))
            }
            let key = configuration.clientKeyFile ?? certificate
            guard SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) == 1 else {
                return .failure(CourierError(.tlsClientCertificate, "\(key): \(TLSErrors.drain())"))
            }
            guard SSL_CTX_check_private_key(ctx) == 1 else {
                return .failure(CourierError(.tlsClientCertificate, "key does not match the certificate: \(TLSErrors.drain())"))
            }
        }
        // ALPN: HTTP/1.1 unless the connection offers h2 too (`TLSSession` sets its own offer).
        if configuration.offersALPN {
            _ = ALPNOffer.http1.wire.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(ctx, $0.baseAddress, UInt32($0.count)) }
        }
        _ = courier_SSL_CTX_set_session_cache_mode(ctx, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
        SSL_CTX_sess_set_new_cb(ctx, TLSSession.newSessionCallback)
        return .success(tls)
    }
}


/// The configuration's cipher list, TLS 1.3 suites and groups, set on `ctx`; the error when
/// OpenSSL takes none of what one of them names (curl's CURLE_SSL_CIPHER).
private func applyCipherChoices(_ ctx: OpaquePointer, _ configuration: TLSConfiguration) -> CourierError? {
    if let list = configuration.cipherList, SSL_CTX_set_cipher_list(ctx, list) != 1 {
        return CourierError(.tlsCipher, "failed setting cipher list: \(list) (\(TLSErrors.drain()))")
    }
    if let suites = configuration.tls13CipherSuites, SSL_CTX_set_ciphersuites(ctx, suites) != 1 {
        return CourierError(.tlsCipher, "failed setting TLS 1.3 cipher suite: \(suites) (\(TLSErrors.drain()))")
    }
    if let curves = configuration.curves, courier_SSL_CTX_set1_groups_list(ctx, curves) != 1 {
        return CourierError(.tlsCipher, "failed setting curves list: '\(curves)' (\(TLSErrors.drain()))")
    }
    return nil
}

/// Reads OpenSSL's thread-local error queue.
enum TLSErrors {
    /// Every queued error as text (oldest first), emptying the queue.
    static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return messages.isEmpty ? "no OpenSSL error" : messages.joined(separator: "; ")
    }

    /// The reason of the oldest queued error, without removing it.
    static func firstReason() -> Int32 {
        let code = ERR_peek_error()
        return code == 0 ? 0 : courier_ERR_GET_REASON(code)
    }
}
