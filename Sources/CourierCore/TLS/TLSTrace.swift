import COpenSSL

/// The TLS lines of a `ConnectionTrace`, in curl's words: each handshake message as OpenSSL sees
/// it go out or come in, then what the handshake agreed on and the chain it was shown.
extension TLSSession {
    /// Starts recording handshake messages into `trace` (before the handshake starts).
    func record(into trace: ConnectionTrace) {
        self.trace = trace
        SSL_set_msg_callback(ssl, TLSSession.messageCallback)
        if configuration.offersALPN { trace.add("ALPN: offers \(alpn.text)") }
        if let file = configuration.caFile { trace.add(" CAfile: \(file)") }
        if let directory = configuration.caDirectory { trace.add(" CApath: \(directory)") }
        if configuration.useSystemTrustStore, configuration.verification == .full {
            trace.add(" CAfile: \(String(cString: X509_get_default_cert_file()))")
            trace.add(" CApath: \(String(cString: X509_get_default_cert_dir()))")
        }
    }

    /// OpenSSL's message callback: one line per handshake message, change-cipher-spec and alert.
    static let messageCallback: @convention(c) (Int32, Int32, Int32, UnsafeRawPointer?, Int, OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
        written, version, contentType, bytes, length, ssl, _ in
        guard let ssl, let bytes, length > 0, let pointer = SSL_get_ex_data(ssl, TLSContext.sessionIndex) else { return }
        let session = Unmanaged<TLSSession>.fromOpaque(pointer).takeUnretainedValue()
        guard let trace = session.trace,
              let line = TLSSession.describeMessage(written: written != 0, version: version, contentType: contentType,
                                                    first: bytes.load(as: UInt8.self),
                                                    second: length > 1 ? bytes.load(fromByteOffset: 1, as: UInt8.self) : 0)
        else { return }
        trace.add(line.text)
        if let step = line.handshakeStep { trace.lastHandshakeMessage = step }
    }

    /// curl's line for one record-layer message ("TLSv1.3 (OUT), TLS handshake, Client hello (1):"),
    /// nil for what it does not show (record headers, inner content types, application data).
    static func describeMessage(written: Bool, version: Int32, contentType: Int32, first: UInt8, second: UInt8)
        -> (text: String, handshakeStep: String?)? {
        let direction = written ? "OUT" : "IN"
        let name: String
        switch version {
        case 0x0304: name = "TLSv1.3"
        case 0x0303: name = "TLSv1.2"
        case 0x0302: name = "TLSv1.1"
        case 0x0301: name = "TLSv1.0"
        default: name = "TLS"
        }
        switch contentType {
        case 20:
            return ("\(name) (\(direction)), TLS change cipher, Change cipher spec (1):", nil)
        case 21:
            let value = Int32(first) << 8 | Int32(second)
            let text = String(cString: SSL_alert_desc_string_long(value))
            return ("\(name) (\(direction)), TLS alert, \(text) (\(value)):", nil)
        case 22:
            let message = handshakeMessageName(first)
            return ("\(name) (\(direction)), TLS handshake, \(message) (\(first)):", "\(message) (\(direction))")
        default:
            return nil
        }
    }

    /// The names curl gives handshake message types (RFC 8446 section 4, RFC 5246 section 7.4).
    static func handshakeMessageName(_ type: UInt8) -> String {
        switch type {
        case 0: return "Hello request"
        case 1: return "Client hello"
        case 2: return "Server hello"
        case 4: return "Newsession Ticket"
        case 5: return "End of early data"
        case 8: return "Encrypted Extensions"
        case 11: return "Certificate"
        case 12: return "Server key exchange"
        case 13: return "Request CERT"
        case 14: return "Server finished"
        case 15: return "CERT verify"
        case 16: return "Client key exchange"
        case 20: return "Finished"
        case 22: return "Certificate Status"
        case 24: return "Key update"
        case 254: return "Message hash"
        default: return "Unknown (\(type))"
        }
    }

    /// What the handshake agreed on and the chain it was shown, as curl's `-v` prints them after
    /// a handshake (also after one whose certificate Courier then refuses: the chain says why).
    func handshakeSummary() -> [String] {
        var lines: [String] = []
        let details = self.details
        var parts = [details.version, details.cipher]
        let group = courier_SSL_get_negotiated_group(ssl)
        if group != 0, let name = SSL_group_to_name(ssl, group) { parts.append(String(cString: name)) }
        var signature: Int32 = 0
        if courier_SSL_get_peer_signature_type_nid(ssl, &signature) == 1, signature != 0, let name = OBJ_nid2sn(signature) {
            parts.append(String(cString: name))
        }
        lines.append("SSL connection using " + parts.joined(separator: " / "))
        if configuration.offersALPN {
            lines.append(details.alpn.isEmpty ? "ALPN: server did not agree on a protocol. Uses default." : "ALPN: server accepted \(details.alpn)")
        }
        guard !details.subject.isEmpty else {
            lines.append("Server sent no certificate")
            return lines
        }
        lines.append("Server certificate:")
        lines.append(" subject: \(details.subject)")
        lines.append(" start date: \(details.notBefore)")
        lines.append(" expire date: \(details.notAfter)")
        if let matched = SSL_get0_peername(ssl) {
            lines.append(" subjectAltName: host \"\(host)\" matched cert's \"\(String(cString: matched))\"")
        }
        lines.append(" issuer: \(details.issuer)")
        if details.verifyResult == 0 {
            lines.append(" SSL certificate verify ok.")
        } else {
            let text = String(cString: X509_verify_cert_error_string(Int(details.verifyResult)))
            lines.append(" SSL certificate verify result: \(text) (\(details.verifyResult))")
        }
        if let chain = SSL_get_peer_cert_chain(ssl) {
            for level in 0..<courier_sk_X509_num(chain) {
                guard let certificate = courier_sk_X509_value(chain, level) else { continue }
                lines.append("  Certificate level \(level): " + Self.keyAndSignature(of: certificate))
            }
        }
        return lines
    }

    /// "Public key type RSA (2048/112 Bits/secBits), signed using sha256WithRSAEncryption".
    private static func keyAndSignature(of certificate: OpaquePointer) -> String {
        var text = "Public key type "
        if let key = X509_get0_pubkey(certificate) {
            let type = EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "unknown"
            text += "\(type) (\(EVP_PKEY_get_bits(key))/\(EVP_PKEY_get_security_bits(key)) Bits/secBits)"
        } else {
            text += "unknown"
        }
        let signature = OBJ_nid2ln(X509_get_signature_nid(certificate)).map { String(cString: $0) } ?? "unknown"
        return text + ", signed using " + signature
    }
}
