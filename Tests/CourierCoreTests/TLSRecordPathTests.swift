import COpenSSL
import Testing
@testable import CourierCore

/// The client's TLS record path (`TLSSession`) pumped against an OpenSSL server in memory: no
/// sockets, every byte handed over by the test, so the order and grouping of records is the
/// test's to choose.
@Suite("TLS record path")
struct TLSRecordPathTests {
    /// An OpenSSL server on memory BIOs with a throwaway P-256 certificate for "localhost".
    final class MemoryServer {
        let ssl: OpaquePointer
        private let context: OpaquePointer
        private let input: OpaquePointer
        private let output: OpaquePointer

        init() {
            let key = Self.makeKey()
            let certificate = Self.makeCertificate(key: key)
            context = SSL_CTX_new(TLS_server_method())!
            SSL_CTX_use_certificate(context, certificate)
            SSL_CTX_use_PrivateKey(context, key)
            X509_free(certificate)
            EVP_PKEY_free(key)
            ssl = SSL_new(context)!
            input = BIO_new(BIO_s_mem())!
            output = BIO_new(BIO_s_mem())!
            SSL_set_bio(ssl, input, output)
            SSL_set_accept_state(ssl)
        }

        deinit {
            SSL_free(ssl)
            SSL_CTX_free(context)
        }

        func receive(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
        }

        /// Everything the server wrote since the last call.
        func sent() -> [UInt8] {
            var all: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let n = buffer.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
                guard n > 0 else { return all }
                all += buffer[..<Int(n)]
            }
        }

        /// Reads the ClientHello and writes the server's flight, then `halfRTT` as application
        /// data before the client's Finished (RFC 8446 section 4.4.4's 0.5-RTT data): records that
        /// follow the server's Finished in the same flight, as Go's session ticket does.
        func answerHello(halfRTT: [UInt8]) {
            var buffer = [UInt8](repeating: 0, count: 1024)
            var read = 0
            let status = buffer.withUnsafeMutableBytes { SSL_read_early_data(ssl, $0.baseAddress, $0.count, &read) }
            #expect(status == SSL_READ_EARLY_DATA_FINISH, "the server read the ClientHello")
            var written = 0
            let wrote = halfRTT.withUnsafeBytes { SSL_write_early_data(ssl, $0.baseAddress, $0.count, &written) }
            #expect(wrote == 1 && written == halfRTT.count, "0.5-RTT data written")
        }

        /// Writes application data (after the handshake).
        func write(_ bytes: [UInt8]) {
            var written = 0
            _ = bytes.withUnsafeBytes { SSL_write_ex(ssl, $0.baseAddress, $0.count, &written) }
        }

        /// Reads the client's Finished (and anything after it).
        func readClient() {
            var buffer = [UInt8](repeating: 0, count: 1024)
            var read = 0
            _ = buffer.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress, $0.count, &read) }
        }

        private static func makeKey() -> OpaquePointer {
            let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil)!
            defer { EVP_PKEY_CTX_free(context) }
            EVP_PKEY_keygen_init(context)
            EVP_PKEY_CTX_set_group_name(context, "P-256")
            var key: OpaquePointer?
            EVP_PKEY_generate(context, &key)
            return key!
        }

        private static func makeCertificate(key: OpaquePointer) -> OpaquePointer {
            let certificate = X509_new()!
            X509_set_version(certificate, 2)
            ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1)
            X509_gmtime_adj(X509_getm_notBefore(certificate), 0)
            X509_gmtime_adj(X509_getm_notAfter(certificate), 3600)
            X509_set_pubkey(certificate, key)
            let name = X509_get_subject_name(certificate)
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "localhost", -1, -1, 0)
            X509_set_issuer_name(certificate, name)
            X509_sign(certificate, key, EVP_sha256())
            return certificate
        }
    }

    static func client() -> TLSSession {
        var configuration = TLSConfiguration()
        configuration.verification = .insecureAcceptAnyCertificate
        configuration.minimumVersion = .tls13
        let context = try! TLSContext.make(configuration).get()
        return TLSSession(context: context, host: "localhost", port: 443, session: nil)!
    }

    static func plaintext(_ session: TLSSession) -> (bytes: [UInt8], last: TLSSession.ReadResult) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16_384, alignment: 16)
        defer { buffer.deallocate() }
        var bytes: [UInt8] = []
        while true {
            let result = session.readPlaintext(into: buffer)
            guard case .bytes(let count) = result else { return (bytes, result) }
            bytes += buffer[..<count]
        }
    }

    /// Go's crypto/tls (Caddy) sends its session ticket right behind its Finished; a client that
    /// dropped what followed the handshake in the same read lost a record, and the next one failed
    /// its MAC ("decryption failed or bad record mac").
    @Test func recordsBehindTheServersFinishedInTheSameReadAreRead() {
        let server = MemoryServer()
        let client = Self.client()
        _ = client.handshake(UnsafeRawBufferPointer(start: nil, count: 0))
        server.receive(Array(client.outgoing.bytes))
        client.outgoing.clear()
        server.answerHello(halfRTT: Array("early".utf8))
        let flight = server.sent()
        let progress = flight.withUnsafeBytes { bytes -> TLSSession.HandshakeProgress in
            let progress = client.handshake(bytes)
            guard case .done = progress else { return progress }
            // Still inside the read that brought the flight: what followed the Finished is read now.
            let (read, last) = Self.plaintext(client)
            #expect(String(decoding: read, as: UTF8.self) == "early")
            #expect({ if case .wantMore = last { return true } else { return false } }())
            return progress
        }
        #expect({ if case .done = progress { return true } else { return false } }(), "handshake: \(progress)")

        // The next record decrypts too: no record was skipped.
        server.receive(Array(client.outgoing.bytes))
        client.outgoing.clear()
        server.readClient()
        server.write(Array("after".utf8))
        let after = server.sent()
        let (read, last) = after.withUnsafeBytes { bytes -> ([UInt8], TLSSession.ReadResult) in
            client.receive(bytes)
            return Self.plaintext(client)
        }
        #expect(String(decoding: read, as: UTF8.self) == "after")
        if case .failed(let error) = last { Issue.record("the record after the handshake failed: \(error)") }
    }
}
