import COpenSSL
import Foundation
import Testing
@testable import CourierCore

/// The system roots are read once and shared (no socket: the stores themselves are checked).
@Suite("Trust roots")
struct TrustRootTests {
    @Test func systemOnlyContextsShareOneStore() throws {
        let first = try TLSContext.make(TLSConfiguration()).get()
        var other = TLSConfiguration()
        other.minimumVersion = .tls13
        let second = try TLSContext.make(other).get()
        #expect(first.sharesTheSystemRoots && second.sharesTheSystemRoots)
        if let root = try Self.firstSystemRoot() {
            #expect(Self.trusts(first, root), "a system root is found")
        }
    }

    /// Where the system's directory is hashed, its roots are looked up there when a chain needs
    /// them: the bundle is not parsed up front (85 % of a one-request run's instructions when it
    /// was).
    @Test func theBundleIsNotParsedWhereTheDirectoryServes() throws {
        guard SystemTrustRoots.hasHashedCertificates(SystemTrustRoots.directory()), !SystemTrustRoots.namesOwnFile() else { return }
        let system = try TLSContext.make(TLSConfiguration()).get()
        // (Roots other tests' chains needed may have been looked up by now: a handful, not 140.)
        #expect(system.trustedObjectCount < 20)
    }

    /// The system's bundle named as a CA file (SSL_CERT_FILE passed on by a binding) is the
    /// system store, not a second parse of the bundle; a copy of it elsewhere is a file of its own.
    @Test func theSystemBundleNamedAsACAFileIsTheSystemStore() throws {
        let bundle = String(cString: X509_get_default_cert_file())
        guard SystemTrustRoots.isSystemBundle(bundle) else { return }
        var named = TLSConfiguration(caFile: bundle)
        named.useSystemTrustStore = false
        let context = try TLSContext.make(named).get()
        #expect(context.sharesTheSystemRoots)
        if let root = try Self.firstSystemRoot() {
            #expect(Self.trusts(context, root))
        }
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bundle-\(getpid()).pem").path
        try Data(contentsOf: URL(fileURLWithPath: bundle)).write(to: URL(fileURLWithPath: copy))
        defer { try? FileManager.default.removeItem(atPath: copy) }
        #expect(!SystemTrustRoots.isSystemBundle(copy))
    }

    @Test func hashedDirectoriesAreToldApart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-hashed-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(!SystemTrustRoots.hasHashedCertificates(directory.path), "empty")
        for name in ["ca.pem", "0123abcd.pem", "0123abcg.0", "0123abcd."] {
            FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data())
        }
        #expect(!SystemTrustRoots.hasHashedCertificates(directory.path), "no name of eight hex digits, a dot and a digit")
        FileManager.default.createFile(atPath: directory.appendingPathComponent("0123abcd.0").path, contents: Data())
        #expect(SystemTrustRoots.hasHashedCertificates(directory.path))
        #expect(!SystemTrustRoots.hasHashedCertificates(directory.path + "/missing"))
    }

    @Test func extraRootsAreAddedToTheSystemOnes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-roots-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let extra = directory.appendingPathComponent("extra.pem").path
        let extraPEM = try Self.selfSignedPEM()
        try extraPEM.write(toFile: extra, atomically: true, encoding: .utf8)

        let system = try TLSContext.make(TLSConfiguration()).get()
        let withExtra = try TLSContext.make(TLSConfiguration(caFile: extra)).get()
        #expect(!withExtra.sharesTheSystemRoots, "a context with extra roots has a store of its own")
        #expect(Self.trusts(withExtra, extraPEM))
        #expect(!Self.trusts(system, extraPEM), "the shared store did not get the extra root")
        if let root = try Self.firstSystemRoot() {
            #expect(Self.trusts(withExtra, root), "the system's roots stay trusted beside the extra one")
        }

        var onlyExtra = TLSConfiguration(caFile: extra)
        onlyExtra.useSystemTrustStore = false
        let only = try TLSContext.make(onlyExtra).get()
        #expect(only.trustedObjectCount == 1 && Self.trusts(only, extraPEM))
        if let root = try Self.firstSystemRoot() {
            #expect(!Self.trusts(only, root), "without the system store, only the extra root")
        }
        var nothing = TLSConfiguration()
        nothing.useSystemTrustStore = false
        #expect(try TLSContext.make(nothing).get().trustedObjectCount == 0)
    }

    /// The first certificate of Debian's bundle (nil on a machine without one).
    static func firstSystemRoot() throws -> String? {
        guard let text = try? String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8),
              let end = text.range(of: "-----END CERTIFICATE-----") else { return nil }
        return String(text[..<end.upperBound]) + "\n"
    }

    /// Whether `context`'s store finds the issuer of the self-signed certificate `pem` (itself):
    /// what verifying a chain that ends in it asks the store.
    static func trusts(_ context: TLSContext, _ pem: String) -> Bool {
        guard let bio = pem.withCString({ BIO_new_mem_buf($0, Int32(strlen($0))) }) else { return false }
        defer { BIO_free(bio) }
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil),
              let store = SSL_CTX_get_cert_store(context.context), let verifying = X509_STORE_CTX_new() else { return false }
        defer { X509_free(certificate); X509_STORE_CTX_free(verifying) }
        guard X509_STORE_CTX_init(verifying, store, certificate, nil) == 1 else { return false }
        var issuer: OpaquePointer?
        defer { if let issuer { X509_free(issuer) } }
        return X509_STORE_CTX_get1_issuer(&issuer, verifying, certificate) == 1
    }

    /// A throwaway self-signed certificate, made with OpenSSL here (no fixture file to keep).
    static func selfSignedPEM() throws -> String {
        let generator = try #require(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil))
        defer { EVP_PKEY_CTX_free(generator) }
        var generated: OpaquePointer?
        try #require(EVP_PKEY_keygen_init(generator) == 1 && EVP_PKEY_keygen(generator, &generated) == 1)
        let key = try #require(generated)
        defer { EVP_PKEY_free(key) }
        let certificate = try #require(X509_new())
        defer { X509_free(certificate) }
        X509_set_version(certificate, 2)
        ASN1_INTEGER_set(X509_get_serialNumber(certificate), 7)
        X509_gmtime_adj(X509_getm_notBefore(certificate), 0)
        X509_gmtime_adj(X509_getm_notAfter(certificate), 3600)
        X509_set_pubkey(certificate, key)
        let name = X509_get_subject_name(certificate)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "courier extra root", -1, -1, 0)
        X509_set_issuer_name(certificate, name)
        X509_sign(certificate, key, nil)  // Ed25519 signs without a separate digest
        let bio = try #require(BIO_new(BIO_s_mem()))
        defer { BIO_free(bio) }
        PEM_write_bio_X509(bio, certificate)
        var pointer: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &pointer)
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: length), as: UTF8.self)
    }
}
