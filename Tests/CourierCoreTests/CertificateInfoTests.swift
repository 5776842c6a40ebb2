import Foundation
import Testing
@testable import CourierCore

/// curl's certinfo fields (`courier -w %{certs}`) for the key types and odd values a server's
/// certificate may carry, from the certinfo fuzz target's seeds (DER files in Tests/Fuzz/certinfo).
@Suite("Certificate info")
struct CertificateInfoTests {
    func info(_ name: String) throws -> CertificateInfo {
        let path = FuzzCorpusTests.root + "/certinfo/" + name + ".der"
        let der = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return try #require(der.withUnsafeBytes { CertificateInfo(der: $0) }, "\(name) parses")
    }

    func value(_ info: CertificateInfo, _ name: String) -> String? { info.fields.first { $0.name == name }?.value }

    @Test func rsaLeafInCurlsOrder() throws {
        let leaf = try info("rsa-leaf")
        #expect(leaf.fields.map(\.name) == ["Subject", "Issuer", "Version", "Serial Number", "Signature Algorithm", "Public Key Algorithm",
                                            "X509v3 Basic Constraints", "X509v3 Key Usage", "X509v3 Extended Key Usage",
                                            "X509v3 Subject Alternative Name", "X509v3 Subject Key Identifier",
                                            "X509v3 Authority Key Identifier", "Start date", "Expire date", "RSA Public Key",
                                            "rsa(n)", "rsa(e)", "Signature", "Cert"])
        #expect(value(leaf, "Subject") == "CN = localhost" && value(leaf, "Serial Number") == "1000")
        #expect(value(leaf, "RSA Public Key") == "2048" && value(leaf, "rsa(e)") == "10001")
        #expect(value(leaf, "Start date") == "Jan  1 00:00:00 2024 GMT")
        let text = leaf.text
        #expect(text.hasPrefix("Subject:CN = localhost\nIssuer:CN = Courier Test CA\nVersion:2\n"))
        #expect(text.contains("\n-----BEGIN CERTIFICATE-----\n") && !text.contains("Cert:") && text.hasSuffix("-----END CERTIFICATE-----\n"))
    }

    @Test func dsaKeyNegativeSerialAndAnEmailName() throws {
        let dsa = try info("dsa-negative-serial")
        #expect(value(dsa, "Serial Number") == "-05", "curl's sign and two digits per byte")
        #expect(value(dsa, "Subject") == "CN = dsa.test, emailAddress = a@b.example")
        let names = dsa.fields.map(\.name)
        #expect(names.contains("dsa(p)") && names.contains("dsa(q)") && names.contains("dsa(g)") && names.contains("dsa(pub_key)"))
        #expect(!names.contains("RSA Public Key"))
        #expect(value(dsa, "dsa(g)").map { !$0.isEmpty && $0.allSatisfy(\.isHexDigit) } == true)
    }

    @Test func ecAndEd25519KeysShowNoNumbers() throws {
        let ec = try info("ec-extensions"), ed = try info("ed25519-constraints")
        #expect(value(ec, "Public Key Algorithm") == "id-ecPublicKey" && value(ed, "Public Key Algorithm") == "ED25519")
        for certificate in [ec, ed] {
            #expect(!certificate.fields.contains { $0.name.hasPrefix("rsa(") || $0.name.hasPrefix("dsa(") || $0.name == "RSA Public Key" })
        }
        #expect(value(ec, "Subject") == #"C = DE, O = "Example, Inc.", OU = \C3\83\C2\9Cnit, CN = ec.test"#, "OpenSSL's one-line escaping, as curl shows it")
        #expect(value(ec, "Authority Information Access") == "OCSP - URI:http://ocsp.example/")
        #expect(value(ed, "X509v3 Name Constraints")?.contains("Permitted:") == true)
    }

    @Test func notACertificate() {
        #expect(Array("not DER".utf8).withUnsafeBytes { CertificateInfo(der: $0) } == nil)
    }
}
