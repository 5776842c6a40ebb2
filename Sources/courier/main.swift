import Courier
import CourierCore
import Dispatch
import Glibc

// courier: a curl-compatible command line for the subset of curl Courier implements, with curl's
// exit codes. Every URL goes through Courier's shared queue and connection pool, so several URLs to
// one host reuse one connection (sequentially) or share the queue's width (with -Z).

let usage = """
Usage: courier [options...] <url>...
 -d, --data <data>          HTTP POST data (@file reads a file)
     --data-binary <data>   HTTP POST data, sent as is
     --data-raw <data>      HTTP POST data, '@' has no special meaning
     --json <data>          POST JSON (sets Content-Type and Accept)
 -f, --fail                 Fail with exit code 22 on HTTP errors, no body output
 -H, --header <header>      Add a header ('Name:' removes one Courier would send)
 -I, --head                 Show response headers only (HEAD request)
 -i, --include              Include response headers in the output
 -D, --dump-header <file>   Write every response head to <file> ('-' is stdout)
     --cache-dir <dir>      Keep a private HTTP cache in <dir> across invocations
 -L, --location             Follow redirects
     --max-redirs <num>     Maximum number of redirects (default 50)
 -m, --max-time <seconds>   Maximum time for each transfer
     --retry <num>          Retry transient failures (timeouts, resets, 408, 429, 500,
                            502, 503, 504) up to <num> times; Retry-After is honoured
     --retry-delay <s>      Wait <s> seconds before each retry (default: 1 s, doubling)
     --retry-max-time <s>   Start no retry later than <s> seconds after the first attempt
     --retry-all-errors     Retry on any error
     --retry-connrefused    Retry when the connection is refused too
     --connect-timeout <s>  Maximum time for name resolution and connect
     --compressed           Request and decode gzip/deflate
     --max-filesize <bytes> Maximum body size (k, M, G suffixes)
 -F, --form <name=content>  Multipart form part: name=value, name=@file (upload),
                            name=<file (file as value); ;type= and ;filename= after a file
     --form-string <n=v>    Multipart form field, taken literally
 -T, --upload-file <file>   PUT a file ('-' reads stdin, sent chunked)
 -C, --continue-at -        Resume the download where the output file ends
     --limit-rate <speed>   Most bytes per second, each direction (k, M, G suffixes)
     --create-dirs          Create the output file's missing directories
 -o, --output <file>        Write the body of the next URL to <file>
 -O, --remote-name          Write the body to a file named like the URL's last path segment
     --outbox <dir>         Journal each request in <dir> before sending it; one its
                            host did not answer stays there (exit 75: try again later)
     --flush                With --outbox: send every waiting request, in order; exit
                            0 only when the outbox is empty
     --watch-network        Print the network (kind, interface, reachable) and each
                            change as it happens (for -m seconds, else until killed);
                            with URLs, whether each one's host can be reached, and why
 -s, --silent               Silent mode (no progress, no error messages)
 -S, --show-error           Show errors even when silent
 -u, --user <user:password> Basic authentication
     --oauth2-bearer <token> Bearer authentication (RFC 6750)
 -x, --proxy <[http://]host[:port]> Use this HTTP proxy ("" for none; default: env)
     --noproxy <list>       Hosts (names, addresses, CIDR; * for all) reached directly
 -U, --proxy-user <user:password> Proxy Basic credentials
 -b, --cookie <data|file>   Send "name=value; ..." as is, or read cookies from a file
                            (Netscape format, as curl writes); turns the cookie engine on
 -c, --cookie-jar <file>    Write every cookie to <file> after the transfers ('-' is stdout)
 -j, --junk-session-cookies Drop the session cookies read with -b
 -A, --user-agent <name>    User-Agent to send
 -v, --verbose              Show request and response headers on stderr
 -w, --write-out <format>   Print after each transfer, e.g. '%{http_code} %{time_total}\\n'
                            (also %{cache_status}: hit, miss, revalidated, stale, bypass)
 -Z, --parallel             Run the URLs in parallel through the shared queue
     --parallel-max <num>   Parallel width (default 50)
 -g, --globoff              Do not expand [1-9] and {a,b} in URLs
     --cacert <file>        Trust the CAs in this PEM file (besides the system's)
     --capath <dir>         Trust the CAs in this hashed directory
 -k, --insecure             Accept any server certificate (pins still apply)
     --no-sessionid         Full TLS handshakes: no session resumption
     --pinnedpubkey <pins>  sha256//BASE64[;sha256//...] or a public key file
 -E, --cert <file>          Client certificate (PEM)
     --key <file>           Client private key (PEM)
     --pass <phrase>        Passphrase of the client key
     --tlsv1.2, --tlsv1.3   Lowest TLS version to use
     --tls-max <1.2|1.3>    Highest TLS version to use
 -V, --version              Show the version
 -h, --help                 This help

"""

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
    Terminal.write(usage)
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
// -G: the data is the query of a GET (HEAD with -I) instead of a body.
var getQuery: String?
do {
    if options.get, options.forms.isEmpty, options.uploadFile == nil, options.json.isEmpty {
        getQuery = try RequestData.body(options).map { String(decoding: $0, as: UTF8.self) }
        options.data = []
    }
    requestBody = try RequestData.requestBody(options)
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

var headerDump: HeaderDump?
if let path = options.dumpHeader {
    do {
        headerDump = try HeaderDump(path: path)
    } catch {
        Terminal.error("courier: (23) \(error.message)\n")
        exit(23)
    }
}

let progressAllowed = !options.silent && !options.verbose && options.progressBar
    && (Terminal.stderrIsTerminal || options.forceProgressBar)
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
if options.flush {
    guard let journal else {
        Terminal.error("courier: --flush needs --outbox DIR\ncourier: try 'courier --help' for more information\n")
        exit(ExitCode.usage)
    }
    exit(OutboxFlush.run(journal, options: options, cache: cache, cookies: cookieJar))
}

// Each URL argument pairs with its output in order (curl): the -o names first, then -O; a
// globbed argument's expansions share it, `#N` in an -o name taking the N-th glob's value.
var urls: [(url: String, output: CLIJob.Output)] = []
for (position, pattern) in options.urls.enumerated() {
    let remote = position - options.outputs.count
    let template: String? = position < options.outputs.count ? options.outputs[position] : nil
    let named = options.remoteNameAll || (remote >= 0 && remote < options.remoteNameCount)
    func output(_ values: [String]) -> CLIJob.Output {
        if let template { return .file(URLGlob.outputName(template, values: values)) }
        return named ? .remoteName : .stdout
    }
    func withQuery(_ url: String) -> String {
        guard let getQuery, !getQuery.isEmpty else { return url }
        let fragment = url.firstIndex(of: "#").map { url[$0...] } ?? ""
        let base = url.dropLast(fragment.count)
        return base + (base.contains("?") ? "&" : "?") + getQuery + fragment
    }
    if options.globOff {
        urls.append((withQuery(pattern), output([])))
        continue
    }
    do {
        urls += try URLGlob.expand(pattern).map { (withQuery($0.url), output($0.values)) }
    } catch {
        Terminal.error("courier: (3) \(error.message)\n")
        exit(3)
    }
}

// A bounded window of transfers: enough to keep the queue's width busy with -Z, one at a time
// without it; results are reported in URL order either way.
let window = options.parallel ? max(2 * options.parallelMax, 2) : 1
var inFlight = Deque<CLIJob>()
var nextURL = 0
var exitCode: Int32 = 0
while nextURL < urls.count || !inFlight.isEmpty {
    while nextURL < urls.count, inFlight.count < window {
        let job = CLIJob(index: nextURL, rawURL: urls[nextURL].url, output: urls[nextURL].output, options: options, body: requestBody,
                         showProgress: progressAllowed && !options.parallel, cache: cache, headerDump: headerDump,
                         cookies: cookieJar, cookieHeader: cookieHeader, journal: journal)
        job.start()
        inFlight.append(job)
        nextURL += 1
    }
    let job = inFlight.popFirst()!
    job.wait()
    job.report()
    if job.exitCode != 0 { exitCode = job.exitCode }
}

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
headerDump?.close()
// A clean shutdown (every connection closed, the loop thread joined) keeps valgrind runs of the
// CLI meaningful and costs well under a millisecond.
Runtime.shared.shutdown()
exit(exitCode)
