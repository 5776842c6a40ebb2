import COpenSSL

/// What a TLS connection agreed on and whom it talks to, read from OpenSSL on demand (only
/// `courier -v` asks: nothing is stored per connection or per request for it).
package struct TLSDetails: Sendable, Equatable {
    /// "TLSv1.3".
    package var version: String
    /// "TLS_AES_256_GCM_SHA384".
    package var cipher: String
    /// The protocol the server chose by ALPN ("http/1.1"), "" when it chose none.
    package var alpn: String
    /// The server certificate's subject and issuer ("CN=localhost; O=Example"), and its validity
    /// ("Dec  1 00:00:00 2026 GMT", OpenSSL's print format, as curl shows it).
    package var subject: String
    package var issuer: String
    package var notBefore: String
    package var notAfter: String
    /// OpenSSL's verification result (0: verified).
    package var verifyResult: Int32
}

extension TLSSession {
    package var details: TLSDetails {
        let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? ""
        var protocolName: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &protocolName, &length)
        let alpn = protocolName.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) } ?? ""
        var details = TLSDetails(version: String(cString: SSL_get_version(ssl)), cipher: cipher, alpn: alpn,
                                 subject: "", issuer: "", notBefore: "", notAfter: "", verifyResult: verifyResult)
        if let certificate = SSL_get1_peer_certificate(ssl) {
            defer { X509_free(certificate) }
            details.subject = Self.text(of: X509_get_subject_name(certificate))
            details.issuer = Self.text(of: X509_get_issuer_name(certificate))
            details.notBefore = Self.text(of: X509_get0_notBefore(certificate))
            details.notAfter = Self.text(of: X509_get0_notAfter(certificate))
        }
        return details
    }

    /// "CN=localhost; O=Example" from a name.
    private static func text(of name: OpaquePointer?) -> String {
        guard let name, let line = X509_NAME_oneline(name, nil, 0) else { return "" }
        defer { courier_OPENSSL_free(line) }
        return String(cString: line).split(separator: "/").joined(separator: "; ")
    }

    /// A time as ASN1_TIME_print writes it.
    private static func text(of time: UnsafePointer<ASN1_TIME>?) -> String {
        guard let time, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard ASN1_TIME_print(bio, time) == 1 else { return "" }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = BIO_read(bio, &buffer, Int32(buffer.count))
        return count > 0 ? String(decoding: buffer[..<Int(count)], as: UTF8.self) : ""
    }
}
