import COpenSSL

/// A user name and password that answer an origin's Digest challenges (RFC 7616; curl's
/// `--digest`). Nothing is sent until the origin asks: a request goes out without credentials,
/// and a 401 whose `WWW-Authenticate` offers Digest is answered once, on the same connection,
/// with the request sent again (its body too, when it can be read again) and the 401 dropped.
/// The password never crosses the wire, and nothing is answered on another origin's behalf.
public struct DigestLogin: Sendable, Hashable {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Why the C ABI refuses it, or nil: a control character in the user name (Swift callers'
    /// such names go as RFC 7616's `username*`; the password is only hashed).
    package var problem: String? {
        ByteClass.hasControlCharacter(user) ? "a control character in a Digest user name" : nil
    }
}

/// One Digest challenge Courier can answer, read from a 401's `WWW-Authenticate` values.
package struct DigestChallenge: Equatable {
    package enum Algorithm: String, Equatable {
        case md5 = "MD5", sha256 = "SHA-256", sha512_256 = "SHA-512-256"
    }

    package var realm: String
    package var nonce: String
    package var opaque: String?
    package var algorithm: Algorithm
    /// The `-sess` variant (the first hash takes the nonces too).
    package var session: Bool
    /// The server offers `qop=auth` (without it, RFC 2069's answer: no nc, no cnonce).
    package var qopAuth: Bool
    /// The server asks for the user name hashed (`userhash=true`).
    package var userhash: Bool
    /// The nonce was stale: the credentials were right (RFC 7616 section 3.3).
    package var stale: Bool

    /// The challenge to answer among `values`: a Digest challenge with a realm and a nonce, an
    /// algorithm Courier has, and a qop of `auth` (or none); the strongest algorithm first (a
    /// server lists one challenge per algorithm). nil when there is none.
    package static func best(in values: [String]) -> DigestChallenge? {
        var found: [DigestChallenge] = []
        for challenge in AuthChallengeParser.challenges(in: values) where challenge.scheme == "digest" {
            let parameters = challenge.parameters
            guard let realm = parameters["realm"], let nonce = parameters["nonce"], !nonce.isEmpty else { continue }
            // What goes back in the answer must not carry control characters (a field's value
            // cannot hold line breaks; the rest would be refused on the way out).
            let echoed = [realm, nonce, parameters["opaque"] ?? ""]
            if echoed.contains(where: ByteClass.hasControlCharacter) { continue }
            var name = (parameters["algorithm"] ?? "MD5").uppercased()
            let session = name.hasSuffix("-SESS")
            if session { name.removeLast(5) }
            guard let algorithm = Algorithm(rawValue: name) else { continue }
            let qops = parameters["qop"].map { $0.split(separator: ",").map { $0.trimmingSpaces.lowercased() } }
            // Only auth-int offered: answering it would mean hashing the body; not done.
            if let qops, !qops.contains("auth") { continue }
            found.append(DigestChallenge(realm: realm, nonce: nonce, opaque: parameters["opaque"], algorithm: algorithm,
                                         session: session, qopAuth: qops != nil, userhash: parameters["userhash"]?.lowercased() == "true",
                                         stale: parameters["stale"]?.lowercased() == "true"))
        }
        let strength: [Algorithm] = [.sha512_256, .sha256, .md5]
        return found.min { strength.firstIndex(of: $0.algorithm)! < strength.firstIndex(of: $1.algorithm)! }
    }

    /// The `Authorization` value answering this challenge for `method` on `uri` (the request
    /// target as sent: path and query), with client nonce `cnonce` and nonce count 1.
    package func answer(_ login: DigestLogin, method: String, uri: String, cnonce: String) -> String {
        let nc = "00000001"
        var first = hash("\(login.user):\(realm):\(login.password)")
        if session { first = hash("\(first):\(nonce):\(cnonce)") }
        let second = hash("\(method):\(uri)")
        let response = qopAuth ? hash("\(first):\(nonce):\(nc):\(cnonce):auth:\(second)") : hash("\(first):\(nonce):\(second)")
        let user = userhash ? hash("\(login.user):\(realm)") : login.user
        var fields = [Self.usernameField(user), "realm=\(Self.quoted(realm))", "nonce=\(Self.quoted(nonce))",
                      "uri=\(Self.quoted(uri))", "algorithm=\(algorithm.rawValue)\(session ? "-sess" : "")",
                      "response=\"\(response)\""]
        if qopAuth { fields += ["qop=auth", "nc=\(nc)", "cnonce=\(Self.quoted(cnonce))"] }
        if let opaque { fields.append("opaque=\(Self.quoted(opaque))") }
        if userhash { fields.append("userhash=true") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// A fresh client nonce: 16 random bytes in hex.
    package static func makeClientNonce() -> String { Hex.random128() }

    /// The challenge's hash of `text`, in lower-case hex.
    private func hash(_ text: String) -> String {
        let type: OpaquePointer?
        switch algorithm {
        case .md5: type = EVP_md5()
        case .sha256: type = EVP_sha256()
        case .sha512_256: type = EVP_sha512_256()
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, type, nil) }
        return Hex.lowercase(digest[..<Int(length)])
    }

    /// `username="..."`, or RFC 7616 section 3.4.4's `username*=UTF-8''...` (RFC 8187's
    /// percent-encoding) for a name a quoted-string cannot carry: non-ASCII, or a control
    /// character, which in a quoted-string would break the field (a line break, a request split).
    private static func usernameField(_ user: String) -> String {
        guard user.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return "username=" + quoted(user) }
        var encoded: [UInt8] = []
        for byte in user.utf8 {
            if ByteClass.isToken(byte), byte != UInt8(ascii: "*"), byte != UInt8(ascii: "'"), byte != UInt8(ascii: "%") {
                encoded.append(byte)
            } else {
                CourierURL.appendEscape(byte, to: &encoded)
            }
        }
        return "username*=UTF-8''" + String(decoding: encoded, as: UTF8.self)
    }

    /// A quoted-string (RFC 9110 section 5.6.4): `"` and `\` escaped.
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            if character == "\"" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }
}
