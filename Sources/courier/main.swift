import Courier
import CourierCore
import Dispatch
import Glibc

// courier: a curl-compatible command line for the subset of curl Courier implements, with curl's
// exit codes. Every URL goes through Courier's shared queue and connection pool, so several URLs to
// one host reuse one connection (sequentially) or share the queue's width (with -Z). The flags and
// their help are in FlagTable.

var options: CommandLineOptions
do {
    options = try ArgumentParser.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    Terminal.error("courier: \(error.message)\ncourier: try 'courier --help' for more information\n")
    exit(error.code)
}
// -w @file reads the format from a file (@- from stdin), as curl does.
if let format = options.writeOut, format.hasPrefix("@") {
    do {
        options.writeOut = String(decoding: try RequestData.readFile(String(format.dropFirst())), as: UTF8.self)
    } catch {
        Terminal.error("courier: (26) \((error as? CourierError)?.message ?? "\(error)")\n")
        exit(26)
    }
}
if options.fail, options.failWithBody {
    Terminal.error("courier: You must select either --fail or --fail-with-body, not both.\n")
    exit(ExitCode.usage)
}
if options.help {
    guard let text = FlagTable.help(options.helpCategory) else {
        Terminal.error("courier: unknown category provided, here is a list of all categories:\n\n" + (FlagTable.help("category") ?? ""))
        exit(ExitCode.usage)
    }
    Terminal.write(text)
    exit(0)
}
if options.manual || options.manPage {
    Terminal.write(options.manPage ? FlagTable.manPage(version: CourierVersion.string) : FlagTable.help("all")!)
    exit(0)
}
if options.version {
    Terminal.write("courier \(CourierVersion.string) (libuv, llhttp, OpenSSL, zlib)\nProtocols: http https\nFeatures: keep-alive pool, shared queue, gzip/deflate\n")
    exit(0)
}
if options.watchNetwork {
    NetworkWatch.run(seconds: options.maxTime, urls: options.urls)
}
guard !options.urls.isEmpty || options.flush else {
    Terminal.error("courier: no URL specified!\ncourier: try 'courier --help' for more information\n")
    exit(ExitCode.usage)
}

var requestBody: (body: RequestBody, contentType: String?)?
// --trace-ascii with -T -: what stdin gave, kept to be shown after it was sent.
let stdinCopy = options.uploadFile == "-" && options.traceFile != nil ? UploadCopy() : nil
// -G: the data is the query of a GET (HEAD with -I) instead of a body.
var getQuery: String?
do {
    if options.get, options.forms.isEmpty, options.uploadFile == nil, options.json.isEmpty {
        getQuery = try RequestData.body(options).map { String(decoding: $0, as: UTF8.self) }
        options.data = []
    }
    requestBody = try RequestData.requestBody(options, stdinCopy: stdinCopy)
    if options.http10, options.uploadFile == "-" {
        // curl's refusal: HTTP/1.0 cannot frame a body of unknown length.
        Terminal.error("courier: (25) Chunky upload is not supported by HTTP 1.0\n")
        exit(25)
    }
} catch let error as CourierError {
    Terminal.error("courier: (26) \(error.message)\n")
    exit(26)
} catch let error as UsageError {
    Terminal.error("courier: \(error.message)\ncourier: try 'courier --help' for more information\n")
    exit(ExitCode.usage)
}

// --cache-dir: the cache a browser keeps across page loads, kept across invocations (several at
// once may share the directory). A small memory tier serves repeated URLs of one invocation.
var cache: ResponseCache?
if let directory = options.cacheDirectory {
    var settings = ResponseCache.Configuration()
    settings.directory = directory
    settings.memoryBytes = 8 << 20
    do {
        cache = try ResponseCache(settings)
    } catch {
        Terminal.error("courier: (23) --cache-dir: \(error.message)\n")
        exit(23)
    }
}

// -b/-c: curl's cookie engine. A -b value with "=" is sent as is; any other is a cookie file
// read into the jar (a missing one is an empty jar); -c writes the jar when every transfer is done.
var cookieJar: CookieJar?
var cookieStrings: [String] = []
for value in options.cookies {
    if value.contains("=") {
        cookieStrings.append(value)
        continue
    }
    let jar = cookieJar ?? CookieJar()
    cookieJar = jar
    if !value.isEmpty {
        do {
            try jar.load(file: value)
        } catch {
            Terminal.error("courier: (26) \(error.message)\n")
            exit(26)
        }
    }
}
if options.cookieJarPath != nil, cookieJar == nil { cookieJar = CookieJar() }
if options.junkSessionCookies, let jar = cookieJar {
    let kept = jar.all.filter { $0.expires != nil }
    jar.removeAll()
    for cookie in kept { jar.insert(cookie) }
}
let cookieHeader = cookieStrings.isEmpty ? nil : cookieStrings.joined(separator: "; ")

/// -D's and --trace-ascii's file, or curl's 23 when it cannot be made.
func textLog(_ path: String?) -> HeaderDump? {
    guard let path else { return nil }
    do {
        return try HeaderDump(path: path)
    } catch {
        Terminal.error("courier: (23) \(error.message)\n")
        exit(23)
    }
}
let headerDump = textLog(options.dumpHeader)
let trace = textLog(options.traceFile)

// curl draws its meter whether or not stderr is a terminal (a log shows it too); -s and
// --no-progress-meter turn it off, and -v's lines would be torn by it.
let progressAllowed = !options.silent && !options.verbose && options.progressBar
if options.parallel {
    SharedQueue.width = options.parallelMax
    SharedQueue.defaultHostLimit = options.parallelMax
}

// --outbox: the journal requests wait in until their server answers (one owner at a time).
var journal: Journal?
if let directory = options.outbox {
    do {
        journal = try Journal(directory: directory)
    } catch {
        Terminal.error("courier: (23) --outbox: \(error.message)\n")
        exit(23)
    }
    for name in journal!.setAside where !options.silent || options.showError {
        Terminal.error("courier: outbox: \(directory)/\(name): damaged entry set aside (not sent)\n")
    }
}
// What every URL shares, worked out once.
let context = CLIContext(options: options, body: requestBody, showProgress: progressAllowed && !options.parallel, cache: cache,
                         headerDump: headerDump, cookies: cookieJar, cookieHeader: cookieHeader, journal: journal, trace: trace,
                         uploadCopy: stdinCopy, parallelMeter: progressAllowed && options.parallel && !options.flush ? ParallelMeter() : nil)
Terminal.meterLine = context.parallelMeter
if options.flush {
    guard let journal else {
        Terminal.error("courier: --flush needs --outbox DIR\ncourier: try 'courier --help' for more information\n")
        exit(ExitCode.usage)
    }
    exit(OutboxFlush.run(journal, context: context))
}

// Each URL argument pairs with its output in order (curl): the -o names first, then -O; a
// globbed argument's expansions share it, `#N` in an -o name taking the N-th glob's value.
var arguments: [URLList.Argument] = []
for (position, text) in options.urls.enumerated() {
    let remote = position - options.outputs.count
    let pattern: URLGlob.Pattern
    do {
        pattern = options.globOff ? URLGlob.Pattern(segments: [.literal(text)], count: 1) : try URLGlob.parse(text)
    } catch {
        Terminal.error("courier: (3) \(error.message)\n")
        exit(3)
    }
    arguments.append(URLList.Argument(pattern: pattern, template: position < options.outputs.count ? options.outputs[position] : nil,
                                      remoteName: options.remoteNameAll || (remote >= 0 && remote < options.remoteNameCount),
                                      query: getQuery))
}

// A bounded window of transfers: enough to keep the queue's width busy with -Z, one at a time
// without it; results are reported in URL order either way, from the loop thread.
let window = options.parallel ? max(2 * options.parallelMax, 2) : 1
Terminal.bufferStdoutUnlessTerminal()
let exitCode = CLIRunner(urls: URLList(arguments: arguments), context: context, window: window).run()

// What the cache stored is on disk before the next invocation looks.
cache?.flush()
if let path = options.cookieJarPath, let jar = cookieJar {
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
Terminal.flushStdout()
headerDump?.close()
trace?.close()
// A clean shutdown (every connection closed, the loop thread joined) keeps valgrind runs of the
// CLI meaningful and costs well under a millisecond.
Runtime.shared.shutdown()
exit(exitCode)
