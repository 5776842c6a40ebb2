import Foundation
import Testing
@testable import CourierCore
@testable import courier

/// curl's output contracts and everyday flags, each as curl 7.88 behaves with the same
/// arguments (the expected values were taken from curl against the same servers).
@Suite("courier CLI: curl's contracts")
struct CLIParityTests {
    let s = TestServers.shared

    func run(_ arguments: [String], stdin: Data? = nil) async throws -> ProcessResult {
        try await runProcess(CLITests.binary, arguments, stdin: stdin)
    }

    func scratch() throws -> String {
        let directory = s.root + "/cli-parity-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    func echoed(_ stdout: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    }

    func header(_ echo: [String: Any], _ name: String) -> String? {
        (echo["headers"] as? [[String]])?.first { $0.first?.lowercased() == name.lowercased() }?.last
    }

    @Test func globsFillHashNInOutputNames() async throws {
        let dir = try scratch()
        let r = try await run(["-s", "-o", dir + "/out_#1_#2.txt", s.scripted + "/echo?n=[1-3]&c={a,b}"])
        #expect(r.status == 0 && r.stdout.isEmpty, "nothing on stdout: \(r.stdout)")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(names == ["out_1_a.txt", "out_1_b.txt", "out_2_a.txt", "out_2_b.txt", "out_3_a.txt", "out_3_b.txt"], "\(names)")
        let second = try echoed(try String(contentsOfFile: dir + "/out_2_b.txt", encoding: .utf8))
        #expect((second["query"] as? [String: String]) == ["n": "2", "c": "b"])
        // One -o per URL argument, in order; a #N without its glob stays as it is.
        let pair = try await run(["-s", "-o", dir + "/first", "-o", dir + "/second#9", s.scripted + "/echo?x=1", s.scripted + "/echo?x=2"])
        #expect(pair.status == 0 && pair.stdout.isEmpty)
        #expect(FileManager.default.fileExists(atPath: dir + "/first") && FileManager.default.fileExists(atPath: dir + "/second#9"))
        // -O names each expansion after its own URL.
        let remote = try await run(["-s", "--output-dir", dir, "-O", s.nginx + "/{small,index.html}"])
        #expect(remote.status == 0, "\(remote.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/small") && FileManager.default.fileExists(atPath: dir + "/index.html"))
    }

    @Test func aBracketedIPv6AddressIsNotAGlob() async throws {
        #expect(URLGlob.isIPv6Literal("::1") && URLGlob.isIPv6Literal("fe80::1%25eth0") && URLGlob.isIPv6Literal("::ffff:1.2.3.4"))
        #expect(!URLGlob.isIPv6Literal("1-3") && !URLGlob.isIPv6Literal("a-z") && !URLGlob.isIPv6Literal("1-10:2"))
        let expansions = try URLGlob.expand("http://[::1]:8080/x[1-2]")
        #expect(expansions.map(\.url) == ["http://[::1]:8080/x1", "http://[::1]:8080/x2"] && expansions[1].values == ["2"])
        // Refused on ::1 (or no IPv6 at all): a connection failure, not a glob error (3).
        let r = try await run(["-s", "http://[::1]:1/x"])
        #expect(r.status == 7, "exit \(r.status): \(r.stderr)")
    }

    @Test func writeOutWhenRedirectsRunOutAndUnknownVariables() async throws {
        let limited = try await run(["-s", "-L", "--max-redirs", "2", "-o", "/dev/null", "-w", "%{http_code} %{num_redirects}", s.scripted + "/redirect-loop"])
        #expect(limited.status == 47 && limited.stdout == "302 2", "the last status received: \(limited.stdout)")
        let unknown = try await run(["-s", "-o", "/dev/null", "-w", "[%{bogus}][%{content_type}]", s.scripted + "/echo"])
        #expect(unknown.stdout == "[][application/json]")
        #expect(unknown.stderr.contains("unknown --write-out variable: 'bogus'"), "\(unknown.stderr)")
        let split = try await run(["-s", "-o", "/dev/null", "-w", "out%{stderr}err%{stdout}out2", s.scripted + "/echo"])
        #expect(split.stdout == "outout2" && split.stderr == "err")
        let dir = try scratch()
        try Data("%{http_code}:%{method}\\n".utf8).write(to: URL(fileURLWithPath: dir + "/format"))
        let fromFile = try await run(["-s", "-o", "/dev/null", "-w", "@" + dir + "/format", s.scripted + "/echo"])
        #expect(fromFile.stdout == "200:GET\n")
        let fromStdin = try await run(["-s", "-o", "/dev/null", "-w", "@-", s.scripted + "/echo"], stdin: Data("%{response_code}".utf8))
        #expect(fromStdin.stdout == "200")
    }

    @Test func writeOutJSON() async throws {
        let r = try await run(["-s", "-o", "/dev/null", "-w", "%{json}", s.scripted + "/echo"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], "\(r.stdout)")
        #expect(json["http_code"] as? Int == 200 && json["method"] as? String == "GET" && json["exitcode"] as? Int == 0)
        #expect(json["url_effective"] as? String == s.scripted + "/echo" && json["errormsg"] is NSNull)
        #expect(json["content_type"] as? String == "application/json" && json["num_headers"] as? Int == 2)
        #expect((json["time_total"] as? Double).map { $0 > 0 } == true && json["filename_effective"] as? String == "/dev/null")
        let headers = try await run(["-s", "-o", "/dev/null", "-w", "%{header_json}", s.scripted + "/echo"])
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(headers.stdout.utf8)) as? [String: [String]], "\(headers.stdout)")
        #expect(fields["content-type"] == ["application/json"] && fields["content-length"] != nil)
        let one = try await run(["-s", "-o", "/dev/null", "-w", "%header{content-type}", s.scripted + "/echo"])
        #expect(one.stdout == "application/json")
    }

    @Test func emptyUserAgentAndEmptyHeaders() async throws {
        let r = try await run(["-s", "-A", "", "-H", "X-Empty;", s.scripted + "/echo"])
        let echo = try echoed(r.stdout)
        #expect(header(echo, "User-Agent") == nil, "-A '' sends none")
        #expect(header(echo, "X-Empty") == "")
        let names = (echo["headers"] as? [[String]])?.map { $0[0] } ?? []
        let plain = try echoed(try await run(["-s", s.scripted + "/echo"]).stdout)
        #expect(((plain["headers"] as? [[String]])?.map { $0[0] } ?? []).prefix(3) == ["Host", "User-Agent", "Accept"], "curl's order")
        #expect(names.prefix(2) == ["Host", "Accept"])
    }

    @Test func getWithURLEncodedDataRefererAndRange() async throws {
        let r = try await run(["-s", "-G", "-d", "a=1", "--data-urlencode", "b=x y&z", "--data-urlencode", "=é", "-e", "http://from.example/",
                               "-r", "0-9", s.scripted + "/echo?k=v"])
        let echo = try echoed(r.stdout)
        #expect(echo["method"] as? String == "GET" && (echo["body"] as? String) == "")
        #expect((echo["query"] as? [String: String]) == ["k": "v", "a": "1", "b": "x y&z"], "\(echo)")
        #expect(header(echo, "Referer") == "http://from.example/" && header(echo, "Range") == "bytes=0-9")
        #expect(String(decoding: try RequestData.urlencoded("name=a b/é"), as: UTF8.self) == "name=a%20b%2F%C3%A9")
        #expect(String(decoding: try RequestData.urlencoded("=a=b"), as: UTF8.self) == "a%3Db")
        #expect(String(decoding: try RequestData.urlencoded("plain text"), as: UTF8.self) == "plain%20text")
        // Without -G, --data-urlencode is a POST body.
        let posted = try echoed(try await run(["-s", "--data-urlencode", "q=1 2", s.scripted + "/echo"]).stdout)
        #expect(posted["method"] as? String == "POST" && posted["body"] as? String == "q=1%202")
    }

    @Test func failWithBodyKeepsTheBody() async throws {
        let dir = try scratch()
        let r = try await run(["-s", "--fail-with-body", "-o", dir + "/body", s.scripted + "/status?code=404"])
        #expect(r.status == 22)
        #expect(FileManager.default.fileExists(atPath: dir + "/body"), "the error's body is written")
        let both = try await run(["-s", "-f", "--fail-with-body", s.scripted + "/echo"])
        #expect(both.status == 2)
    }

    @Test func remoteHeaderNameAndRemoteTime() async throws {
        let dir = try scratch()
        let r = try await run(["-s", "--output-dir", dir, "-O", "-J", "-R", s.scripted + "/disposition?name=../../evil.txt"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["evil.txt"], "no path from the server")
        #expect(try String(contentsOfFile: dir + "/evil.txt", encoding: .utf8) == "named body")
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/evil.txt")
        #expect((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 == 1_445_412_480, "-R: Last-Modified")
        // An existing file is kept without --clobber.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dir + "/evil.txt"))
        let again = try await run(["-s", "--output-dir", dir, "-O", "-J", s.scripted + "/disposition?name=evil.txt"])
        let kept = try String(contentsOfFile: dir + "/evil.txt", encoding: .utf8)
        #expect(again.status == 23 && kept == "mine", "\(again.stderr)")
        let clobbered = try await run(["-s", "--clobber", "--output-dir", dir, "-O", "-J", s.scripted + "/disposition?name=evil.txt"])
        let replaced = try String(contentsOfFile: dir + "/evil.txt", encoding: .utf8)
        #expect(clobbered.status == 0 && replaced == "named body")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(left == ["evil.txt"], "nothing staged is left: \(left)")
        #expect(CLIJob.dispositionFileName("attachment; filename=plain.bin") == "plain.bin")
        #expect(CLIJob.dispositionFileName("inline") == nil && CLIJob.dispositionFileName("attachment; filename=\"..\"") == nil)
    }

    @Test func configFiles() async throws {
        let dir = try scratch()
        let config = """
        # a comment
        silent
        header = "X-From: config \\"quoted\\""
        -A agent/1
        url: \(s.scripted)/echo
        """
        try Data(config.utf8).write(to: URL(fileURLWithPath: dir + "/conf"))
        let r = try await run(["-K", dir + "/conf"])
        let echo = try echoed(r.stdout)
        #expect(header(echo, "X-From") == "config \"quoted\"" && header(echo, "User-Agent") == "agent/1", "\(r.stdout)\(r.stderr)")
        let stdin = try await run(["--config", "-"], stdin: Data("url = \"\(s.scripted)/status?code=201\"\nwrite-out = \"%{http_code}\"\n-o /dev/null\n".utf8))
        #expect(stdin.stdout == "201", "\(stdin.stdout)\(stdin.stderr)")
        #expect(try ConfigFile.arguments(of: "output=\"a b.txt\"\n\tinclude\n") == ["--output", "a b.txt", "--include"])
        #expect(throws: UsageError.self) { try ConfigFile.arguments(of: "header = \"open") }
        let missing = try await run(["-K", dir + "/none"])
        #expect(missing.status == 26)
    }

    @Test func http2IsRefusedClearly() async throws {
        let r = try await run(["--http2", s.scripted + "/echo"])
        #expect(r.status == 4 && r.stderr.contains("HTTP/1.1 only"))
        let plain = try await run(["-s", "--http1.1", "-o", "/dev/null", "-w", "%{http_code}", s.scripted + "/echo"])
        #expect(plain.stdout == "200")
    }
}
