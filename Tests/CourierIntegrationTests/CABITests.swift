import Courier
import CourierCore
import CourierHeader
import Foundation
import Testing

/// The C ABI: the header against the library's exports, the C examples compiled with the system
/// compiler and run (also under valgrind), the Python binding's own tests, and in-process calls
/// through the header the way a C program makes them.
@Suite("C ABI")
struct CABITests {
    let s = TestServers.shared

    /// The library as built (libCourierC.so; its SONAME is libcourier.so.1).
    static var library: String { builtProduct("libCourierC.so") }

    /// The library, the CLI and the Swift facade load no Foundation at all: full Foundation (and
    /// its ICU data) costs a program about 6.5 MiB of resident memory before it sends a byte, and
    /// FoundationEssentials alone 2 MiB (Courier's JSON coders are its own for that reason).
    @Test func noFoundationIsLinked() async throws {
        for product in [Self.library, CLITests.binary, builtProduct("courier-bench"), builtProduct("courier-bulk")] {
            let linked = try await runProcess("/usr/bin/ldd", [product])
            #expect(linked.status == 0, "\(linked.stderr)")
            #expect(linked.stdout.contains("libswiftCore"), "\(product): \(linked.stdout)")
            #expect(!linked.stdout.contains("Foundation"), "\(product) links Foundation:\n\(linked.stdout)")
        }
    }

    @Test func headerDeclaresExactlyTheExportedSymbols() async throws {
        let header = try String(contentsOfFile: TestServers.packageRoot + "/include/courier.h", encoding: .utf8)
        // Declarations: "<type> courier_name(" at the start of a line (prototypes, not comments).
        var declared = Set<String>()
        for line in header.split(separator: "\n") where !line.hasPrefix(" ") && !line.hasPrefix("/") && !line.hasPrefix("#") {
            // The last "courier_" before the parenthesis: a return type may be a courier_ type too.
            guard let open = line.firstIndex(of: "("), let start = line[..<open].range(of: "courier_", options: .backwards)?.lowerBound else { continue }
            if line.hasPrefix("typedef") { continue }
            declared.insert(String(line[start..<open]).trimmingCharacters(in: CharacterSet(charactersIn: "* ")))
        }
        let symbols = try await runProcess("/usr/bin/readelf", ["--dyn-syms", "-W", Self.library])
        var exported = Set<String>()
        for line in symbols.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // Num: Value Size Type Bind Vis Ndx Name
            guard fields.count >= 8, fields[4] == "GLOBAL", fields[6] != "UND" else { continue }
            exported.insert(String(fields[7].split(separator: "@").first!))
        }
        exported.remove("COURIER_1")
        #expect(declared.count >= 50)
        #expect(declared == exported, "only in the header: \(declared.subtracting(exported)); only exported: \(exported.subtracting(declared))")
        let dynamic = try await runProcess("/usr/bin/readelf", ["-d", Self.library])
        #expect(dynamic.stdout.contains("Library soname: [libcourier.so.\(COURIER_ABI_VERSION)]"))
    }

    /// The header's numbers against the Swift side, as curl checks its header against its
    /// sources: every COURIER_E_* value equals its CourierError.Code, every code that crosses the
    /// ABI has its define, and the version macros equal CourierVersion and
    /// courier_version_number().
    @Test func headerCodesAndVersionMatchTheLibrary() throws {
        let header = try String(contentsOfFile: TestServers.packageRoot + "/include/courier.h", encoding: .utf8)
        var defines: [String: String] = [:]
        for line in header.split(separator: "\n") where line.hasPrefix("#define COURIER_") {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard parts.count == 3 else { continue }
            var value = String(parts[2])
            if let comment = value.range(of: "/*") { value = String(value[..<comment.lowerBound]) }
            defines[String(parts[1])] = value.trimmingCharacters(in: .whitespaces)
        }
        /// "26", "0x000100" or "(COURIER_E_TIMEOUT | (2 << 8))".
        func evaluate(_ expression: String) -> Int32? {
            if expression.hasPrefix("0x") { return Int32(expression.dropFirst(2), radix: 16) }
            if let plain = Int32(expression) { return plain }
            let scanner = expression.replacingOccurrences(of: "(", with: " ").replacingOccurrences(of: ")", with: " ")
            let tokens = scanner.split(separator: " ")
            guard tokens.count == 5, tokens[1] == "|", tokens[3] == "<<", let base = defines[String(tokens[0])].flatMap(evaluate),
                  let detail = Int32(tokens[2]), let shift = Int32(tokens[4]) else { return nil }
            return base | (detail << shift)
        }
        let errorDefines = defines.filter { $0.key.hasPrefix("COURIER_E_") }
        var catalogued = Set<String>()
        for entry in CourierError.catalog {
            guard let name = entry.cName else { continue }
            catalogued.insert(name)
            #expect(errorDefines[name].flatMap(evaluate) == entry.code.rawValue, "\(name) in courier.h is not \(entry.code.rawValue)")
        }
        #expect(Set(errorDefines.keys) == catalogued, "only in the header: \(Set(errorDefines.keys).subtracting(catalogued)); only in Swift: \(catalogued.subtracting(errorDefines.keys))")
        #expect(String(cString: courier_strerror(COURIER_E_LOOP_UNAVAILABLE)) == CourierError.summary(for: .loopUnavailable))

        let parts = CourierVersion.string.split(separator: ".").map { Int32($0)! }
        #expect(defines["COURIER_VERSION_MAJOR"].flatMap(evaluate) == parts[0])
        #expect(defines["COURIER_VERSION_MINOR"].flatMap(evaluate) == parts[1])
        #expect(defines["COURIER_VERSION_PATCH"].flatMap(evaluate) == parts[2])
        #expect(defines["COURIER_VERSION_NUM"].flatMap(evaluate) == parts[0] << 16 | parts[1] << 8 | parts[2])
        #expect(courier_version_number() == parts[0] << 16 | parts[1] << 8 | parts[2])
        #expect(String(cString: courier_version()) == CourierVersion.string)
    }

    @Test func cExamplesWork() async throws {
        let bin = try await CExamples.shared.directory()
        let get = try await runProcess(bin + "/get", [s.nginx + "/small", "X-Test:1"])
        #expect(get.status == 0, "\(get.stderr)")
        #expect(get.stdoutBytes.count == 100)
        #expect(get.stderr.contains("status 200"))
        let missing = try await runProcess(bin + "/get", ["http://127.0.0.1:1/"])
        #expect(missing.status == COURIER_E_CONNECT, "\(missing.stderr)")
        let parallel = try await runProcess(bin + "/parallel", [s.nginx, "200", "/small", "4"])
        #expect(parallel.status == 0, "\(parallel.stderr)")
        #expect(parallel.stdout.contains("done 200 ok 200"))
        let poll = try await runProcess(bin + "/poll", [s.nginx, "200", "/small"])
        #expect(poll.status == 0, "\(poll.stderr)")
        #expect(poll.stdout.contains("done 200 ok 200 idle 1"))
        let cacheDirectory = s.root + "/c-example-cache-\(UUID().uuidString.prefix(8))"
        let cold = try await runProcess(bin + "/cache", [s.nginx, "/revalidate/small", cacheDirectory])
        #expect(cold.status == 0, "\(cold.stderr)")
        #expect(cold.stdout.hasPrefix("200 fresh (miss), 100 bytes\n200 not modified (revalidated), 100 bytes\n"), "\(cold.stdout)")
        let warm = try await runProcess(bin + "/cache", [s.nginx, "/revalidate/small", cacheDirectory])
        #expect(warm.stdout.hasPrefix("200 not modified (revalidated)"), "the disk tier answered across processes: \(warm.stdout)")
        let bad = try await runProcess(bin + "/badinput", [s.nginx, "--unsafe"])
        #expect(bad.status == 0 && bad.stdout == "ok\n", "\(bad.stderr)")
    }

    /// What needs a process of its own or threads of its own (Tests/CPrograms/scenarios.c): the
    /// loop refused its descriptors (an error, then a retry that works, never an abort); cancel
    /// from another thread while perform waits; staged downloads over the ABI; https through the
    /// ABI with the test CA, a client certificate and pins.
    @Test func cScenarios() async throws {
        let bin = try await CExamples.shared.directory()
        let starved = try await runProcess(bin + "/scenarios", ["loopfail", s.nginx + "/small"])
        #expect(starved.status == 0, "\(starved.stdout)\(starved.stderr)")
        #expect(starved.stdout.contains("starved \(COURIER_E_LOOP_UNAVAILABLE)"))

        let codings = try await runProcess(bin + "/scenarios", ["codings", s.scripted])
        #expect(codings.status == 0, "\(codings.stdout)\(codings.stderr)")
        let routes = try await runProcess(bin + "/scenarios", ["routes", String(s.scriptedPort)])
        #expect(routes.status == 0, "\(routes.stdout)\(routes.stderr)")
        let cancelled = try await runProcess(bin + "/scenarios", ["cancel", s.scripted + "/silence?s=10"])
        #expect(cancelled.status == 0, "\(cancelled.stdout)\(cancelled.stderr)")

        let directory = NSTemporaryDirectory() + "courier-download-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let download = try await runProcess(bin + "/scenarios", ["download", s.nginx + "/small", s.nginx + "/no-such-file", directory])
        #expect(download.status == 0, "\(download.stdout)\(download.stderr)")

        let tls = try await runProcess(bin + "/scenarios", ["tls", "https://localhost:\(s.tlsPorts["clientauth"]!)/small", s.certs + "/ca.pem",
                                                            s.certs + "/client.pem", s.certs + "/client.key", s.certs + "/server.pub"])
        #expect(tls.status == 0, "\(tls.stdout)\(tls.stderr)")
    }

    /// The application's trust decision and report-only pins (Tests/CPrograms/trust.c): a chain
    /// Courier accepts refused by the hook, a self-signed one accepted, pins reported or enforced.
    @Test func trustHookAndReportOnlyPinsFromC() async throws {
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/trust", [s.https + "/small", s.certs + "/ca.pem",
                                                        "https://localhost:\(s.tlsPorts["selfsigned"]!)/small"])
        #expect(run.status == 0 && run.stdout.contains("all checks passed"), "\(run.stdout)\(run.stderr)")
    }

    /// An engine's requests cancelled all at once and by a predicate, another engine's untouched,
    /// and a request's curl command (Tests/CPrograms/cancel.c).
    @Test func cancelAllAndTheCurlCommandFromC() async throws {
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/cancel", [await s.privateScripted()])
        #expect(run.status == 0 && run.stdout.contains("all checks passed"), "\(run.stdout)\(run.stderr)")
    }

    /// The HTTP cache over the C ABI (Tests/CPrograms/scenarios.c `cache`): hits and their
    /// phases, a generated 504, the memory tier dropped and a disk hit, cached-then-fresh as two
    /// marked deliveries, cached-then-network asking while fresh, bad arguments, twenty
    /// identical GETs that reach the server once, and byte ranges kept, combined and served.
    @Test func cCache() async throws {
        let bin = try await CExamples.shared.directory()
        let fresh = ScriptedResource("cfresh"), stale = ScriptedResource("cstale"), slow = ScriptedResource("cslow")
        let ranged = ScriptedResource("cranged")
        await ranged.configure(headers: [("Cache-Control", "max-age=600"), ("ETag", "\"r\"")], body: "0123456789abcdefghij", ranges: true)
        await fresh.configure(headers: [("Cache-Control", "max-age=600")], body: "fresh")
        await stale.configure(headers: [("Cache-Control", "max-age=0"), ("ETag", "\"s\"")], body: "stale")
        await slow.configure(headers: [("Cache-Control", "no-store")], body: "slow", held: true)
        let directory = s.root + "/c-cache-\(UUID().uuidString.prefix(8))"
        let release = "/res-release?name=" + slow.name
        let run = try await runProcess(bin + "/scenarios", ["cache", s.scripted, fresh.path, stale.path, slow.path, release, directory, ranged.path])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("range across both parts: phase"), "\(run.stdout)")
        #expect(await ranged.requests() == 2, "two parts from the origin, the rest from storage")
        #expect(await fresh.requests() == 2, "stored once, then asked by cached-then-network (served from storage between)")
        #expect(await slow.requests() == 1, "coalesced")
    }

    /// `make install`'s layout (here from the debug build: the release build is make install's own
    /// job): a C program builds with `pkg-config courier` and runs against the installed library,
    /// and the Python package loads it by name.
    @Test func installedLayoutBuildsWithPkgConfig() async throws {
        let prefix = NSTemporaryDirectory() + "courier-prefix-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        let built = URL(fileURLWithPath: Self.library).deletingLastPathComponent().path
        let install = try await runProcess("/usr/bin/env", ["make", "--no-print-directory", "install-files", "BUILT=\(built)", "PREFIX=\(prefix)"],
                                           directory: TestServers.packageRoot)
        try #require(install.status == 0, "\(install.stdout)\(install.stderr)")
        let minor = try await runProcess("/usr/bin/python3", ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        let site = "lib/python\(minor.stdout.trimmingCharacters(in: .whitespacesAndNewlines))/dist-packages"
        for path in ["include/courier.h", "lib/libcourier.so.0.5.0", "lib/libcourier.so.1", "lib/libcourier.so",
                     "lib/pkgconfig/courier.pc", "bin/courier", site + "/courier/__init__.py", "share/man/man1/courier.1"] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path) not installed")
        }
        let environment = ["PKG_CONFIG_PATH": prefix + "/lib/pkgconfig"]
        let flags = try await runProcess("/usr/bin/env", ["pkg-config", "--cflags", "--libs", "courier"], environment: environment)
        #expect(flags.stdout.contains("-I\(prefix)/include") && flags.stdout.contains("-lcourier"), "\(flags.stdout)")
        let arguments = [TestServers.packageRoot + "/cbindings/examples/get.c", "-o", prefix + "/get"]
            + flags.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        let compile = try await runProcess("/usr/bin/env", [ProcessInfo.processInfo.environment["CC"] ?? "cc"] + arguments, background: true)
        try #require(compile.status == 0, "\(compile.stderr)")
        let run = try await runProcess(prefix + "/get", [s.nginx + "/small"], environment: ["LD_LIBRARY_PATH": prefix + "/lib"])
        #expect(run.status == 0 && run.stdoutBytes.count == 100, "\(run.stderr)")
        let python = try await runProcess(pythonPath, ["-c", "import courier; print(courier.Engine('\(s.nginx)').get('/small').status)"],
                                          environment: ["PYTHONPATH": prefix + "/" + site, "LD_LIBRARY_PATH": prefix + "/lib",
                                                        "COURIER_LIBRARY": ""])
        #expect(python.stdout == "200\n", "\(python.stderr)")
        // With the default prefix the package lands where the system's python3 looks, without
        // PYTHONPATH (the README's `make install` then `import courier`).
        let defaultSite = try await runProcess("/usr/bin/env", ["make", "--no-print-directory", "-s", "python-site", "PREFIX=/usr/local"],
                                               directory: TestServers.packageRoot)
        let searched = try await runProcess("/usr/bin/python3", ["-c", "import sys; print('\\n'.join(sys.path))"])
        #expect(searched.stdout.split(separator: "\n").contains(Substring(defaultSite.stdout.trimmingCharacters(in: .whitespacesAndNewlines))),
                "\(defaultSite.stdout) is not on python3's path: \(searched.stdout)")
    }

    /// Per-request user data, the response facts (reason, version, redirect history, bytes,
    /// remote address, TLS, trailers) and COURIER_TIMEOUT_DEFAULT (Tests/CPrograms/info.c),
    /// plainly and under valgrind memcheck.
    @Test func userDataAndResponseFacts() async throws {
        let bin = try await CExamples.shared.directory()
        let arguments = [await s.privateScripted(), s.https + "/small", s.certs + "/ca.pem"]
        let run = try await runProcess(bin + "/info", arguments)
        #expect(run.status == 0, "\(run.stderr)")
        if let valgrindPath {
            let checked = try await runProcess(valgrindPath, valgrindArguments + [bin + "/info"] + arguments, background: true)
            #expect(checked.status == 0, "\(checked.stderr)")
        }
    }

    /// curl's connection options (cipher lists, curves, ALPN, versions, Happy Eyeballs, the
    /// 100-continue wait, head limits, a CONNECT tunnel for http) from C (Tests/CPrograms/connection.c),
    /// plainly and under valgrind memcheck.
    @Test func connectionOptions() async throws {
        let bin = try await CExamples.shared.directory()
        let arguments = [await s.privateScripted(), "https://localhost:\(s.tlsPorts["tls13"]!)/small", s.certs + "/ca.pem",
                         s.stream, await s.privateProxy(), "https://localhost:\(s.tlsPorts["h2"]!)/small"]
        let run = try await runProcess(bin + "/connection", arguments)
        #expect(run.status == 0, "\(run.stderr)")
        if let valgrindPath {
            let checked = try await runProcess(valgrindPath, valgrindArguments + [bin + "/connection"] + arguments, background: true)
            #expect(checked.status == 0, "\(checked.stderr)")
        }
    }

    /// Engine defaults (timeouts, redirects, TLS), courier_request_reset and the debug callback
    /// (Tests/CPrograms/defaults.c), plainly and under valgrind memcheck.
    @Test func engineDefaultsResetAndDebug() async throws {
        let bin = try await CExamples.shared.directory()
        let arguments = [s.scripted, s.https + "/small", s.certs + "/ca.pem"]
        let run = try await runProcess(bin + "/defaults", arguments)
        #expect(run.status == 0, "\(run.stderr)")
        if let valgrindPath {
            let checked = try await runProcess(valgrindPath, valgrindArguments + [bin + "/defaults"] + arguments, background: true)
            #expect(checked.status == 0, "\(checked.stderr)")
        }
    }

    @Test(.enabled(if: valgrindPath != nil, "valgrind is not installed (make test installs it)"))
    func cExamplesUnderValgrind() async throws {
        let bin = try await CExamples.shared.directory()
        let cacheDirectory = s.root + "/valgrind-cache-\(UUID().uuidString.prefix(8))"
        for (program, arguments) in [("badinput", [s.nginx]), ("parallel", [s.nginx, "40", "/small", "3"]),
                                     ("poll", [s.nginx, "40", "/small"]), ("cache", [s.nginx, "/small", cacheDirectory]),
                                     ("cache", [s.nginx, "/small", cacheDirectory])] {
            let run = try await runProcess(valgrindPath!, valgrindArguments + [bin + "/" + program] + arguments, background: true)
            #expect(run.status == 0, "\(program): \(run.stderr)")
            #expect(!run.stderr.contains("Invalid read") && !run.stderr.contains("Invalid write"), "\(program): \(run.stderr)")
        }
    }

    /// `pip install ./cbindings/python` as the issue says a user types it: a package without a
    /// bundled library, which finds one through COURIER_LIBRARY (or an installed libcourier.so.1),
    /// and which says what is wrong, naming every place it looked, when there is none.
    @Test func pythonSourceInstallFindsOrExplainsTheLibrary() async throws {
        let root = s.root + "/pysrc-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        // A copy of the source package as a checkout has it (no library inside it).
        let source = root + "/source"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestServers.packageRoot + "/cbindings/python", toPath: source)
        for leftover in try FileManager.default.contentsOfDirectory(atPath: source + "/courier") where leftover.hasPrefix("libcourier.so") {
            try FileManager.default.removeItem(atPath: source + "/courier/" + leftover)
        }
        // Offline: the build backend (setuptools) comes from Debian, so no build isolation.
        let venv = try await runProcess("/usr/bin/python3", ["-m", "venv", "--system-site-packages", root + "/venv"])
        try #require(venv.status == 0, "\(venv.stderr)")
        let install = try await runProcess(root + "/venv/bin/pip", ["install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation", source],
                                           directory: root)
        try #require(install.status == 0, "\(install.stdout)\(install.stderr)")
        let script = "import courier; print(courier.version()); print(courier.get('\(s.nginx)/small').status_code)"
        let found = try await runProcess(root + "/venv/bin/python", ["-c", script], environment: ["COURIER_LIBRARY": Self.library],
                                         directory: root)
        #expect(found.status == 0 && found.stdout.hasSuffix("\n200\n"), "\(found.stdout)\(found.stderr)")
        let system = try await runProcess("/sbin/ldconfig", ["-p"])
        if !system.stdout.contains("libcourier.so") {
            let missing = try await runProcess(root + "/venv/bin/python", ["-c", "import courier"],
                                               environment: ["COURIER_LIBRARY": root + "/no-such/libcourier.so.1"], directory: root)
            #expect(missing.status != 0)
            #expect(missing.stderr.contains("ImportError: libcourier not found or not usable (set COURIER_LIBRARY"), "\(missing.stderr)")
            #expect(missing.stderr.contains(root + "/no-such/libcourier.so.1"), "it names the places it tried: \(missing.stderr)")
        }
    }

    /// The Python suite as a user runs the package: `make python-wheel` (with this build's
    /// library inside, and the C extension built by setuptools, which the suite checks loaded),
    /// installed into a fresh virtual environment, imported from there with no COURIER_LIBRARY
    /// (the bundled library is found) and not from the source tree.
    @Test func pythonBinding() async throws {
        let root = s.root + "/wheel-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let wheel = try await runProcess("/usr/bin/env", ["make", "--no-print-directory", "python-wheel", "PYTHON_WHEEL_LIBRARY=\(Self.library)"],
                                         directory: TestServers.packageRoot)
        try #require(wheel.status == 0, "\(wheel.stdout)\(wheel.stderr)")
        let built = try FileManager.default.contentsOfDirectory(atPath: TestServers.packageRoot + "/dist")
            .filter { $0.hasPrefix("courier_http-") && $0.hasSuffix(".whl") }
        try #require(built.count >= 1, "no wheel in dist/")
        let venv = try await runProcess("/usr/bin/python3", ["-m", "venv", root])
        try #require(venv.status == 0, "\(venv.stderr)")
        let install = try await runProcess(root + "/bin/pip", ["install", "--quiet", "--no-index", "--no-deps", "--force-reinstall",
                                                               TestServers.packageRoot + "/dist/" + built.sorted().last!])
        try #require(install.status == 0, "\(install.stderr)")
        let result = try await runProcess(root + "/bin/python", ["-X", "faulthandler", "-m", "unittest", "discover", "-s", "cbindings/python/tests", "-v"],
                                          environment: ["COURIER_LIBRARY": "", "COURIER_TEST_INSTALLED": "1", "COURIER_TEST_EXPECT_SPEEDUPS": "1",
                                                        "COURIER_TEST_NGINX": s.nginx,
                                                        "COURIER_TEST_SCRIPTED": await s.privateScripted(),
                                                        "COURIER_TEST_HTTPS": s.https, "COURIER_TEST_SELFSIGNED": "https://localhost:\(s.tlsPorts["selfsigned"]!)",
                                                        "COURIER_TEST_CLIENTAUTH": "https://localhost:\(s.tlsPorts["clientauth"]!)",
                                                        "COURIER_TEST_H2": "https://localhost:\(s.tlsPorts["h2"]!)",
                                                        "COURIER_TEST_CERTS": s.certs, "COURIER_TEST_STREAM": s.stream,
                                                        "COURIER_TEST_RETRY": await s.privateRetryServer(),
                                                        "COURIER_TEST_COOKIES": await s.privateCookieServer(),
                                                        "COURIER_TEST_IDEMPOTENCY": await s.privateIdempotencyServer(),
                                                        "COURIER_TEST_PROXY": await s.privateProxy(),
                                                        "COURIER_TEST_SOCKS": await s.privateSocksProxy(credentials: "py:pw"),
                                                        "COURIER_TEST_DIGEST": await s.privateDigestServer(),
                                                        "COURIER_TEST_HTTPS_PROXY": await s.privateHTTPSProxy().proxy,
                                                        "COURIER_TEST_TOKENS": await s.privateTokenServer()],
                                          directory: TestServers.packageRoot)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("OK"), "\(result.stderr)")
    }

    /// The Python binding under valgrind memcheck (CPython's own allocator off): blocking calls,
    /// callbacks from the loop thread, asyncio (through the C extension `make test` builds in the
    /// tree), the cache and errors. CPython and the dynamic
    /// loader have reports of their own under valgrind; the test fails on any error or definite
    /// leak whose stack passes through Courier's library.
    @Test func pythonBindingUnderValgrind() async throws {
        let python = try await runProcess(pythonPath, ["-c", "import sys; print(sys.executable)"])
        let script = """
        import asyncio, courier, courier._fast
        assert courier._fast.speedups is not None, "the C extension did not load"
        base = "\(s.nginx)"
        with courier.Engine(base) as api:
            for _ in range(10):
                assert api.get("/small").status == 200
            done = []
            request = api.send("GET", "/small", callback=lambda r, e: done.append((r.status if r else 0, e)))
            request.wait()
            assert done == [(200, None)], done
            async def many():
                return await asyncio.gather(*(api.fetch("GET", "/small") for _ in range(8)))
            assert all(r.status == 200 for r in asyncio.run(many()))
            try:
                api.get("/no-such-file")
            except courier.HTTPStatusError as error:
                assert error.response.status == 404
        with courier.Engine(base, cache_memory=1 << 20) as cached:
            assert cached.get("/revalidate/small").phase == "fresh"
            assert cached.get("/revalidate/small").phase == "not_modified"
        try:
            courier.Engine("http://127.0.0.1:1").get("/")
        except courier.CourierError as error:
            assert error.primary == 7, error
        print("done")
        """
        let run = try await runProcess("/usr/bin/env", ["valgrind", "--leak-check=full", "--show-leak-kinds=definite",
                                                       "--errors-for-leak-kinds=definite", "--num-callers=40",
                                                       python.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "-c", script],
                                       environment: ["COURIER_LIBRARY": Self.library, "PYTHONMALLOC": "malloc",
                                                     "PYTHONPATH": TestServers.packageRoot + "/cbindings/python"],
                                       background: true)
        #expect(run.stdout == "done\n", "\(run.stdout)\(run.stderr.suffix(3000))")
        // valgrind's reports are blocks of "==pid== " lines separated by an empty one; a report is
        // ours when one of its stack frames is in Courier's library.
        let blocks = run.stderr.components(separatedBy: .newlines)
            .filter { $0.range(of: #"^==\d+=="#, options: .regularExpression) != nil }
            .split { $0.range(of: #"^==\d+== $"#, options: .regularExpression) != nil }
        let ours = blocks.filter { block in
            block.contains { $0.range(of: #"(at|by) 0x[0-9A-F]+: .*(Courier|courier_)"#, options: .regularExpression) != nil }
        }.filter { block in block.contains { $0.contains("Invalid") || $0.contains("uninitialised") || $0.contains("definitely lost") } }
        #expect(ours.isEmpty, "\(ours.prefix(3).map { $0.joined(separator: "\n") }.joined(separator: "\n\n"))")
    }

    // MARK: In-process, through the header

    /// What a callback saw, passed as the C user pointer.
    final class CallbackProbe: @unchecked Sendable {
        var performCode: Int32 = -1
        var shutdownCode: Int32 = -1
        var status: Int32 = 0
        var code: Int32 = -1
        var engine: OpaquePointer?
        var onLoopThread = false
        let done = DispatchSemaphore(value: 0)
    }

    @Test func callbacksMayFreeAndDestroyButNotWait() async throws {
        var engine: OpaquePointer?
        #expect(courier_engine_create(s.nginx, &engine) == COURIER_OK)
        var request: OpaquePointer?
        #expect(courier_request_create(engine, "GET", "/small", &request) == COURIER_OK)
        let probe = CallbackProbe()
        probe.engine = engine
        let user = Unmanaged.passRetained(probe).toOpaque()
        let sent = courier_request_send(request, { request, response, code, user in
            let probe = Unmanaged<CallbackProbe>.fromOpaque(user!).takeRetainedValue()
            probe.code = code
            probe.status = courier_response_status(response)
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            probe.onLoopThread = name.hasPrefix("courier-loop")
            // Waiting here would wait for this very thread.
            var other: OpaquePointer?
            courier_request_create(nil, "GET", "http://127.0.0.1:1/", &other)
            probe.performCode = courier_request_perform(other, nil)
            courier_request_free(other)
            probe.shutdownCode = courier_shutdown()
            // Freeing everything from inside the callback is allowed.
            courier_response_free(response)
            courier_request_free(request)
            courier_engine_destroy(probe.engine)
            probe.done.signal()
        }, user)
        #expect(sent == COURIER_OK)
        try await waitOffThread(probe.done)
        #expect(probe.code == COURIER_OK && probe.status == 200)
        #expect(probe.onLoopThread, "callbacks run on Courier's loop thread")
        #expect(probe.performCode == COURIER_E_MISUSE)
        #expect(probe.shutdownCode == COURIER_E_MISUSE)
    }

    /// A bare host means https in C as in Swift (Engine(host:)) and Python: nginx's plain-HTTP
    /// port spoken to with TLS fails the handshake in both, and answers with http:// given.
    @Test func aBareHostMeansHTTPSInEveryLanguage() async throws {
        let bare = "127.0.0.1:\(s.nginxPort)"
        let codes = await withCheckedContinuation { (done: CheckedContinuation<(Int32, Int32), Never>) in
            Thread.detachNewThread {
                func perform(_ base: String) -> Int32 {
                    var engine: OpaquePointer?
                    guard courier_engine_create(base, &engine) == COURIER_OK else { return -1 }
                    defer { courier_engine_destroy(engine) }
                    var request: OpaquePointer?
                    guard courier_request_create(engine, "GET", "/small", &request) == COURIER_OK else { return -2 }
                    defer { courier_request_free(request) }
                    var response: OpaquePointer?
                    let code = courier_request_perform(request, &response)
                    courier_response_free(response)
                    return code
                }
                done.resume(returning: (perform(bare), perform("http://" + bare)))
            }
        }
        #expect(codes.0 & 0xFF == COURIER_E_TLS, "C: \(codes.0)")
        #expect(codes.1 == COURIER_OK)
        do {
            _ = try await Engine(host: bare).get("/small")
            Issue.record("Swift sent a bare host's request over plain HTTP")
        } catch {
            #expect(error.code.primary == .tls, "Swift: \(error)")
        }
    }

    @Test func pullStyleDescriptorAndFailures() async throws {
        var engine: OpaquePointer?
        #expect(courier_engine_create(s.scripted, &engine) == COURIER_OK)
        defer { courier_engine_destroy(engine) }
        let fd = courier_engine_fd(engine)
        #expect(fd >= 0)
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&pollfd, 1, 0) == 0)
        var requests: [OpaquePointer?] = []
        for path in ["/truncated", "/status?code=418", "/echo"] {
            var request: OpaquePointer?
            #expect(courier_request_create(engine, path == "/echo" ? "POST" : "GET", path, &request) == COURIER_OK)
            if path == "/echo" {
                let body = Array("payload".utf8)
                #expect(courier_request_set_body(request, body, body.count) == COURIER_OK)
                #expect(courier_request_add_header(request, "X-Probe", "yes") == COURIER_OK)
            }
            #expect(courier_request_enqueue(request) == COURIER_OK)
            requests.append(request)
        }
        var results: [OpaquePointer: (Int32, Int32, String)] = [:]
        while results.count < 3 {
            let ready = try await pollOffThread(fd)
            #expect(ready)
            if !ready { break }
            var request: OpaquePointer?, response: OpaquePointer?
            var code: Int32 = 0
            while courier_engine_next_done(engine, &request, &response, &code) == COURIER_OK {
                var length = 0
                let body = courier_response_body(response, &length)
                let text = body.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
                results[request!] = (code, courier_response_status(response), text)
                if code != COURIER_OK { #expect(String(cString: courier_request_errmsg(request)).count > 10) }
                courier_response_free(response)
            }
        }
        #expect(results[requests[0]!]?.0 == COURIER_E_TRUNCATED_BODY)
        #expect(results[requests[1]!]?.0 == COURIER_E_HTTP_STATUS && results[requests[1]!]?.1 == 418)
        #expect(results[requests[2]!]?.0 == COURIER_OK && results[requests[2]!]?.2.contains("payload") == true)
        #expect(results[requests[2]!]?.2.contains("X-Probe") == true)
        // The loop thread signals a completion after letting the queue's lock go, and resets the
        // descriptor itself if the queue was drained meanwhile: once it has finished a later
        // request, that is over, and the drained descriptor must read idle.
        let address = Int(bitPattern: engine)
        let later = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var request: OpaquePointer?
                courier_request_create(OpaquePointer(bitPattern: address), "GET", "/status?code=204", &request)
                continuation.resume(returning: courier_request_perform(request, nil))
                courier_request_free(request)
            }
        }
        #expect(later == COURIER_OK)
        #expect(poll(&pollfd, 1, 0) == 0, "drained: the descriptor reads idle again")
        requests.forEach { courier_request_free($0) }
    }

    /// Waits for a semaphore on a thread of its own.
    func waitOffThread(_ semaphore: DispatchSemaphore, seconds: Double = 20) async throws {
        let ok = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success) }
        }
        try #require(ok, "timed out")
    }

    /// poll(2) on a thread of its own; whether the descriptor became readable within 10 s.
    func pollOffThread(_ fd: Int32) async throws -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                continuation.resume(returning: poll(&pollfd, 1, 10_000) == 1)
            }
        }
    }
}

/// The C examples, compiled once per test run with the system compiler against the built
/// library, the way a user's program is (header from include/, -lcourier, SONAME resolution).
actor CExamples {
    static let shared = CExamples()
    /// One build shared by every test that asks (actor methods interleave at each await).
    private var build: Task<String, Error>?

    func directory() async throws -> String {
        if build == nil { build = Task { try await Self.compile() } }
        return try await build!.value
    }

    private static func compile() async throws -> String {
        let directory = NSTemporaryDirectory() + "courier-c-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: directory + "/libcourier.so.1")
        try? FileManager.default.removeItem(atPath: directory + "/libcourier.so")
        try FileManager.default.createSymbolicLink(atPath: directory + "/libcourier.so.1", withDestinationPath: CABITests.library)
        try FileManager.default.createSymbolicLink(atPath: directory + "/libcourier.so", withDestinationPath: "libcourier.so.1")
        let root = TestServers.packageRoot
        let compiler = ProcessInfo.processInfo.environment["CC"] ?? "cc"
        let programs = ["get", "parallel", "poll", "badinput", "cache"].map { ($0, root + "/cbindings/examples/\($0).c") }
            + [("scenarios", root + "/Tests/CPrograms/scenarios.c"), ("streams", root + "/Tests/CPrograms/streams.c"),
               ("retry", root + "/Tests/CPrograms/retry.c"), ("group", root + "/Tests/CPrograms/group.c"),
               ("cookies", root + "/Tests/CPrograms/cookies.c"), ("auth", root + "/Tests/CPrograms/auth.c"),
               ("proxy", root + "/Tests/CPrograms/proxy.c"), ("challenge", root + "/Tests/CPrograms/challenge.c"),
               ("hooks", root + "/Tests/CPrograms/hooks.c"), ("chain", root + "/Tests/CPrograms/chain.c"),
               ("outbox", root + "/Tests/CPrograms/outbox.c"), ("info", root + "/Tests/CPrograms/info.c"),
               ("defaults", root + "/Tests/CPrograms/defaults.c"), ("connection", root + "/Tests/CPrograms/connection.c"),
               ("unix_socket", root + "/Tests/CPrograms/unix_socket.c"), ("json", root + "/Tests/CPrograms/json.c"),
               ("local_end", root + "/Tests/CPrograms/local_end.c"), ("cancel", root + "/Tests/CPrograms/cancel.c"),
               ("timecond", root + "/Tests/CPrograms/timecond.c"), ("trust", root + "/Tests/CPrograms/trust.c"),
               ("socks", root + "/Tests/CPrograms/socks.c"), ("https_proxy", root + "/Tests/CPrograms/https_proxy.c"),
               ("digest", root + "/Tests/CPrograms/digest.c"), ("hsts", root + "/Tests/CPrograms/hsts.c"),
               ("mock", root + "/Tests/CPrograms/mock.c")]
        for (example, source) in programs {
            let result = try await runProcess("/usr/bin/env", [compiler, "-std=c11", "-D_DEFAULT_SOURCE", "-Wall", "-Wextra", "-Werror", "-g",
                                                               "-I", root + "/include", source,
                                                               "-L", directory, "-lcourier", "-lpthread", "-Wl,-rpath," + directory,
                                                               "-o", directory + "/" + example], background: true)
            guard result.status == 0 else { throw CompileError(message: "\(example).c: \(result.stderr)") }
        }
        TestServers.addCleanup { try? FileManager.default.removeItem(atPath: directory) }
        return directory
    }

    struct CompileError: Error { let message: String }
}
