import COpenSSL
import Foundation
import Testing
@testable import CourierCore

/// The system roots are read once and shared (no socket: the stores themselves are checked).
@Suite("Trust roots")
struct TrustRootTests {
    /// Debian's bundle, when the machine has one (make test installs ca-certificates with OpenSSL).
    let bundle = "/etc/ssl/certs/ca-certificates.crt"

    @Test func systemOnlyContextsShareOneStore() throws {
        let first = try TLSContext.make(TLSConfiguration()).get()
        var other = TLSConfiguration()
        other.minimumVersion = .tls13
        let second = try TLSContext.make(other).get()
        #expect(first.sharesTheSystemRoots && second.sharesTheSystemRoots)
        if FileManager.default.fileExists(atPath: bundle) {
            #expect(first.trustedObjectCount > 50, "the system bundle was read")
        }
    }

    @Test func extraRootsAreAddedToTheSystemOnes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-roots-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let extra = directory.appendingPathComponent("extra.pem").path
        try Self.selfSignedPEM().write(toFile: extra, atomically: true, encoding: .utf8)

        let system = try TLSContext.make(TLSConfiguration()).get()
        let withExtra = try TLSContext.make(TLSConfiguration(caFile: extra)).get()
        #expect(!withExtra.sharesTheSystemRoots, "a context with extra roots has a store of its own")
        #expect(withExtra.trustedObjectCount == system.trustedObjectCount + 1)
        #expect(system.trustedObjectCount == (try TLSContext.make(TLSConfiguration()).get()).trustedObjectCount,
                "the shared store did not get the extra root")

        var onlyExtra = TLSConfiguration(caFile: extra)
        onlyExtra.useSystemTrustStore = false
        #expect(try TLSContext.make(onlyExtra).get().trustedObjectCount == 1)
        var nothing = TLSConfiguration()
        nothing.useSystemTrustStore = false
        #expect(try TLSContext.make(nothing).get().trustedObjectCount == 0)
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
