import Courier
import CourierCore
import Glibc

/// One group of the command line (the URLs between two `--next`), made ready to run: its request
/// body, cache, cookie jar, header dump and outbox, its shared context, and its URLs paired with
/// their outputs. A setting that cannot be used ends the program with curl's exit code, before
/// any transfer starts.
struct GroupSetup {
    let context: CLIContext
    let arguments: [URLList.Argument]
    private let cache: ResponseCache?
    private let cookieJar: CookieJar?
    private let headerDump: HeaderDump?

    static func make(_ given: CommandLineOptions, trace: HeaderDump?, showProgress: Bool, parallelMeter: ParallelMeter?) -> GroupSetup {
        var options = given
        // -w @file reads the format from a file (@- from stdin), as curl does.
        if let format = options.writeOut, format.hasPrefix("@") {
            do {
                options.writeOut = String(decoding: try RequestData.readFile(String(format.dropFirst())), as: UTF8.self)
            } catch {
                fail(26, (error as? CourierError)?.message ?? "\(error)")
            }
        }
        if options.fail, options.failWithBody {
            Terminal.error("courier: You must select either --fail or --fail-with-body, not both.\n")
            exit(ExitCode.usage)
        }
        let (body, query, stdinCopy) = requestBody(&options, tracing: trace != nil)
        let cache = options.cacheDirectory.map(makeCache)
        let (cookieJar, cookieHeader) = cookies(options)
        let headerDump = textLog(options.dumpHeader)
        let outbox = options.outbox.map { openOutbox($0, options) }
        let context = CLIContext(options: options, body: body, showProgress: showProgress, cache: cache,
                                 headerDump: headerDump, cookies: cookieJar, cookieHeader: cookieHeader, outbox: outbox, trace: trace,
                                 uploadCopy: stdinCopy, parallelMeter: parallelMeter)
        return GroupSetup(context: context, arguments: urlArguments(options, query: query, context: context),
                          cache: cache, cookieJar: cookieJar, headerDump: headerDump)
    }

    /// After every transfer: what the cache stored is on disk before the next invocation looks,
    /// -c writes the jar, --hsts's file is written, -D's file is closed.
    func finish() {
        cache?.flush()
        do {
            try context.hsts?.save()
        } catch {
            Terminal.error("courier: WARNING: failed to save the HSTS cache: \(error.message)\n")
        }
        if let path = context.options.cookieJarPath, let jar = cookieJar {
            if path == "-" {
                Terminal.write(jar.netscapeText())
            } else {
                do {
                    try jar.save(file: path)
                } catch {
                    Terminal.error("courier: WARNING: failed to save cookies in \(path): \(error.message)\n")
                }
            }
        }
        headerDump?.close()
    }

    private static func fail(_ code: Int32, _ message: String) -> Never {
        Terminal.error("courier: (\(code)) \(message)\n")
        exit(code)
    }

    /// The body (-d, -F, -T, --json), or -G's query instead; what `-T -` read is kept for
    /// --trace-ascii.
    private static func requestBody(_ options: inout CommandLineOptions, tracing: Bool)
        -> (body: (body: RequestBody, contentType: String?)?, query: String?, stdinCopy: UploadCopy?) {
        let stdinCopy = options.uploadFile == "-" && tracing ? UploadCopy() : nil
        var query: String?
        do {
            if options.get, options.forms.isEmpty, options.uploadFile == nil, options.json.isEmpty {
                query = try RequestData.body(options).map { String(decoding: $0, as: UTF8.self) }
                options.data = []
            }
            let body = try RequestData.requestBody(options, stdinCopy: stdinCopy)
            if options.http10, options.uploadFile == "-" {
                // curl's refusal: HTTP/1.0 cannot frame a body of unknown length.
                fail(25, "Chunky upload is not supported by HTTP 1.0")
            }
            return (body, query, stdinCopy)
        } catch let error as CourierError {
            fail(26, error.message)
        } catch let error as UsageError {
            Terminal.error("courier: \(error.message)\ncourier: try 'courier --help' for more information\n")
            exit(ExitCode.usage)
        } catch {
            fail(26, "\(error)")
        }
    }

    /// --cache-dir: the cache a browser keeps across page loads, kept across invocations (several
    /// at once may share the directory). A small memory tier serves repeated URLs of one invocation.
    private static func makeCache(_ directory: String) -> ResponseCache {
        var settings = ResponseCache.Configuration()
        settings.directory = directory
        settings.memoryBytes = 8 << 20
        do {
            return try ResponseCache(settings)
        } catch {
            fail(23, "--cache-dir: \(error.message)")
        }
    }

    /// -b/-c: curl's cookie engine. A -b value with "=" is sent as is; any other is a cookie file
    /// read into the jar (a missing one is an empty jar); -c writes the jar when every transfer is
    /// done.
    private static func cookies(_ options: CommandLineOptions) -> (CookieJar?, String?) {
        var cookieJar: CookieJar?
        var strings: [String] = []
        for value in options.cookies {
            if value.contains("=") {
                strings.append(value)
                continue
            }
            let jar = cookieJar ?? CookieJar()
            cookieJar = jar
            if !value.isEmpty {
                do {
                    try jar.load(file: value)
                } catch {
                    fail(26, error.message)
                }
            }
        }
        if options.cookieJarPath != nil, cookieJar == nil { cookieJar = CookieJar() }
        if options.junkSessionCookies, let jar = cookieJar {
            let kept = jar.all.filter { $0.expires != nil }
            jar.removeAll()
            for cookie in kept { jar.insert(cookie) }
        }
        return (cookieJar, strings.isEmpty ? nil : strings.joined(separator: "; "))
    }

    /// -D's and --trace-ascii's file, or curl's 23 when it cannot be made.
    static func textLog(_ path: String?) -> HeaderDump? {
        guard let path else { return nil }
        do {
            return try HeaderDump(path: path)
        } catch {
            fail(23, error.message)
        }
    }

    /// --outbox: the journal requests wait in until their server answers (one owner at a time).
    private static func openOutbox(_ directory: String, _ options: CommandLineOptions) -> Outbox {
        let outbox: Outbox
        do {
            outbox = try Outbox(directory: directory)
        } catch {
            fail(23, "--outbox: \(error.message)")
        }
        for name in outbox.setAside where !options.silent || options.showError {
            Terminal.error("courier: outbox: \(directory)/\(name): damaged entry set aside (not sent)\n")
        }
        return outbox
    }

    /// Each URL argument pairs with its output in order (curl): the -o names first, then -O; a
    /// globbed argument's expansions share it, `#N` in an -o name taking the N-th glob's value.
    private static func urlArguments(_ options: CommandLineOptions, query: String?, context: CLIContext) -> [URLList.Argument] {
        var arguments: [URLList.Argument] = []
        for (position, text) in options.urls.enumerated() {
            let remote = position - options.outputs.count
            let pattern: URLGlob.Pattern
            do {
                pattern = options.globOff ? URLGlob.Pattern(segments: [.literal(text)], count: 1) : try URLGlob.parse(text)
            } catch {
                fail(3, error.message)
            }
            arguments.append(URLList.Argument(pattern: pattern, template: position < options.outputs.count ? options.outputs[position] : nil,
                                              remoteName: options.remoteNameAll || (remote >= 0 && remote < options.remoteNameCount),
                                              query: query, context: context))
        }
        return arguments
    }
}
