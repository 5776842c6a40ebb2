import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// The operating system's trust roots (OpenSSL's default verify paths), set up once per process.
///
/// Where the system keeps its roots in a hashed directory (Debian's /etc/ssl/certs, which
/// update-ca-certificates fills from the same list as the bundle), they are looked up there one
/// at a time, when a chain needs its issuer, as curl's default CA path is. Reading the bundle file
/// instead parses about 140 certificates with OpenSSL 3's decoders: 232 million instructions, 85 %
/// of a whole one-request `courier https://...` (curl's run is 34 million), which every process
/// paid before its first TLS handshake. The bundle is still read when the directory holds no
/// hashed certificates (a system that ships only the file) or when SSL_CERT_FILE names a file of
/// its own.
/// Contexts that trust only the system share this store; contexts with extra roots (curl's
/// `--cacert`) get their own store seeded with what this one holds and the same directory.
final class SystemTrustRoots: @unchecked Sendable {
    /// The store; OpenSSL locks it internally (the hashed-directory lookup adds certificates to it
    /// while verifying).
    private let store: OpaquePointer
    var pointer: OpaquePointer { store }
    /// Whether the store is the hashed directory alone (the bundle not read into it): decided
    /// once, with the store, whatever the environment says later.
    let isDirectoryOnly: Bool

    /// Built on first use, on whichever thread gets there first (Swift's lazy globals are
    /// thread-safe); nil only when OpenSSL cannot allocate a store.
    static let shared: SystemTrustRoots? = {
        guard let store = X509_STORE_new() else { return nil }
        // A system without a bundle or a directory is not an error: it has no roots to trust, and
        // verification against them fails with `.tlsUntrusted` like any unknown issuer.
        addDirectory(to: store)
        let directoryOnly = !namesOwnFile() && hasHashedCertificates(directory())
        if !directoryOnly, let lookup = X509_STORE_add_lookup(store, X509_LOOKUP_file()),
           courier_X509_LOOKUP_load_default_file(lookup) != 1 {
            _ = TLSErrors.drain()
        }
        return SystemTrustRoots(store: store, isDirectoryOnly: directoryOnly)
    }()

    /// Whether SSL_CERT_FILE names a file other than OpenSSL's default one (which it often merely
    /// repeats, as images set it for tools that read no default: then the directory serves).
    static func namesOwnFile() -> Bool {
        guard let named = getenv(X509_get_default_cert_file_env()) else { return false }
        let own = resolved(named)
        return own == nil || own != resolved(X509_get_default_cert_file())
    }

    /// Whether `path` is OpenSSL's default bundle and the shared store is the system's hashed
    /// directory alone, which holds the same roots and looks them up one at a time.
    static func isSystemBundle(_ path: String) -> Bool {
        guard shared?.isDirectoryOnly == true, let file = resolved(path) else { return false }
        return file == resolved(X509_get_default_cert_file())
    }

    private static func resolved(_ path: UnsafePointer<CChar>) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// The system's hashed CA directory: SSL_CERT_DIR's first entry, else OpenSSL's default.
    static func directory() -> String {
        if let named = getenv(X509_get_default_cert_dir_env()) {
            return String(cString: named).split(separator: ":").first.map(String.init) ?? ""
        }
        return String(cString: X509_get_default_cert_dir())
    }

    /// Whether `path` holds a certificate under OpenSSL's hashed name (eight hex digits, a dot and
    /// a digit: what c_rehash and update-ca-certificates write).
    static func hasHashedCertificates(_ path: String) -> Bool {
        guard let directory = opendir(path) else { return false }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            // (d_name is a fixed array of 256 bytes, NUL-terminated: indexes 0 to 9 are in it.)
            let isHashed = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[8] == UInt8(ascii: ".") && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(name[9])
                    && name[..<8].allSatisfy { ByteClass.hexValue($0) != nil }
            }
            if isHashed { return true }
        }
        return false
    }

    /// Adds the system's hashed directory to `store` (looked up lazily).
    static func addDirectory(to store: OpaquePointer) {
        if let lookup = X509_STORE_add_lookup(store, X509_LOOKUP_hash_dir()), courier_X509_LOOKUP_add_default_dir(lookup) != 1 {
            _ = TLSErrors.drain()
        }
    }

    private init(store: OpaquePointer, isDirectoryOnly: Bool) {
        self.store = store
        self.isDirectoryOnly = isDirectoryOnly
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
        Self.addDirectory(to: target)
    }
}
