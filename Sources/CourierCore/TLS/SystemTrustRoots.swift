import COpenSSL

/// The operating system's trust roots (OpenSSL's default verify paths), read once per process.
///
/// Reading them parses the whole CA bundle (about 140 certificates on Debian): milliseconds of
/// the loop thread, which every new TLS configuration paid again before (an engine with its own
/// trust hook, a test with a private configuration, a C program's second engine). Contexts that
/// trust only the system share this store; contexts with extra roots (curl's `--cacert`) get
/// their own store seeded with these certificates, so the extra file is all they parse.
final class SystemTrustRoots: @unchecked Sendable {
    /// The store; OpenSSL locks it internally (the hashed-directory lookup adds certificates to it
    /// while verifying).
    private let store: OpaquePointer
    var pointer: OpaquePointer { store }

    /// Built on first use, on whichever thread gets there first (Swift's lazy globals are
    /// thread-safe); nil only when OpenSSL cannot allocate a store.
    static let shared: SystemTrustRoots? = {
        guard let store = X509_STORE_new() else { return nil }
        // A system without a bundle or a directory is not an error: it has no roots to trust, and
        // verification against them fails with `.tlsUntrusted` like any unknown issuer.
        if X509_STORE_set_default_paths(store) != 1 { _ = TLSErrors.drain() }
        return SystemTrustRoots(store: store)
    }()

    private init(store: OpaquePointer) {
        self.store = store
    }

    /// Makes `context` trust exactly the system roots (its store is replaced; OpenSSL counts the
    /// reference).
    func share(with context: OpaquePointer) {
        SSL_CTX_set1_cert_store(context, store)
    }

    /// Adds the system roots to `context`'s own store, for a context that adds roots of its own:
    /// the certificates already read (reference-counted, not parsed again) and the same hashed
    /// directory lookup.
    func seed(_ context: OpaquePointer) {
        guard let target = SSL_CTX_get_cert_store(context) else { return }
        X509_STORE_lock(store)
        if let objects = X509_STORE_get0_objects(store) {
            for index in 0..<courier_sk_X509_OBJECT_num(objects) {
                let object = courier_sk_X509_OBJECT_value(objects, index)
                if let certificate = X509_OBJECT_get0_X509(object) {
                    _ = X509_STORE_add_cert(target, certificate)
                } else if let revocations = X509_OBJECT_get0_X509_CRL(object) {
                    _ = X509_STORE_add_crl(target, revocations)
                }
            }
        }
        X509_STORE_unlock(store)
        if let lookup = X509_STORE_add_lookup(target, X509_LOOKUP_hash_dir()),
           courier_X509_LOOKUP_add_default_dir(lookup) != 1 {
            _ = TLSErrors.drain()
        }
    }
}
