import Courier
import CourierCore

/// Everything the command line asked for.
struct CommandLineOptions {
    var urls: [String] = []
    var method: String?
    var headers: [(name: String, value: String?)] = []
    var data: [DataArgument] = []
    var json: [DataArgument] = []
    var outputs: [String] = []
    var remoteNameCount = 0
    var remoteNameAll = false
    var include = false
    var head = false
    var location = false
    var maxRedirects = 50
    var maxTime: Double?
    var connectTimeout: Double?
    var fail = false
    var compressed = false
    /// --http1.0 (the last of --http1.0/--http1.1 wins, as in curl).
    var http10 = false
    /// --http1.1, --http2 (the default: h2 where an https server agrees), --http2-prior-knowledge.
    var httpVersion = HTTPVersionPreference.http2Preferred
    var maxFileSize: UInt64?
    var silent = false
    var showError = false
    var verbose = false
    var writeOut: String?
    var parallel = false
    var parallelMax = 50
    var userAgent: String?
    var user: String?
    var progressBar = true
    /// `-#`: a progress bar even when stderr is not a terminal.
    var forceProgressBar = false
    var help = false
    /// `--help <category>` (nil: the important options).
    var helpCategory: String?
    /// -M/--manual (text) and --man-page (troff).
    var manual = false
    var manPage = false
    var version = false
    var globOff = false
    var caFile: String?
    var caPath: String?
    var insecure = false
    var pinnedPublicKey: String?
    var certificate: String?
    var key: String?
    var passphrase: String?
    var tlsMinimum: TLSConfiguration.Version?
    var tlsMaximum: TLSConfiguration.Version?
    /// curl's --no-sessionid: no TLS session resumption (--sessionid turns it back on).
    var noSessionID = false
    /// --ciphers, --tls13-ciphers, --curves: OpenSSL's lists; --no-alpn.
    var ciphers: String?
    var tls13Ciphers: String?
    var curves: String?
    var noALPN = false
    /// -p/--proxytunnel: http URLs through the proxy's CONNECT tunnel too.
    var proxyTunnel = false
    /// --expect100-timeout (seconds) and --happy-eyeballs-timeout-ms.
    var expect100Timeout: Double?
    var happyEyeballsMillis: UInt64?
    /// --rate: at most `count` transfer starts per `seconds` (serial transfers only, as curl).
    var rate: (count: Int, seconds: Double)?
    /// --parallel-max-host: connections per host with -Z (curl's; the width when not given).
    var parallelMaxHost: Int?
    /// `--cache-dir`: a private HTTP cache kept in this directory across invocations.
    var cacheDirectory: String?
    /// `--outbox`: journal each request in this directory before sending it; kept there until
    /// the server answers. With `--flush`: send what waits there.
    var outbox: String?
    var flush = false
    /// `--watch-network`: print the network's status, then each change (until -m seconds pass).
    var watchNetwork = false
    /// `--wifi-only`: MKNetworkKit's wifiOnlyMode, the queue's width 0 on cellular networks.
    var wifiOnly = false
    /// `-D`: where every response head goes ("-" is stdout).
    var dumpHeader: String?
    /// `-F`/`--form` and `--form-string` parts, in order (`literal` for --form-string).
    var forms: [(text: String, literal: Bool)] = []
    /// `-T`: a file to PUT, or "-" for stdin (sent chunked).
    var uploadFile: String?
    /// `-C -`: continue the output file where it ends.
    var continueAt = false
    /// `--limit-rate`: bytes per second, both directions.
    var limitRate: UInt64?
    /// -b/--cookie values (a file, or "name=value; ..." to send), -c/--cookie-jar, -j.
    var cookies: [String] = []
    var cookieJarPath: String?
    var junkSessionCookies = false
    var bearer: String?
    /// -n/--netrc and --netrc-optional ($HOME/.netrc), --netrc-file: where credentials for a
    /// URL without -u come from; nil: none.
    var netrc: NetrcChoice?
    enum NetrcChoice: Equatable { case home, file(String) }
    /// --hsts FILE: the HSTS cache in curl's format ("" for memory only).
    var hsts: String?
    /// --digest: -u's credentials answer Digest challenges instead of going as Basic (--basic
    /// turns it off again; the last wins, as in curl).
    var digest = false
    /// curl's --retry family.
    var retry = 0
    var retryDelay: Double?
    var retryMaxTime: Double?
    var retryAllErrors = false
    var retryConnRefused = false
    /// `--create-dirs`: make the output file's missing directories.
    var createDirs = false
    /// -x/--proxy ("" turns the environment's proxy off), --noproxy, -U/--proxy-user.
    var proxy: String?
    /// What a proxy string without a scheme speaks: http for -x, SOCKS5 for --socks5 and
    /// --socks5-hostname (the last of them given wins, as in curl).
    var proxyKind = Proxy.Kind.http
    var noProxy: String?
    var proxyUser: String?
    /// --proxy-cacert, --proxy-capath, --proxy-insecure, --proxy-cert, --proxy-key: how an HTTPS
    /// proxy's own certificate is checked, and the client certificate shown to it.
    var proxyCAFile: String?
    var proxyCAPath: String?
    var proxyInsecure = false
    var proxyCertificate: String?
    var proxyKey: String?
    /// -G/--get: the -d data goes into the URL's query of a GET.
    var get = false
    /// -e/--referer.
    var referer: String?
    /// -z/--time-cond: `[+|-|=]DATE` or a file (see `TimeCondition(curlArgument:)`).
    var timeCondition: String?
    /// -r/--range: `Range: bytes=<value>`.
    var range: String?
    /// --fail-with-body: exit 22 on an error status, with the body written all the same.
    var failWithBody = false
    /// --output-dir: where relative -o/-O files go.
    var outputDirectory: String?
    /// -R/--remote-time: the file's time is the response's Last-Modified.
    var remoteTime = false
    /// -J/--remote-header-name: -O takes the name from Content-Disposition; --clobber lets it
    /// overwrite an existing file.
    var remoteHeaderName = false
    var clobber = false
    /// --trace-ascii: curl's trace of every exchange to this file ("-" is stdout).
    var traceFile: String?
    /// -4/-6, --resolve and --connect-to: where connections go (see `ConnectRoute`).
    var route: ConnectRoute?
}

/// A `-d` / `--data-binary` / `--json` value: literal text or `@file` (`@-` is stdin).
struct DataArgument {
    enum Kind { case urlencodedAscii, binary, raw, urlencode }
    var text: String
    var kind: Kind
}

/// A command-line mistake; curl exits 2 for these.
struct UsageError: Error {
    var message: String
    /// The exit code (2, or curl's 4 for a feature this build does not have).
    var code: Int32 = ExitCode.usage
}
