import COpenSSL

/// One certificate of the chain a server sent, as curl's certinfo lists it (`-w %{certs}`): named
/// text fields in curl's order — subject, issuer, version, serial number, the signature and key
/// algorithms, each X509v3 extension, the validity, the public key's size and numbers, the
/// signature, the certificate in PEM. Read on demand from the live connection (only when asked:
/// nothing is kept per connection for it).
package struct CertificateInfo: Sendable, Equatable {
    package var fields: [Field]

    package struct Field: Sendable, Equatable {
        package var name: String
        package var value: String
    }

    /// The fields of one certificate (an OpenSSL `X509`, borrowed); empty when no memory BIO can be made.
    package init(certificate: OpaquePointer) {
        guard let bio = BIO_new(BIO_s_mem()) else {
            fields = []
            return
        }
        defer { BIO_free(bio) }
        var reader = CertificateReader(bio: bio)
        fields = reader.read(certificate).fields
    }

    /// The fields of a DER-encoded certificate (tests, the fuzz target); nil when OpenSSL refuses it.
    package init?(der: UnsafeRawBufferPointer) {
        guard let base = der.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var cursor: UnsafePointer<UInt8>? = base
        guard let certificate = d2i_X509(nil, &cursor, der.count) else { return nil }
        defer { X509_free(certificate) }
        self.init(certificate: certificate)
    }

    init(fields: [Field]) { self.fields = fields }

    /// "name:value" lines, curl's `%{certs}` form (the PEM's own name dropped, as curl does).
    package var text: String {
        var out = ""
        for field in fields {
            if field.name != "Cert" { out += field.name + ":" }
            out += field.value
            if !out.hasSuffix("\n") { out += "\n" }
        }
        return out
    }
}

extension TLSSession {
    /// The chain as the server sent it, leaf first (curl reads the same: the peer's chain, not the
    /// one verification built); empty before the handshake or when the peer sent none.
    package var peerCertificateInfo: [CertificateInfo] {
        guard let stack = SSL_get_peer_cert_chain(ssl) else { return [] }
        return (0..<courier_sk_X509_num(stack)).compactMap { courier_sk_X509_value(stack, $0).map(CertificateInfo.init(certificate:)) }
    }
}

/// Writes each field through one memory BIO with OpenSSL's own printers (the text curl shows).
private struct CertificateReader {
    let bio: OpaquePointer
    var fields: [CertificateInfo.Field] = []

    init(bio: OpaquePointer) { self.bio = bio }

    /// The BIO's text so far as field `name`, then an empty BIO for the next.
    private mutating func take(_ name: String) {
        var data: UnsafeMutablePointer<CChar>?
        let count = courier_BIO_get_mem_data(bio, &data)
        let value = data.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: max(0, count)), as: UTF8.self) } ?? ""
        _ = courier_BIO_reset(bio)
        fields.append(.init(name: name, value: value))
    }

    private func put(_ text: String) { _ = BIO_puts(bio, text) }

    mutating func read(_ x: OpaquePointer) -> CertificateInfo {
        _ = X509_NAME_print_ex(bio, X509_get_subject_name(x), 0, courier_XN_FLAG_ONELINE())
        take("Subject")
        _ = X509_NAME_print_ex(bio, X509_get_issuer_name(x), 0, courier_XN_FLAG_ONELINE())
        take("Issuer")
        put(String(X509_get_version(x), radix: 16))
        take("Version")
        if let serial = X509_get_serialNumber(x) {
            if serial.pointee.type == V_ASN1_NEG_INTEGER { put("-") }
            put(Self.hex(serial.pointee.data, Int(serial.pointee.length), separator: ""))
        }
        take("Serial Number")
        var signature: UnsafePointer<ASN1_BIT_STRING>?
        var algorithm: UnsafePointer<X509_ALGOR>?
        X509_get0_signature(&signature, &algorithm, x)
        if let algorithm {
            _ = i2a_ASN1_OBJECT(bio, algorithm.pointee.algorithm)
            take("Signature Algorithm")
        }
        if let key = X509_get_X509_PUBKEY(x) {
            var oid: OpaquePointer?
            if X509_PUBKEY_get0_param(&oid, nil, nil, nil, key) == 1, let oid {
                _ = i2a_ASN1_OBJECT(bio, oid)
                take("Public Key Algorithm")
            }
        }
        for index in 0..<X509_get_ext_count(x) {
            guard let ext = X509_get_ext(x, index) else { continue }
            var name = [CChar](repeating: 0, count: 128)
            _ = i2t_ASN1_OBJECT(&name, Int32(name.count), X509_EXTENSION_get_object(ext))
            if X509V3_EXT_print(bio, ext, 0, 0) != 1 { _ = ASN1_STRING_print(bio, X509_EXTENSION_get_data(ext)) }
            take(String(cString: name))
        }
        _ = ASN1_TIME_print(bio, X509_get0_notBefore(x))
        take("Start date")
        _ = ASN1_TIME_print(bio, X509_get0_notAfter(x))
        take("Expire date")
        if let key = X509_get0_pubkey(x) { readKey(key) }
        if let signature {
            put(Self.hex(signature.pointee.data, Int(signature.pointee.length), separator: ":", trailing: true))
            take("Signature")
        }
        _ = PEM_write_bio_X509(bio, x)
        take("Cert")
        return CertificateInfo(fields: fields)
    }

    /// RSA's size and numbers, DSA's and DH's parameters (curl shows none for EC keys).
    private mutating func readKey(_ key: OpaquePointer) {
        let numbers: [(String, String)]
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            put(String(EVP_PKEY_get_bits(key)))
            take("RSA Public Key")
            numbers = [("rsa(n)", "n"), ("rsa(e)", "e")]
        case EVP_PKEY_DSA:
            numbers = [("dsa(p)", "p"), ("dsa(q)", "q"), ("dsa(g)", "g"), ("dsa(pub_key)", "pub")]
        case EVP_PKEY_DH:
            numbers = [("dh(p)", "p"), ("dh(g)", "g"), ("dh(pub_key)", "pub")]
        default:
            numbers = []
        }
        for (name, parameter) in numbers {
            var number: OpaquePointer?
            guard EVP_PKEY_get_bn_param(key, parameter, &number) == 1, let number else { continue }
            _ = BN_print(bio, number)
            BN_free(number)
            take(name)
        }
    }

    /// Lower-case hex of `count` bytes, two digits each.
    private static func hex(_ bytes: UnsafeMutablePointer<UInt8>?, _ count: Int, separator: String, trailing: Bool = false) -> String {
        guard let bytes, count > 0 else { return "" }
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * (2 + separator.utf8.count))
        for i in 0..<count {
            out.append(digits[Int(bytes[i] >> 4)])
            out.append(digits[Int(bytes[i] & 0xF)])
            if trailing || i + 1 < count { out.append(contentsOf: separator.utf8) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
