import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Cookie jars through the Swift API and the CLI against Tests/Servers/cookie_server.py.
@Suite("Cookie jars")
struct CookieJarTests {
    let s = TestServers.shared

    func engine(_ base: String, jar: CookieJar) -> Engine {
        var configuration = Engine.Configuration()
        configuration.options.cookies = jar
        return Engine(host: base, configuration: configuration)
    }

    func cookies(in response: Response) -> Set<String> {
        Set(String(decoding: response.body, as: UTF8.self).split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    @Test func receivedCookiesAreSentBackByPath() async throws {
        let base = await s.privateCookieServer()
        let jar = CookieJar()
        let api = engine(base, jar: jar)
        _ = try await api.send(api.operation(path: "/set", params: ["c": "a=1"]))
        let second = api.operation(urlString: base + "/set?c=b%3D2%3B%20Path%3D%2Fecho&c=gone%3D1%3B%20Max-Age%3D0")
        _ = try await api.send(second)
        let echoed = try await api.send(api.operation(path: "/echo/deep"))
        #expect(String(decoding: echoed.body, as: UTF8.self) == "b=2; a=1", "the longer path first")
        #expect(jar.all.count == 2)
        // Without the jar nothing is sent.
        let plain = Engine(host: base)
        #expect(try await plain.send(plain.operation(path: "/echo")).body.isEmpty)
    }

    @Test func aCookieSetByARedirectGoesWithTheNextHop() async throws {
        let base = await s.privateCookieServer()
        let jar = CookieJar()
        let api = engine(base, jar: jar)
        let op = api.operation(urlString: base + "/set?c=hop%3D1&to=/echo")
        let response = try await api.send(op)
        #expect(String(decoding: response.body, as: UTF8.self) == "hop=1")
        #expect(response.metrics.redirects == 1)
        // Another origin (localhost is not 127.0.0.1) gets none of them.
        let other = engine(base.replacingOccurrences(of: "127.0.0.1", with: "localhost"), jar: jar)
        #expect(try await other.send(other.operation(path: "/echo")).body.isEmpty)
    }

    @Test func aCookieHeaderSetByHandWins() async throws {
        let base = await s.privateCookieServer()
        let jar = CookieJar()
        jar.insert(Cookie(name: "jar", value: "1", domain: "127.0.0.1"))
        let api = engine(base, jar: jar)
        let op = api.operation(path: "/echo")
        op.headers.add(name: "Cookie", value: "mine=1")
        #expect(String(decoding: try await api.send(op).body, as: UTF8.self) == "mine=1")
        #expect(String(decoding: try await api.send(api.operation(path: "/echo")).body, as: UTF8.self) == "jar=1")
    }

    @Test func theCLIReadsAndWritesCurlsCookieFiles() async throws {
        let base = await s.privateCookieServer()
        let directory = NSTemporaryDirectory() + "courier-cookies-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/jar.txt"
        let set = try await runProcess(CLITests.binary, ["-s", "-c", file, base + "/set?c=x%3D1&c=y%3D2%3B%20Max-Age%3D600%3B%20HttpOnly"])
        #expect(set.status == 0, "\(set.stderr)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.hasPrefix("# Netscape HTTP Cookie File"))
        #expect(text.contains("\n127.0.0.1\tFALSE\t/\tFALSE\t0\tx\t1\n"), "\(text)")
        #expect(text.contains("#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t"), "\(text)")
        let sent = try await runProcess(CLITests.binary, ["-s", "-b", file, base + "/echo"])
        #expect(Set(sent.stdout.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }) == ["x=1", "y=2"])
        let junked = try await runProcess(CLITests.binary, ["-s", "-j", "-b", file, base + "/echo"])
        #expect(junked.stdout == "y=2", "-j drops session cookies")
        let literal = try await runProcess(CLITests.binary, ["-s", "-b", "k=v; k2=v2", base + "/echo"])
        #expect(literal.stdout == "k=v; k2=v2")
        // A file curl 7.88 wrote (Tests/Fixtures), read as curl reads it.
        let curls = TestServers.packageRoot + "/Tests/Fixtures/curl-7.88-cookies.txt"
        let fromCurl = try await runProcess(CLITests.binary, ["-s", "-b", curls, base + "/echo/x"])
        #expect(Set(fromCurl.stdout.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
                == ["scoped=3", "persistent=2", "session=1", "shared=4"], "\(fromCurl.stdout)")
        let toStdout = try await runProcess(CLITests.binary, ["-s", "-o", "/dev/null", "-c", "-", base + "/set?c=z%3D9"])
        #expect(toStdout.stdout.contains("\tz\t9\n"))
        let unwritable = try await runProcess(CLITests.binary, ["-s", "-c", "/nonexistent-dir/jar", base + "/set?c=z%3D9"])
        #expect(unwritable.status == 0 && unwritable.stderr.contains("failed to save cookies"), "\(unwritable.stderr)")
    }
}

/// Cookie jars through the C ABI (Tests/CPrograms/cookies.c) and Python (test_cookies.py).
@Suite("Cookie jars in C")
struct CookieBindingTests {
    @Test func cCookieJars() async throws {
        let bin = try await CExamples.shared.directory()
        let file = NSTemporaryDirectory() + "courier-c-cookies-\(UUID().uuidString.prefix(8))"
        defer { unlink(file) }
        let run = try await runProcess(bin + "/cookies", [await TestServers.shared.privateCookieServer(), file])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }
}
