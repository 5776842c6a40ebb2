import COpenSSL
import CourierCore

/// Fuzz target: `-w %{certs}`'s reader of a server's certificates (the bytes are the server's:
/// any extension, key type, serial or name a certificate can carry). The input is DER; whatever
/// OpenSSL accepts as a certificate is read into curl's certinfo fields.
///
/// Checked: nothing traps; the fields come in curl's order (Subject first, the PEM last) with
/// no empty name; the PEM field decodes back to the very DER bytes that were read.
package enum CertificateReading {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var cursor: UnsafePointer<UInt8>? = base
        guard let certificate = d2i_X509(nil, &cursor, input.count) else { return }
        defer { X509_free(certificate) }
        let consumed = cursor.map { $0 - base } ?? 0
        let info = CertificateInfo(certificate: certificate)
        guard let first = info.fields.first, let last = info.fields.last else { return }  // no memory
        precondition(first.name == "Subject" && info.fields[1].name == "Issuer", "fields out of order: \(info.fields.map(\.name))")
        precondition(last.name == "Cert" && last.value.hasPrefix("-----BEGIN CERTIFICATE-----\n"), "the PEM is last")
        precondition(!info.fields.contains { $0.name.isEmpty }, "a field without a name")
        // OpenSSL re-encodes what it parsed; the PEM holds that encoding, which must parse again.
        var reencoded: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(certificate, &reencoded)
        guard length > 0, let reencoded else { return }
        defer { courier_OPENSSL_free(reencoded) }
        let der = Array(UnsafeBufferPointer(start: reencoded, count: Int(length)))
        precondition(pemBody(last.value) == der, "the PEM field is not the certificate (\(consumed) bytes read)")
    }

    /// The DER inside one PEM block.
    private static func pemBody(_ pem: String) -> [UInt8]? {
        let lines = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        return Base64.decode(lines.joined())
    }
}
