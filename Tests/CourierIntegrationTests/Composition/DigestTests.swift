import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Digest authentication answered by the core (Tests/Servers/digest_server.py checks every answer
/// with its own arithmetic and records the Authorization of each request): SHA-256, MD5-sess with
/// an opaque, RFC 2069's legacy form, the strongest of two challenges, a stale nonce, a wrong
/// password answered once, bodies sent again, redirect hops answered each for its own URI, a body
/// that cannot be sent again; from Swift, C, Python's Engine and curl's --digest.
@Suite("Digest authentication")
struct DigestTests {
    let s = TestServers.shared
    let login = DigestLogin(user: "ann", password: "s3cret")

    /// The Authorization of every request the server saw ("" for none).
    func log(_ server: String) async throws -> [String] {
        let (t, _) = await fetch(server + "/log")
        return try #require(JSONSerialization.jsonObject(with: Data(t.responseBody)) as? [String])
    }

    @Test func eachAlgorithmIsAnsweredOnceWithoutAnyPreemptiveCredentials() async throws {
        let server = await s.privateDigestServer()
        for path in ["/sha256/a", "/md5sess/b", "/legacy/c", "/both/d", "/sha256/e?x=1&y=%20"] {
            let (t, _) = await fetch(server + path) { $0.digest = login }
            #expect(t.error == nil && t.status == 200 && t.responseBody == Array("GET \(path) 0".utf8), "\(path): \(t.status)")
            #expect(t.metrics.redirects == 0 && t.history.map(\.head.status) == [401], "the 401 is history, not a redirect")
        }
        let seen = try await log(server)
        #expect(seen.count == 10 && stride(from: 0, to: 10, by: 2).allSatisfy { seen[$0].isEmpty }, "nothing before the challenge")
        #expect(seen[1].contains("algorithm=SHA-256") && seen[3].contains("algorithm=MD5-sess") && seen[3].contains("opaque=\"0paque\""))
        #expect(!seen[5].contains("qop=") && !seen[5].contains("cnonce="), "RFC 2069: no qop, no cnonce")
        #expect(seen[7].contains("algorithm=SHA-256"), "the stronger of MD5 and SHA-256")
    }

    @Test func aStaleNonceIsAnsweredAgainAndAWrongPasswordIsNot() async throws {
        let server = await s.privateDigestServer()
        let (stale, _) = await fetch(server + "/stale/a") { $0.digest = login }
        #expect(stale.status == 200 && stale.history.count == 2, "\(stale.status)")
        let (wrong, _) = await fetch(server + "/sha256/a") { $0.digest = DigestLogin(user: "ann", password: "nope") }
        #expect(wrong.error == nil && wrong.status == 401 && wrong.responseBody == Array("who are you?".utf8))
        #expect(try await log(server).count == 3 + 2, "stale: none, answer, answer again; wrong: none, one answer")
    }

    @Test func bodiesGoAgainAndEachHopIsAnsweredForItsOwnURI() async throws {
        let server = await s.privateDigestServer()
        let (posted, _) = await fetch(server + "/sha256/post", method: .post, body: .bytes(Array(repeating: 1, count: 100_000))) {
            $0.digest = login
        }
        #expect(posted.status == 200 && posted.responseBody == Array("POST /sha256/post 100000".utf8))
        let (hops, _) = await fetch(server + "/sha256/hop") { $0.digest = login; $0.redirects.follow = true }
        #expect(hops.status == 200 && hops.responseBody == Array("GET /sha256/after 0".utf8) && hops.metrics.redirects == 1)
        let streamed = RequestBody.stream(BodyStream(length: 5, replayable: false) { BytesBodySource(Array("hello".utf8), pieceSize: 5) })
        let (unanswered, _) = await fetch(server + "/sha256/stream", method: .post, body: streamed) { $0.digest = login }
        #expect(unanswered.status == 401, "a body that cannot be read again is not sent again")
    }

    @Test func throughAnEngine() async throws {
        let server = await s.privateDigestServer()
        var configuration = Engine.Configuration()
        configuration.options.digest = login
        let api = Engine(host: server, configuration: configuration)
        let response = try await api.send(api.operation(path: "/sha256/engine"))
        let text = try response.string()
        #expect(response.status == 200 && text == "GET /sha256/engine 0")
    }

    /// curl's -u with --digest (and --basic undoing it), -f and -w as curl reports a Digest exchange.
    @Test func theCLIsDigest() async throws {
        let server = await s.privateDigestServer()
        let cli = CLITests.binary
        let run = try await runProcess(cli, ["-sS", "-f", "--digest", "-u", "ann:s3cret", "-w", " %{http_code} %{num_redirects}",
                                             server + "/md5sess/cli"])
        #expect(run.status == 0 && run.stdout == "GET /md5sess/cli 0 200 0", "\(run.stdout)\(run.stderr)")
        let heads = try await runProcess(cli, ["-sS", "-i", "--digest", "-u", "ann:s3cret", server + "/sha256/i"])
        #expect(heads.stdout.components(separatedBy: "HTTP/1.1 ").count == 3, "-i shows the 401's head and the 200's, as curl")
        let wrong = try await runProcess(cli, ["-sS", "-f", "--digest", "-u", "ann:no", server + "/sha256/f"])
        #expect(wrong.status == 22, "\(wrong.stderr)")
        let basic = try await runProcess(cli, ["-sS", "--digest", "--basic", "-u", "ann:s3cret", "-w", "%{http_code}", "-o", "/dev/null",
                                               server + "/sha256/b"])
        #expect(basic.stdout == "401", "--basic sends Basic, which this server refuses")
        #expect(try await log(server).last?.hasPrefix("Basic ") == true)
        // Without -u: the URL's credentials, or the .netrc entry, answer the challenge (as curl).
        let inURL = try await runProcess(cli, ["-sS", "--digest", "-w", " %{http_code}",
                                               server.replacingOccurrences(of: "http://", with: "http://ann:s3cret@") + "/sha256/url"])
        #expect(inURL.stdout == "GET /sha256/url 0 200", "\(inURL.stdout)\(inURL.stderr)")
        let netrc = s.root + "/digest-netrc-\(UUID().uuidString.prefix(8))"
        try "machine 127.0.0.1 login ann password s3cret\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        let fromNetrc = try await runProcess(cli, ["-sS", "--digest", "--netrc-file", netrc, "-w", " %{http_code}", server + "/md5sess/n"])
        #expect(fromNetrc.stdout == "GET /md5sess/n 0 200", "\(fromNetrc.stdout)\(fromNetrc.stderr)")
        let sent = try await log(server).suffix(4)
        #expect(sent.filter { $0.hasPrefix("Basic ") }.isEmpty, "nothing went as Basic: \(sent)")
    }

    /// curl's -n (HOME's .netrc), --netrc-file and --netrc-optional: the entry for the URL's host
    /// (or its user's) as Basic, -u winning, a missing file no error, a malformed one curl's 26.
    @Test func theCLIsNetrc() async throws {
        let server = await s.privateDigestServer()
        let home = s.root + "/netrc-home-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let file = home + "/.netrc"
        try #"machine 127.0.0.1 login bob password "s p"\#ndefault login any password thing\#n"#.write(toFile: file, atomically: true, encoding: .utf8)
        let cli = CLITests.binary
        let quiet = ["-sS", "-o", "/dev/null"]
        for arguments in [["-n"], ["--netrc-optional"], ["--netrc-file", file], ["--netrc-file", file, "-u", "me:x"],
                          ["--netrc-file", file, server.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/n"],
                          ["--netrc-file", home + "/missing"]] {
            let urls = arguments.last!.hasPrefix("http") ? [] : [server + "/n"]
            let run = try await runProcess(cli, quiet + arguments + urls, environment: ["HOME": home])
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
        }
        let basic = { (pair: String) in "Basic " + Data(pair.utf8).base64EncodedString() }
        #expect(try await log(server) == [basic("bob:s p"), basic("bob:s p"), basic("bob:s p"), basic("me:x"), basic("any:thing"), ""])
        try #"machine h login "unterminated"#.write(toFile: file, atomically: true, encoding: .utf8)
        let malformed = try await runProcess(cli, quiet + ["-n", server + "/n"], environment: ["HOME": home])
        #expect(malformed.status == 26 && malformed.stderr.contains(".netrc"), "\(malformed.stderr)")
    }

    @Test func fromC() async throws {
        let server = await s.privateDigestServer()
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/digest", [server])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
    }
}
