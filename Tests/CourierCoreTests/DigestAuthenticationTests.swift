import Testing
@testable import CourierCore

/// Digest authentication's pure parts: reading challenges out of `WWW-Authenticate` values
/// (several per value, quoted strings, token68s, garbage), choosing the one to answer, and the
/// answer itself checked against RFC 7616 section 3.9.1's worked example.
@Suite("Digest authentication")
struct DigestAuthenticationTests {
    typealias Parsed = AuthChallengeParser.Challenge

    @Test func challengesAreReadWhereverTheyAre() {
        let parsed = AuthChallengeParser.challenges(in: [
            #"Basic realm="a, b", Digest realm="x\"y", nonce=abc, qop="auth, auth-int""#,
            "Negotiate YIIBhw==, Bearer",
        ])
        #expect(parsed == [Parsed(scheme: "basic", parameters: ["realm": "a, b"]),
                           Parsed(scheme: "digest", parameters: ["realm": #"x"y"#, "nonce": "abc", "qop": "auth, auth-int"]),
                           Parsed(scheme: "negotiate", parameters: [:]), Parsed(scheme: "bearer", parameters: [:])])
        #expect(AuthChallengeParser.challenges(in: [#"Digest realm="unterminated"#]) == [Parsed(scheme: "digest", parameters: [:])])
        #expect(AuthChallengeParser.challenges(in: ["", ",,,", "=x", "\u{1}"]).isEmpty)
        #expect(AuthChallengeParser.challenges(in: ["Digest REALM=r, realm=second"]) == [Parsed(scheme: "digest", parameters: ["realm": "r"])],
                "names are case-insensitive, and the first of a repeated one counts")
    }

    @Test func theStrongestAnswerableChallengeIsChosen() throws {
        let both = ["Digest realm=r, nonce=n1, algorithm=MD5, qop=auth", "Digest realm=r, nonce=n2, algorithm=SHA-256, qop=auth"]
        #expect(DigestChallenge.best(in: both)?.algorithm == .sha256)
        let legacy = try #require(DigestChallenge.best(in: ["Digest realm=r, nonce=n"]))
        #expect(legacy.algorithm == .md5 && !legacy.qopAuth, "RFC 2069: MD5, no qop")
        let session = try #require(DigestChallenge.best(in: ["Digest realm=r, nonce=n, algorithm=sha-256-sess, stale=TRUE, userhash=true"]))
        #expect(session.session && session.stale && session.userhash && session.algorithm == .sha256)
        for unanswerable in ["Digest realm=r", "Digest nonce=n", "Digest realm=r, nonce=n, algorithm=SHA-1",
                             "Digest realm=r, nonce=n, qop=auth-int", "Basic realm=r"] {
            #expect(DigestChallenge.best(in: [unanswerable]) == nil, "\(unanswerable)")
        }
    }

    /// RFC 7616 section 3.9.1: Mufasa, "Circle of Life", GET /dir/index.html.
    @Test func theAnswerMatchesTheRFCsExample() throws {
        let login = DigestLogin(user: "Mufasa", password: "Circle of Life")
        let values = [#"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, "#
                      + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#]
        let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"
        var challenge = try #require(DigestChallenge.best(in: values))
        let sha = challenge.answer(login, method: "GET", uri: "/dir/index.html", cnonce: cnonce)
        #expect(sha.contains(#"response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1""#), "\(sha)")
        #expect(sha.hasPrefix(#"Digest username="Mufasa", realm="http-auth@example.org", "#))
        #expect(sha.contains("qop=auth, nc=00000001, cnonce=\"\(cnonce)\"") && sha.contains(#"opaque="FQhe/"#))
        challenge.algorithm = .md5
        let md5 = challenge.answer(login, method: "GET", uri: "/dir/index.html", cnonce: cnonce)
        #expect(md5.contains(#"response="8ca523f5e9506fed4657c9700eebdbec""#), "\(md5)")
        challenge.userhash = true
        #expect(!challenge.answer(login, method: "GET", uri: "/", cnonce: cnonce).contains("Mufasa"), "a hashed user name")
        let quoted = challenge.answer(DigestLogin(user: #"a"b\c"#, password: "p"), method: "GET", uri: "/", cnonce: cnonce)
        #expect(!quoted.contains(#"a"b"#))
        challenge.userhash = false
        let unsafe = challenge.answer(DigestLogin(user: "ann\r\nX-Injected: 1", password: "p"), method: "GET", uri: "/", cnonce: cnonce)
        #expect(!unsafe.unicodeScalars.contains { $0.value < 0x20 }, "a line break never reaches the field: \(unsafe)")
        let encoded = challenge.answer(DigestLogin(user: "Jäsøn\nDoe", password: "p"), method: "GET", uri: "/", cnonce: cnonce)
        #expect(encoded.contains("username*=UTF-8''J%C3%A4s%C3%B8n%0ADoe"), "RFC 7616 section 3.4.4: \(encoded)")
        #expect(DigestChallenge.makeClientNonce().count == 32 && DigestChallenge.makeClientNonce() != DigestChallenge.makeClientNonce())
    }
}
