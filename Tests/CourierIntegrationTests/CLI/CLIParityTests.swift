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

    /// curl's glob forms, without sockets: order (the first glob slowest), steps, zero padding,
    /// letters, lists; a huge range is counted, not made (a value is computed when its URL is).
    @Test func globRangesExpandInCurlsOrderWithoutMaterialising() throws {
        let urls = try URLGlob.expand("h://x/[1-10:4]{a,b}[08-10][c-g:2]").map(\.url)
        #expect(urls.count == 3 * 2 * 3 * 3)
        #expect(Array(urls.prefix(4)) == ["h://x/1a08c", "h://x/1a08e", "h://x/1a08g", "h://x/1a09c"])
        #expect(urls.last == "h://x/9b10g")
        let values = try URLGlob.parse("h://x/[001-120]/{p,q}").expansion(at: 5)
        #expect(values.url == "h://x/003/q" && values.values == ["003", "q"])
        let huge = try URLGlob.parse("h://x/[1-9999999]")
        #expect(huge.count == 9_999_999 && huge.expansion(at: 9_999_998, values: false).url == "h://x/9999999")
        #expect(throws: URLGlob.GlobError.self) { try URLGlob.parse("h://x/[1-9999999][1-2]") }
        #expect(throws: URLGlob.GlobError.self) { try URLGlob.parse("h://x/[0-9223372036854775806][1-9]") }
        // One value more than an Int counts: refused (it trapped on the count).
        #expect(throws: URLGlob.GlobError.self) { try URLGlob.parse("h://x/[0-9223372036854775807]") }
        #expect(throws: URLGlob.GlobError.self) { try URLGlob.parse("h://x/[\u{D7FF}-\u{E000}]") }
        #expect(try URLGlob.parse("h://x/[\u{E000}-\u{E002}]").count == 3)
        // Written into a String sized for the longest URL: values of every length, padded and not,
        // multi-byte list items and letters, with and without the values kept.
        let mixed = try URLGlob.parse("h://é/{ü,long-item}[0-1000:999][0007-0009]/[α-γ]")
        #expect(mixed.expansion(at: 0, values: false).url == "h://é/ü00007/α")
        #expect(mixed.count == 36 && mixed.expansion(at: 17).url == "h://é/ü9990009/γ")
        #expect(mixed.expansion(at: 35).url == "h://é/long-item9990009/γ" && mixed.expansion(at: 35).values == ["long-item", "999", "0009", "γ"])
        let wide = try URLGlob.parse("h://x/[9223372036854775800-9223372036854775806:3]")
        #expect(wide.expansion(at: 2, values: false).url == "h://x/9223372036854775806")
    }

    /// A URL built on the previous URL's origin is the URL a full parse gives, and anything that
    /// a prefix match could get wrong (another port, credentials, case, spaces, a fragment right
    /// after the host) is parsed whole.
    @Test func urlsOnTheLastOriginMatchAFullParse() throws {
        let reuse = OriginReuse()
        let urls = ["http://h.example:808/a?x=1", "http://h.example:808/b/../c?y=%zz&z", "http://h.example:808?q",
                    "http://h.example:8080/x", "http://h.example:8080/z", "http://u:p@h.example:8080/x", "http://u:p@h.example:8080/y z",
                    "HTTP://h.example:8080/x", "http://h.example:8080/x ", "http://h.example:8080#f", "http://h.example:8080",
                    "https://[::1]:8443/v?w", "https://[::1]:8443/w", "http://h.example:8080/%41?a#frag"]
        var reused = 0
        for url in urls {
            let whole = try CourierURL(parsing: url)
            guard let (base, target) = reuse.split(url) else { continue }
            reused += 1
            let (path, query) = CourierURL.split(target: target)
            let built = base.withTarget(path: path, query: query)
            #expect(built == whole && built.description == whole.description && built.user == whole.user && built.password == whole.password,
                    "\(url): \(built) against \(whole)")
        }
        #expect(reused >= 8, "the common case reuses the origin (\(reused))")
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
        // %{redirect_url}: where a redirect not followed would go (absolute), with -L or without;
        // --max-redirs 0 leaves the first 3xx as the last response. %{onerror}: the rest only on failure.
        let format = ["-w", "%{http_code} <%{redirect_url}>%{onerror} failed %{exitcode}"]
        let notFollowed = try await run(["-s", "-o", "/dev/null"] + format + [s.scripted + "/redirect?code=302&to=/echo%3Fa%3D1"])
        #expect(notFollowed.status == 0 && notFollowed.stdout == "302 <\(s.scripted)/echo?a=1>", "\(notFollowed.stdout)")
        let zero = try await run(["-s", "-L", "--max-redirs", "0", "-o", "/dev/null"] + format + [s.scripted + "/redirect?code=302&to=/echo"])
        #expect(zero.status == 47 && zero.stdout == "302 <\(s.scripted)/echo> failed 47", "\(zero.stdout)")
        let followed = try await run(["-s", "-L", "-o", "/dev/null"] + format + [s.scripted + "/redirect?code=302&to=/echo"])
        #expect(followed.status == 0 && followed.stdout == "200 <>", "\(followed.stdout)")
        let json = try await run(["-s", "-o", "/dev/null", "-w", "%{json}", s.scripted + "/echo"])
        #expect(json.stdout.contains("\"redirect_url\":null") && json.stdout.contains("\"size_request\":"), "\(json.stdout)")
        let timed = try await run(["-s", "-L", "-o", "/dev/null", "-w", "%{time_redirect} %{time_total}", s.scripted + "/redirect?to=/echo"])
        let times = timed.stdout.split(separator: " ").compactMap { Double($0) }
        #expect(times.count == 2 && times[0] > 0 && times[0] <= times[1], "time_redirect within time_total: \(timed.stdout)")
        let direct = try await run(["-s", "-o", "/dev/null", "-w", "%{time_redirect}", s.scripted + "/echo"])
        #expect(direct.stdout == "0.000000")
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

    /// curl's --http1.0: the request line says 1.0, the connection is not kept (a second URL opens
    /// a new one: -w's num_connects), --http1.1 after it wins, and a body of unknown length (stdin)
    /// is refused with curl's 25 before anything is sent.
    @Test func http10RequestsAndTheirLimits() async throws {
        let r = try await run(["-s", "--http1.0", "-w", "\\n%{num_connects}\\n", s.scripted + "/echo", s.scripted + "/echo"])
        #expect(r.status == 0, "\(r.stderr)")
        let bodies = r.stdout.split(separator: "\n")
        #expect(bodies.count == 4, "\(r.stdout)")
        for body in bodies.filter({ $0.hasPrefix("{") }) {
            #expect(try echoed(String(body))["version"] as? String == "HTTP/1.0")
        }
        #expect(bodies.filter { $0 == "1" }.count == 2, "each URL on a connection of its own: \(r.stdout)")
        let back = try echoed(try await run(["-s", "--http1.0", "--http1.1", s.scripted + "/echo"]).stdout)
        #expect(back["version"] as? String == "HTTP/1.1")
        let chunked = try await run(["-s", "-S", "--http1.0", "-T", "-", s.scripted + "/echo"], stdin: Data("x".utf8))
        #expect(chunked.status == 25 && chunked.stderr.contains("(25) Chunky upload is not supported by HTTP 1.0"), "\(chunked.stderr)")
        let sized = try echoed(try await run(["-s", "--http1.0", "-d", "a=1", s.scripted + "/echo"]).stdout)
        #expect(sized["version"] as? String == "HTTP/1.0" && sized["body"] as? String == "a=1")
    }

    /// -w's local_ip and local_port are the client's end as the server saw it (curl's
    /// CURLINFO_LOCAL_IP/PORT); without a connection they are empty and 0.
    @Test func localIPAndPort() async throws {
        let r = try await run(["-s", "-w", "\\n%{local_ip} %{local_port}", s.scripted + "/echo"])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(r.stdout)")
        let peer = try echoed(lines[0])["peer"] as? [Any]
        #expect(lines.last == "\(peer?.first as? String ?? "?") \(peer?.last as? Int ?? -1)", "\(r.stdout)")
        let json = try await run(["-s", "-o", "/dev/null", "-w", "%{json}", s.scripted + "/echo"])
        let values = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(values?["local_ip"] as? String == "127.0.0.1" && (values?["local_port"] as? Int ?? 0) > 0, "\(json.stdout)")
        let none = try await run(["-s", "-w", "[%{local_ip}] %{local_port}", "http://127.0.0.1:1/"])
        #expect(none.stdout == "[] 0", "\(none.stdout)")
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

    /// curl's `-e ';auto'`: each redirect hop sends the URL it came from (without credentials or
    /// fragment) as Referer; with a URL before `;auto`, the first request sends that one.
    @Test func autoRefererFollowsTheRedirectChain() async throws {
        let credentialed = s.scripted.replacingOccurrences(of: "http://", with: "http://user:secret@")
        let first = credentialed + "/redirect?to=" + "/redirect%3Fto%3D/echo"
        let auto = try echoed(try await run(["-s", "-L", "-e", ";auto", first + "#frag"]).stdout)
        #expect(header(auto, "Referer") == s.scripted + "/redirect?to=/echo", "the last hop's URL: \(auto)")
        let both = try echoed(try await run(["-s", "-L", "-e", "http://from.example/;auto", s.scripted + "/redirect?to=/echo"]).stdout)
        #expect(header(both, "Referer") == s.scripted + "/redirect?to=/echo", "\(both)")
        let firstOnly = try echoed(try await run(["-s", "-e", "http://from.example/;auto", s.scripted + "/echo"]).stdout)
        #expect(header(firstOnly, "Referer") == "http://from.example/", "\(firstOnly)")
        // Without ;auto the given Referer stays on every hop, as in curl.
        let plain = try echoed(try await run(["-s", "-L", "-e", "http://from.example/", s.scripted + "/redirect?to=/echo"]).stdout)
        #expect(header(plain, "Referer") == "http://from.example/", "\(plain)")
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

    @Test func brotliAndZstdWithCompressed() async throws {
        let text = String(repeating: "hello, compressed world. ", count: 400)
        for path in ["/br", "/zstd"] {
            let r = try await run(["-s", "--compressed", s.scripted + path])
            #expect(r.status == 0 && r.stdout == text, "\(path): \(r.stderr)")
        }
        let offered = try await run(["-s", "--compressed", s.scripted + "/echo"])
        #expect(offered.stdout.contains("gzip, deflate, br, zstd"))
        for (path, code) in [("/corrupt-br", Int32(61)), ("/zstd-wide", 61), ("/br-bomb", 63), ("/zstd-bomb", 63)] {
            let r = try await run(["-s", "-S", "--compressed", "--max-filesize", "1M", "-o", "/dev/null", s.scripted + path])
            #expect(r.status == code, "\(path): \(r.status) \(r.stderr)")
        }
        let unknown = try await run(["--compressed", "-o", "/dev/null", s.scripted + "/unknown-coding"])
        #expect(unknown.status == 61 && unknown.stderr.contains("unsupported") && !unknown.stderr.contains("corrupt"), "\(unknown.stderr)")
    }

    /// The flag table behind --help and the man page is the parser's: every flag it lists parses,
    /// and every flag the parser knows (its `case "--..."` labels) is listed.
    @Test func everyFlagIsInTheHelpAndTheManPage() async throws {
        for flag in FlagTable.all {
            var arguments = [flag.long] + (flag.argument != nil ? ["1"] : [])
            if flag.long == "--continue-at" { arguments = [flag.long, "-"] }
            if flag.long == "--tls-max" { arguments = [flag.long, "1.3"] }
            if flag.long == "--header" { arguments = [flag.long, "X-Flag: 1"] }
            if flag.long == "--resolve" { arguments = [flag.long, "x:80:127.0.0.1"] }
            if flag.long == "--connect-to" { arguments = [flag.long, "x:80:y:81"] }
            // Read before the parser: -K by ConfigFile.expand, --next by parseGroups.
            if flag.long == "--config" || flag.long == "--next" { continue }
            do {
                _ = try ArgumentParser.parse(arguments + ["http://x/"])
            } catch {
                #expect(error.message.contains("not HTTP/3"), "\(flag.long): \(error.message)")
            }
            if let short = flag.short {
                #expect(ArgumentParser.shortFlags.contains(short) || ArgumentParser.shortWithValue.contains(short), "-\(short)")
                #expect(ArgumentParser.shortWithValue.contains(short) == (flag.argument != nil && flag.long != "--help"), "-\(short)'s value")
            }
        }
        let source = try String(contentsOfFile: TestServers.packageRoot + "/Sources/courier/Arguments.swift", encoding: .utf8)
        let parsed = Set(source.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("case \"--") }
            .flatMap { line in line.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) } }
            .filter { $0.hasPrefix("--") }).union(["--config", "--next"])  // read before the parser
        let listed = Set(FlagTable.all.map(\.long))
        #expect(parsed.subtracting(listed).isEmpty, "parsed but not in --help: \(parsed.subtracting(listed).sorted())")
        #expect(listed.subtracting(parsed).isEmpty, "in --help but not parsed: \(listed.subtracting(parsed).sorted())")

        let all = try await run(["--help", "all"])
        let page = try await run(["--man-page"])
        for flag in FlagTable.all {
            #expect(all.stdout.contains(flag.long + " ") || all.stdout.contains(flag.long + "\n"), "--help all lacks \(flag.long)")
            #expect(page.stdout.contains(flag.long.replacingOccurrences(of: "-", with: "\\-")), "the man page lacks \(flag.long)")
        }
        #expect(page.stdout.hasPrefix(".TH COURIER 1"))
        let brief = try await run(["-h"])
        #expect(brief.stdout.contains("--help category") && brief.stdout.contains("-o, --output <file>"))
        let tls = try await run(["--help", "tls"])
        #expect(tls.stdout.contains("--cacert") && !tls.stdout.contains("--data"))
        let unknown = try await run(["--help", "nonsense"])
        #expect(unknown.status == 0 || unknown.status == 2)
    }

    @Test func resolveConnectToAndFamilies() async throws {
        let port = s.scriptedPort
        let resolved = try await run(["-s", "--resolve", "api.test:\(port):127.0.0.1", "-w", "\n%{remote_ip}", "http://api.test:\(port)/echo"])
        #expect(resolved.status == 0 && resolved.stdout.hasSuffix("\n127.0.0.1") && resolved.stdout.contains("api.test:\(port)"), "\(resolved.stdout)\(resolved.stderr)")
        // The race: 127.0.0.2 hangs at this port, 127.0.0.1 answers (see ConnectionRouteTests).
        let raced = try await run(["-s", "--connect-timeout", "5", "--resolve", "api.test:\(port):127.0.0.2,127.0.0.1", "-o", "/dev/null",
                                   "-w", "%{remote_ip}", "http://api.test:\(port)/echo"])
        #expect(raced.status == 0 && raced.stdout == "127.0.0.1", "\(raced.stdout)\(raced.stderr)")
        let moved = try await run(["-s", "--connect-to", "api.test:80:127.0.0.1:\(port)", "http://api.test/echo"])
        let echo = try echoed(moved.stdout)
        #expect(header(echo, "Host") == "api.test")
        let v6 = try await run(["-s", "-6", s.scripted + "/echo"])
        #expect(v6.status == 7, "curl's 7 for an IPv4 address with -6: \(v6.status)")
        let v4 = try await run(["-s", "-4", "-o", "/dev/null", "-w", "%{remote_ip}", "http://localhost:\(port)/echo"])
        #expect(v4.status == 0 && v4.stdout == "127.0.0.1")
        let bad = try await run(["-s", "--resolve", "nonsense", s.scripted + "/echo"])
        #expect(bad.status == 2)
    }

    /// -v in curl's shape, over plain HTTP and TLS, and --trace-ascii's blocks.
    @Test func verboseAndTrace() async throws {
        let r = try await run(["-v", "-s", "-o", "/dev/null", s.scripted + "/echo", "-o", "/dev/null", s.scripted + "/echo"])
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "*   Trying 127.0.0.1:\(s.scriptedPort)...", "\(r.stderr)")
        #expect(lines.contains("* Connected to 127.0.0.1 (127.0.0.1) port \(s.scriptedPort) (#0)"), "curl numbers from 0: \(r.stderr)")
        #expect(lines.contains("> GET /echo HTTP/1.1") && lines.contains("> Host: 127.0.0.1:\(s.scriptedPort)") && lines.contains("> "))
        #expect(lines.contains("< HTTP/1.1 200 OK") && lines.contains("< Content-Type: application/json") && lines.contains("< "))
        #expect(lines.contains("* Re-using existing connection #0 with host 127.0.0.1"), "the second URL reuses it")
        #expect(lines.filter { $0 == "* Connection #0 to host 127.0.0.1 left intact" }.count == 2)

        let tls = try await run(["-v", "-s", "-o", "/dev/null", "--cacert", s.certs + "/ca.pem", s.https + "/small"])
        #expect(tls.status == 0, "\(tls.stderr)")
        #expect(tls.stderr.contains("* SSL connection using TLSv1."), "\(tls.stderr)")
        #expect(tls.stderr.contains("* ALPN: server accepted http/1.1") && tls.stderr.contains("* Server certificate:"))
        #expect(tls.stderr.contains("*  subject: ") && tls.stderr.contains("*  issuer: ") && tls.stderr.contains("*  expire date: "))
        #expect(tls.stderr.contains("*  SSL certificate verify ok."))

        let dir = try scratch()
        let traced = try await run(["-s", "--trace-ascii", dir + "/trace", "-o", "/dev/null", s.scripted + "/echo"])
        let trace = try String(contentsOfFile: dir + "/trace", encoding: .utf8)
        #expect(traced.status == 0)
        #expect(trace.contains("== Info: Connected to 127.0.0.1"), "\(trace)")
        #expect(trace.contains("=> Send header, ") && trace.contains("0000: GET /echo HTTP/1.1\n"), "\(trace)")
        #expect(trace.contains("<= Recv header, ") && trace.contains("0000: HTTP/1.1 200 OK\n"))
        #expect(trace.contains("<= Recv data, "))
        // The body's bytes themselves, as curl dumps them (the echo is JSON on one line).
        #expect(trace.contains("\n0000: {\"method\": \"GET\""), "\(trace)")
        let dumped = trace.split(separator: "\n").filter { $0.count > 6 && $0.dropFirst(4).hasPrefix(": ") }
        #expect(dumped.allSatisfy { $0.count <= 6 + 64 }, "64 bytes to a line at most")

        // -Z keeps the body in memory until it is written: dumped whole at the end.
        let parallel = try await run(["-s", "-Z", "--trace-ascii", dir + "/ptrace", s.scripted + "/echo"])
        let parallelTrace = try String(contentsOfFile: dir + "/ptrace", encoding: .utf8)
        #expect(parallel.status == 0 && parallelTrace.contains("<= Recv data, ") && parallelTrace.contains("\n0000: {\"method\": \"GET\""),
                "\(parallelTrace)")

        // The request body as `=> Send data`, between the two heads: -d's bytes, a -T file's and a
        // form's read again (the form's own boundary), stdin's as the chunks it went out in (kept
        // while it was read: stdin cannot be read twice), framing and terminating chunk included.
        try Data("file text\n".utf8).write(to: URL(fileURLWithPath: dir + "/up.txt"))
        for (arguments, shown) in [(["-d", "name=value&x=1"], "=> Send data, 14 bytes (0xe)\n0000: name=value&x=1\n"),
                                   (["-T", dir + "/up.txt"], "=> Send data, 10 bytes (0xa)\n0000: file text.\n"),
                                   (["-F", "doc=@" + dir + "/up.txt"], "0000: --"),
                                   (["-T", "-"], "=> Send data, 11 bytes (0xb)\n0000: 6\n0003: stdin.\n== Info: Signaling end of chunked upload "
                                    + "via terminating chunk.\n=> Send data, 5 bytes (0x5)\n0000: 0\n0003: \n<= Recv header")] {
            let sent = try await run(["-s", "--trace-ascii", dir + "/sent"] + arguments + ["-o", "/dev/null", s.stream + "/upload?echo=1"],
                                     stdin: Data("stdin\n".utf8))
            let text = try String(contentsOfFile: dir + "/sent", encoding: .utf8)
            #expect(sent.status == 0, "\(arguments): \(sent.stderr)")
            let header = text.range(of: "=> Send header"), data = text.range(of: shown), received = text.range(of: "<= Recv header")
            #expect(header != nil && data != nil && received != nil && header!.lowerBound < data!.lowerBound
                    && data!.lowerBound < received!.lowerBound, "\(arguments): \(text)")
            if arguments[0] == "-F" {
                #expect(text.contains("Content-Disposition: form-data; name=\"doc\"; filename=\"up.txt\"") && text.contains(": file text."), "\(text)")
            }
            if arguments == ["-T", "-"] {
                #expect(text.contains(": Transfer-Encoding: chunked\n") && text.contains(": Expect: 100-continue\n")
                        && !text.contains("Content-Length: 0"), "the head as sent: \(text)")
            }
        }
        // A larger stdin: one block per chunk, whose size lines add up to the input.
        let input = Data(String(repeating: "0123456789abcdef\n", count: 20_000).utf8)
        let large = try await run(["-s", "--trace-ascii", dir + "/sent", "-T", "-", "-o", "/dev/null", s.stream + "/upload?echo=1"], stdin: input)
        let largeTrace = try String(contentsOfFile: dir + "/sent", encoding: .utf8).split(separator: "\n").map(String.init)
        var chunkSizes: [Int] = []
        for (i, line) in largeTrace.enumerated() where line.hasPrefix("=> Send data, ") && i + 1 < largeTrace.count {
            chunkSizes.append(Int(largeTrace[i + 1].dropFirst("0000: ".count), radix: 16) ?? -1)
        }
        #expect(large.status == 0 && chunkSizes.count >= 3 && chunkSizes.last == 0, "\(chunkSizes)")
        #expect(chunkSizes.reduce(0, +) == input.count, "\(chunkSizes)")

        // curl's --trace-ascii layout: 64 to a line, offsets in hex, "." for the unprintable, a CR LF
        // ending a line early and not shown (also right after a full line).
        let piece = Array(String(repeating: "a", count: 64).utf8) + [0x0D, 0x0A] + Array("b\tc\r\nd".utf8) + [0xC3, 0xA9]
        let text = piece.withUnsafeBytes { VerboseLog.traceData($0) }
        #expect(text == "<= Recv data, 74 bytes (0x4a)\n0000: " + String(repeating: "a", count: 64) + "\n0042: b.c\n0047: d..\n", "\(text)")
    }

    /// curl's `size_upload` is the last request's body as sent (chunked framing included, none
    /// for a GET) and `size_request` every byte of every request, heads and bodies, redirect hops
    /// included: checked against the sizes `--trace-ascii` gives for what went out.
    @Test func sizeUploadAndSizeRequest() async throws {
        let dir = try scratch()
        func sentSizes(_ trace: String) -> Int {
            trace.split(separator: "\n").filter { $0.hasPrefix("=> Send ") }.reduce(0) { total, line in
                total + (Int(line.split(separator: ", ")[1].split(separator: " ")[0]) ?? -1_000_000)
            }
        }
        let cases: [([String], String, Data?)] = [
            (["-d", "hello"], "5", nil),
            (["-T", "-"], "13", Data("abc".utf8)),  // 3\r\nabc\r\n and 0\r\n\r\n
            ([], "0", nil),
            (["-L", "-d", "hello"], "5", nil),  // a 307 sends the body twice; the last request's counts
        ]
        for (arguments, upload, stdin) in cases {
            let url = arguments.first == "-L" ? s.scripted + "/redirect?code=307&to=/echo" : s.stream + "/upload?echo=1"
            let r = try await run(["-s", "--trace-ascii", dir + "/sizes", "-o", "/dev/null", "-w", "%{size_upload} %{size_request}"] + arguments + [url],
                                  stdin: stdin)
            let trace = try String(contentsOfFile: dir + "/sizes", encoding: .utf8)
            let parts = r.stdout.split(separator: " ").map(String.init)
            #expect(r.status == 0 && parts.count == 2 && parts[0] == upload, "\(arguments): \(r.stdout) \(r.stderr)")
            #expect(parts.last.flatMap { Int($0) } == sentSizes(trace), "\(arguments): size_request \(r.stdout) against the trace:\n\(trace)")
        }
    }

    /// `-Z`'s meter: one line for every transfer together under curl's parallel header, redrawn
    /// at most twice a second, ended by a newline; the started and live counts and the bytes of
    /// all of them; `--` while a size is unknown; nothing with -s.
    @Test func parallelMeterSumsEveryTransfer() async throws {
        let dir = try scratch()
        let r = try await run(["-Z", "--limit-rate", "100k", "-o", dir + "/p#1", s.stream + "/blob/{100000,150000,50000}"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "DL% UL%  Dled  Uled  Xfers  Live Total     Current  Left    Speed", "\(r.stderr)")
        let last = lines.dropLast().last.map { $0.split(separator: "\r").last.map(String.init) ?? "" } ?? ""
        #expect(last.hasPrefix("100 --   292k     0     3     0  "), "the final line: \(last.debugDescription)")
        let redraws = r.stderr.filter { $0 == "\r" }.count
        #expect(redraws >= 2 && redraws <= 8, "about twice a second over ~1.5 s: \(redraws)")
        #expect(r.stderr.hasSuffix("\n"))
        // A failed transfer's message starts a line of its own, below the meter's.
        let failed = try await run(["-Z", "-o", dir + "/f", "http://127.0.0.1:1/", s.nginx + "/small"])
        let failedLines = failed.stderr.split(separator: "\n").map(String.init)
        #expect(failed.status == 7 && failedLines.contains { $0.hasPrefix("courier: (7)") }, "\(failed.stderr)")
        #expect(!failed.stderr.contains("--:--:--courier") && !failed.stderr.contains(" 0courier"), "\(failed.stderr.debugDescription)")
        let quiet = try await run(["-Z", "-s", "-o", dir + "/q#1", s.nginx + "/{small,small}"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
    }

    /// curl's meter: on stderr when the body goes to a file or a pipe (here stderr is a pipe), its
    /// columns, redrawn at most once a second, ended by a newline before an error's message; none
    /// when the body goes to a terminal (a pseudo-terminal through script(1)) or with -s.
    @Test func progressMeterThroughAPipeAndATerminal() async throws {
        let dir = try scratch()
        let slow = try await run(["--limit-rate", "100k", "-o", dir + "/blob", s.stream + "/blob/300000"])
        #expect(slow.status == 0, "\(slow.stderr)")
        let lines = slow.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current", "\(slow.stderr)")
        #expect(lines.dropFirst().first == "                                 Dload  Upload   Total   Spent    Left  Speed")
        let redraws = slow.stderr.filter { $0 == "\r" }.count
        #expect(redraws >= 2 && redraws <= 8, "about once a second over ~3 s: \(redraws)")
        let last = lines.dropLast().last.map { $0.split(separator: "\r").last.map(String.init) ?? "" } ?? ""
        #expect(last.hasPrefix("100  292k  100  292k    0     0"), "the final line: \(last.debugDescription)")
        #expect(slow.stderr.hasSuffix("\n"))
        #expect(ProgressMeter.size(99_999) == "99999" && ProgressMeter.size(100_000) == "  97k" && ProgressMeter.size(Double(5 << 20)) == "5120k" && ProgressMeter.size(Double(20 << 20)) == "20.0M")
        #expect(ProgressMeter.time(0.4) == "--:--:--" && ProgressMeter.time(3_725) == " 1:02:05" && ProgressMeter.time(400_000) == "  4d 15h")

        let failed = try await run(["-o", dir + "/none", "http://127.0.0.1:1/"])
        let failedLines = failed.stderr.split(separator: "\n").map(String.init)
        #expect(failed.status == 7 && failedLines.last?.hasPrefix("courier: (7)") == true, "\(failed.stderr)")
        #expect(failedLines.dropLast().last?.contains("courier:") == false, "the meter's line ends before the message")

        let bar = try await run(["-#", "-o", dir + "/bar", s.nginx + "/small"])
        #expect(bar.stderr.contains("#") && bar.stderr.contains("100.0%"), "\(bar.stderr)")
        let quiet = try await run(["-s", "-o", dir + "/quiet", s.nginx + "/small"])
        #expect(quiet.stderr.isEmpty)

        // Through a pseudo-terminal: body to the terminal, no meter; to a file, the meter.
        let toTerminal = try await runProcess("/usr/bin/script", ["-qec", "\(CLITests.binary) \(s.nginx)/small", "/dev/null"])
        #expect(toTerminal.status == 0 && !toTerminal.stdout.contains("% Total"), "\(toTerminal.stdout)")
        let toFile = try await runProcess("/usr/bin/script", ["-qec", "\(CLITests.binary) -o \(dir)/pty \(s.nginx)/small", "/dev/null"])
        #expect(toFile.stdout.contains("% Total") && toFile.stdout.contains("100   100  100   100"), "\(toFile.stdout)")
    }

    @Test func headsOfARedirectChainAndSizesWithFail() async throws {
        for flag in ["-i", "-I"] {
            let r = try await run(["-s", flag, "-L", s.scripted + "/redirect?to=/echo"])
            let heads = r.stdout.components(separatedBy: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }
            #expect(heads == ["HTTP/1.1 302 Redirect", "HTTP/1.1 200 OK"], "\(flag): \(r.stdout)")
        }
        let dir = try scratch()
        let dumped = try await run(["-s", "-L", "-D", dir + "/heads", "-o", "/dev/null", s.scripted + "/redirect?to=/echo"])
        let heads = try String(contentsOfFile: dir + "/heads", encoding: .utf8)
        #expect(dumped.status == 0 && heads.hasPrefix("HTTP/1.1 302 Redirect\r\n") && heads.contains("\r\n\r\nHTTP/1.1 200 OK\r\n"))
        let failed = try await run(["-s", "-f", "-o", "/dev/null", "-w", "%{size_download} %{http_code}", s.scripted + "/status?code=404"])
        #expect(failed.status == 22 && failed.stdout == "0 404", "curl's figures: \(failed.stdout)")
    }

    @Test(.enabled(if: ConnectionRouteTests.hasIPv6Loopback, "IPv6 loopback (::1) is not available here"))
    func ipv6LoopbackByAddressAndThroughLocalhost() async throws {
        let port = await s.idempotencyServerOnIPv6Loopback()
        for url in ["http://[::1]:\(port)/keys", "http://localhost:\(port)/keys"] {
            let r = try await run(["-s", "-o", "/dev/null", "-w", "%{http_code} %{remote_ip}", url])
            #expect(r.status == 0 && r.stdout == "200 ::1", "\(url): \(r.stdout)\(r.stderr)")
        }
        let v4 = try await run(["-s", "-4", "-o", "/dev/null", "http://localhost:\(port)/keys"])
        #expect(v4.status == 7, "-4 finds nothing on 127.0.0.1")
    }

    @Test func http3IsRefusedClearly() async throws {
        let r = try await run(["--http3", s.scripted + "/echo"])
        #expect(r.status == 4 && r.stderr.contains("not HTTP/3"))
        // --http2 on http:// is HTTP/1.1, as curl's (no h2c Upgrade).
        let h2 = try await run(["-s", "--http2", "-o", "/dev/null", "-w", "%{http_code} %{http_version}", s.scripted + "/echo"])
        #expect(h2.stdout == "200 1.1", "\(h2.stderr)")
        let plain = try await run(["-s", "--http1.1", "-o", "/dev/null", "-w", "%{http_code}", s.scripted + "/echo"])
        #expect(plain.stdout == "200")
    }
}
