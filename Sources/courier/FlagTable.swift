/// Every flag the CLI takes, with what `--help` and the man page say of it, grouped into curl's
/// categories (`curl --help category`). The parser (`ArgumentParser`) and this table are held to
/// each other by a test: a flag missing here, or listed but not parsed, fails it.
struct FlagDoc {
    enum Category: String, CaseIterable {
        case important, auth, connection, dns, file, http, misc, output, post, proxy, tls, upload, verbose, curl, courier

        /// What `--help category` says of it.
        var summary: String {
            switch self {
            case .important: return "The options people use most"
            case .auth: return "Authentication (Basic, Bearer)"
            case .connection: return "Connections, timeouts and retries"
            case .dns: return "Name resolution and addresses"
            case .file: return "Local files: output names, times, directories"
            case .http: return "HTTP requests and responses"
            case .misc: return "Everything else"
            case .output: return "Where bodies and heads go"
            case .post: return "Request bodies (POST data, forms)"
            case .proxy: return "HTTP proxies"
            case .tls: return "HTTPS: certificates, versions, pins"
            case .upload: return "Uploads"
            case .verbose: return "What a transfer shows: progress, -v, -w"
            case .curl: return "The tool itself: help, version, config files"
            case .courier: return "Courier's own: cache, outbox, network"
            }
        }
    }

    var short: Character?
    var long: String
    var argument: String?
    var summary: String
    var categories: [Category]

    init(_ short: Character?, _ long: String, _ argument: String? = nil, _ summary: String, _ categories: Category...) {
        self.short = short
        self.long = long
        self.argument = argument
        self.summary = summary
        self.categories = categories
    }

    /// ` -o, --output <file>` (the left column of --help).
    var usage: String {
        let name = (short.map { " -\($0), " } ?? "     ") + long
        return argument.map { name + " <\($0)>" } ?? name
    }
}

enum FlagTable {
    static let all: [FlagDoc] = [
        // output
        FlagDoc("o", "--output", "file", "Write the body to <file> instead of stdout; #N is the N-th glob's value", .important, .output),
        FlagDoc("O", "--remote-name", nil, "Write the body to a file named like the URL's last path segment", .important, .output),
        FlagDoc(nil, "--remote-name-all", nil, "-O for every URL", .output),
        FlagDoc("J", "--remote-header-name", nil, "With -O: the name Content-Disposition gives (no directories)", .output),
        FlagDoc(nil, "--clobber", nil, "With -J: overwrite an existing file", .output),
        FlagDoc(nil, "--no-clobber", nil, "With -J: keep an existing file (the default)", .output),
        FlagDoc(nil, "--output-dir", "dir", "Put -o and -O files in <dir>", .output),
        FlagDoc(nil, "--create-dirs", nil, "Create the output file's missing directories", .output),
        FlagDoc("i", "--include", nil, "Include response heads in the output (every head of a redirect chain)", .important, .http, .output),
        FlagDoc("D", "--dump-header", "file", "Write every response head to <file> ('-' is stdout)", .http, .output),
        FlagDoc("C", "--continue-at", "-", "Resume the download where the output file ends", .output, .connection),
        FlagDoc("R", "--remote-time", nil, "Give the file the response's Last-Modified time", .file, .output),
        FlagDoc("f", "--fail", nil, "Fail with exit code 22 on HTTP errors, no body output", .important, .http),
        FlagDoc(nil, "--fail-with-body", nil, "Fail with exit code 22 on HTTP errors, keeping the body", .http, .output),
        FlagDoc(nil, "--max-filesize", "bytes", "Maximum body size (k, M, G suffixes)", .connection),
        FlagDoc(nil, "--compressed", nil, "Request and decode gzip, deflate, br and zstd", .http),
        // http
        FlagDoc("X", "--request", "method", "The request method", .important, .http),
        FlagDoc("H", "--header", "header", "Add a header ('Name:' removes one Courier sends, 'Name;' sends it empty)", .important, .http),
        FlagDoc("I", "--head", nil, "Show response headers only (HEAD request)", .http),
        FlagDoc("L", "--location", nil, "Follow redirects", .important, .http),
        FlagDoc(nil, "--max-redirs", "num", "Maximum number of redirects (default 50, -1 for no limit)", .http),
        FlagDoc("A", "--user-agent", "name", "User-Agent to send ('' sends none)", .important, .http),
        FlagDoc("e", "--referer", "URL", "Referer to send (URL;auto or ;auto: each redirect hop sends the URL it came from)", .http),
        FlagDoc("r", "--range", "range", "Ask for part of the body (Range: bytes=<range>)", .http),
        FlagDoc("b", "--cookie", "data|file", "Send \"name=value; ...\" as is, or read cookies from a file (Netscape format)", .http),
        FlagDoc("c", "--cookie-jar", "file", "Write every cookie to <file> after the transfers ('-' is stdout)", .http),
        FlagDoc("j", "--junk-session-cookies", nil, "Drop the session cookies read with -b", .http),
        FlagDoc(nil, "--http1.1", nil, "Use HTTP/1.1 only (ALPN offers http/1.1)", .http),
        FlagDoc(nil, "--http1.0", nil, "Send HTTP/1.0 requests (no keep-alive, no chunked uploads)", .http),
        FlagDoc(nil, "--http2", nil, "Use HTTP/2 where an https server agrees by ALPN (the default)", .http),
        FlagDoc(nil, "--http2-prior-knowledge", nil, "Use HTTP/2 only: h2c without Upgrade on http://, ALPN h2 on https", .http),
        FlagDoc(nil, "--http3", nil, "Refused with exit 4: Courier speaks HTTP/1.1 and HTTP/2", .http),
        FlagDoc(nil, "--http3-only", nil, "Refused with exit 4, as --http3", .http),
        // post and upload
        FlagDoc("d", "--data", "data", "HTTP POST data, pieces joined with & (@file reads a file)", .important, .post),
        FlagDoc(nil, "--data-ascii", "data", "The same as -d", .post),
        FlagDoc(nil, "--data-binary", "data", "HTTP POST data, sent as is", .post),
        FlagDoc(nil, "--data-raw", "data", "HTTP POST data, '@' has no special meaning", .post),
        FlagDoc(nil, "--data-urlencode", "data", "HTTP POST data, percent-encoded (content, =content, name=content, @file, name@file)", .post),
        FlagDoc(nil, "--json", "data", "POST JSON (sets Content-Type and Accept)", .post),
        FlagDoc("G", "--get", nil, "Send the -d data in the URL's query of a GET", .http, .post),
        FlagDoc("F", "--form", "name=content", "Multipart form part: name=value, name=@file, name=<file; ;type= and ;filename=", .post, .upload),
        FlagDoc(nil, "--form-string", "name=value", "Multipart form field, taken literally", .post, .upload),
        FlagDoc("T", "--upload-file", "file", "PUT a file ('-' reads stdin, sent chunked)", .upload),
        // connection
        FlagDoc("m", "--max-time", "seconds", "Maximum time for each transfer", .connection),
        FlagDoc(nil, "--connect-timeout", "seconds", "Maximum time for name resolution and connect", .connection),
        FlagDoc(nil, "--limit-rate", "speed", "Most bytes per second, each direction (k, M, G suffixes)", .connection),
        FlagDoc(nil, "--retry", "num", "Retry transient failures (timeouts, resets, 408, 429, 500, 502, 503, 504); Retry-After is honoured", .connection),
        FlagDoc(nil, "--retry-delay", "seconds", "Wait this long before each retry (default: 1 s, doubling)", .connection),
        FlagDoc(nil, "--retry-max-time", "seconds", "Start no retry later than this after the first attempt", .connection),
        FlagDoc(nil, "--retry-all-errors", nil, "Retry on any error", .connection),
        FlagDoc(nil, "--retry-connrefused", nil, "Retry when the connection is refused too", .connection),
        FlagDoc("Z", "--parallel", nil, "Run the URLs in parallel through the shared queue", .connection),
        FlagDoc(nil, "--parallel-max", "num", "Parallel width (default 50)", .connection),
        FlagDoc(nil, "--parallel-max-host", "num", "With -Z, most connections to one host (default: the width)", .connection),
        FlagDoc(nil, "--rate", "N/U", "Start at most N transfers per U (s, m, h, d; default per hour); not with -Z", .connection),
        FlagDoc(nil, "--expect100-timeout", "seconds", "How long a body waits for 100 Continue (default 1)", .connection, .http),
        FlagDoc(nil, "--happy-eyeballs-timeout-ms", "ms", "Delay before the next address is tried beside the first (default 250)", .connection),
        // dns
        FlagDoc("4", "--ipv4", nil, "Connect over IPv4 only", .dns),
        FlagDoc("6", "--ipv6", nil, "Connect over IPv6 only", .dns),
        FlagDoc(nil, "--resolve", "host:port:addr[,addr]", "Use these addresses for host:port instead of a name lookup", .dns, .connection),
        FlagDoc(nil, "--connect-to", "HOST1:PORT1:HOST2:PORT2", "Connect to HOST2:PORT2 for requests to HOST1:PORT1 (empty parts match any)", .dns, .connection),
        FlagDoc(nil, "--unix-socket", "path", "Connect through this Unix domain socket instead of TCP (no proxy)", .connection),
        FlagDoc(nil, "--abstract-unix-socket", "path", "Connect through this abstract Unix domain socket", .connection),
        FlagDoc("z", "--time-cond", "time", "Only if modified since TIME, or since FILE was (-TIME: not since)", .http),
        FlagDoc(nil, "--interface", "name", "Connect from this interface or address (if!NAME, host!ADDRESS)", .connection),
        FlagDoc(nil, "--local-port", "num[-num]", "Connect from a local port in this range", .connection),
        // auth
        FlagDoc("u", "--user", "user:password", "Basic authentication", .important, .auth),
        FlagDoc(nil, "--oauth2-bearer", "token", "Bearer authentication (RFC 6750)", .auth),
        FlagDoc("n", "--netrc", nil, "Credentials from ~/.netrc for URLs without -u", .auth),
        FlagDoc(nil, "--netrc-optional", nil, "As --netrc (a missing file is no error either way)", .auth),
        FlagDoc(nil, "--netrc-file", "file", "Credentials from this .netrc file", .auth),
        FlagDoc(nil, "--digest", nil, "-u's credentials answer Digest challenges (RFC 7616)", .auth),
        FlagDoc(nil, "--basic", nil, "-u's credentials go as Basic (the default; undoes --digest)", .auth),
        // proxy
        FlagDoc("x", "--proxy", "[protocol://]host[:port]", "Use this proxy: http, https, socks5, socks5h (\"\" for none; default: the environment's)", .proxy),
        FlagDoc(nil, "--socks5", "host[:port]", "Use this SOCKS5 proxy, resolving names here", .proxy),
        FlagDoc(nil, "--socks5-hostname", "host[:port]", "Use this SOCKS5 proxy, which resolves names", .proxy),
        FlagDoc(nil, "--noproxy", "list", "Hosts (names, addresses, CIDR; * for all) reached directly", .proxy),
        FlagDoc("U", "--proxy-user", "user:password", "Proxy credentials (Basic, or the SOCKS5 login)", .proxy, .auth),
        FlagDoc(nil, "--proxy-cacert", "file", "Trust the CAs in this PEM file for an HTTPS proxy", .proxy, .tls),
        FlagDoc(nil, "--proxy-capath", "dir", "Trust the CAs in this hashed directory for an HTTPS proxy", .proxy, .tls),
        FlagDoc(nil, "--proxy-insecure", nil, "Accept any certificate from an HTTPS proxy", .proxy, .tls),
        FlagDoc(nil, "--proxy-cert", "file", "Client certificate (PEM) for an HTTPS proxy", .proxy, .tls),
        FlagDoc(nil, "--proxy-key", "file", "Private key (PEM) for --proxy-cert", .proxy, .tls),
        FlagDoc("p", "--proxytunnel", nil, "http URLs through the proxy's CONNECT tunnel too", .proxy),
        FlagDoc(nil, "--no-proxytunnel", nil, "http URLs forwarded by the proxy (the default)", .proxy),
        // tls
        FlagDoc(nil, "--hsts", "file", "HSTS cache (curl's format; \"\" in memory): http:// to its hosts goes https://", .tls),
        FlagDoc(nil, "--cacert", "file", "Trust the CAs in this PEM file (besides the system's)", .tls),
        FlagDoc(nil, "--capath", "dir", "Trust the CAs in this hashed directory", .tls),
        FlagDoc("k", "--insecure", nil, "Accept any server certificate (pins still apply)", .tls),
        FlagDoc(nil, "--no-sessionid", nil, "Full TLS handshakes: no session resumption", .tls),
        FlagDoc(nil, "--sessionid", nil, "Resume TLS sessions (the default)", .tls),
        FlagDoc(nil, "--ciphers", "list", "TLS 1.2 cipher list (OpenSSL's syntax)", .tls),
        FlagDoc(nil, "--tls13-ciphers", "list", "TLS 1.3 cipher suites (OpenSSL's syntax)", .tls),
        FlagDoc(nil, "--curves", "list", "Key exchange groups (\"X25519:P-256\")", .tls),
        FlagDoc(nil, "--no-alpn", nil, "Offer no ALPN in the TLS handshake", .tls),
        FlagDoc(nil, "--alpn", nil, "Offer ALPN (the default)", .tls),
        FlagDoc(nil, "--pinnedpubkey", "pins", "sha256//BASE64[;sha256//...] or a public key file", .tls),
        FlagDoc("E", "--cert", "file", "Client certificate (PEM)", .tls, .auth),
        FlagDoc(nil, "--key", "file", "Client private key (PEM)", .tls, .auth),
        FlagDoc(nil, "--pass", "phrase", "Passphrase of the client key", .tls, .auth),
        FlagDoc(nil, "--tlsv1", nil, "TLS 1.0 at least (as far as OpenSSL's policy allows)", .tls),
        FlagDoc(nil, "--tlsv1.0", nil, "TLS 1.0 at least (as far as OpenSSL's policy allows)", .tls),
        FlagDoc(nil, "--tlsv1.1", nil, "TLS 1.1 at least (as far as OpenSSL's policy allows)", .tls),
        FlagDoc(nil, "--tlsv1.2", nil, "TLS 1.2 at least", .tls),
        FlagDoc(nil, "--tlsv1.3", nil, "TLS 1.3 at least", .tls),
        FlagDoc(nil, "--tls-max", "1.2|1.3", "Highest TLS version to use", .tls),
        // verbose
        FlagDoc("s", "--silent", nil, "Silent mode (no progress, no error messages)", .important, .verbose),
        FlagDoc("S", "--show-error", nil, "Show errors even when silent", .verbose),
        FlagDoc("v", "--verbose", nil, "Show request and response heads on stderr", .important, .verbose),
        FlagDoc("w", "--write-out", "format", "Print after each transfer: %{http_code}, %{json}, ... (@file reads the format)", .important, .verbose),
        FlagDoc(nil, "--trace-ascii", "file", "Write curl's trace of each exchange (info, heads, data sizes) to <file>", .verbose),
        FlagDoc("#", "--progress-bar", nil, "A progress bar instead of the meter", .verbose),
        FlagDoc(nil, "--no-progress-meter", nil, "No progress meter, errors still shown", .verbose),
        // misc
        FlagDoc("g", "--globoff", nil, "Do not expand [1-9] and {a,b} in URLs", .misc),
        FlagDoc(nil, "--url", "url", "A URL to fetch (as if given without a flag)", .misc),
        // curl
        FlagDoc("K", "--config", "file", "Read options from a file in curl's config syntax ('-' is stdin)", .curl),
        FlagDoc(":", "--next", nil, "Start another group of URLs with options of its own", .curl),
        FlagDoc("h", "--help", "category", "This help; a category (or 'all', or 'category' for the list)", .important, .curl),
        FlagDoc("V", "--version", nil, "Show the version", .important, .curl),
        FlagDoc("M", "--manual", nil, "Every option with its description (the man page's text)", .curl),
        FlagDoc(nil, "--man-page", nil, "The manual as a man page (troff), what make install writes as courier.1", .curl),
        // courier's own
        FlagDoc(nil, "--cache-dir", "dir", "Keep a private HTTP cache in <dir> across invocations", .courier, .http),
        FlagDoc(nil, "--outbox", "dir", "Journal each request in <dir> first; one its host did not answer stays (exit 75)", .courier),
        FlagDoc(nil, "--flush", nil, "With --outbox: send every waiting request, in order; 0 only when empty", .courier),
        FlagDoc(nil, "--watch-network", nil, "Print the network, the queue's width and each change (with URLs: each host's reachability)", .courier),
        FlagDoc(nil, "--wifi-only", nil, "Hold every transfer while on a cellular network (the queue's width 0 there)", .courier),
    ]

    /// `--help [category]`: curl's shape — the important flags, or one category, or all of them.
    static func help(_ category: String?) -> String? {
        let header = "Usage: courier [options...] <url>...\n"
        switch category {
        case nil, "important"?:
            return header + listing(all.filter { $0.categories.contains(.important) }) + """

            This is not the full help; the options are grouped in categories.
            Use "--help category" for the list, "--help all" for every option.

            """
        case "all"?:
            return header + listing(all)
        case "category"?:
            return FlagDoc.Category.allCases.map { pad($0.rawValue, 12) + $0.summary + "\n" }.joined()
        case let name?:
            guard let chosen = FlagDoc.Category(rawValue: name) else { return nil }
            return chosen.summary + ":\n" + listing(all.filter { $0.categories.contains(chosen) })
        }
    }

    static func listing(_ flags: [FlagDoc]) -> String {
        flags.sorted { $0.long < $1.long }.map { flag in
            let left = flag.usage
            return left.count < 31 ? pad(left, 31) + flag.summary + "\n" : left + "\n" + String(repeating: " ", count: 31) + flag.summary + "\n"
        }.joined()
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }

    /// courier.1: the same table as a man page (`make install` writes it with `--man-page`).
    static func manPage(version: String) -> String {
        func roff(_ text: String) -> String {
            text.replacingAll("\\", with: "\\e").replacingAll("-", with: "\\-")
        }
        var page = """
        .TH COURIER 1 "" "courier \(version)" "User Commands"
        .SH NAME
        courier \\- transfer URLs with Courier, curl's flags and exit codes
        .SH SYNOPSIS
        .B courier
        [options...] <url>...
        .SH DESCRIPTION
        courier sends each URL through Courier's shared queue and keep-alive pool. It takes curl's
        flags, with curl's meaning and exit codes, for the subset it implements (below), plus a few of
        its own (an HTTP cache, an outbox of requests kept while their host cannot be reached, a
        network monitor). URLs may hold curl's globs: [1-10], [a-z], [01-10:2] and {one,two}.

        """
        for category in FlagDoc.Category.allCases where category != .important {
            let flags = all.filter { ($0.categories.first { $0 != .important } ?? .misc) == category }
            guard !flags.isEmpty else { continue }
            page += ".SH \(category.rawValue.uppercased()) OPTIONS\n"
            for flag in flags.sorted(by: { $0.long < $1.long }) {
                page += ".TP\n.B \(roff(flag.usage.trimmingLeadingSpaces))\n\(roff(flag.summary))\n"
            }
        }
        page += """
        .SH EXIT STATUS
        curl's: 0 success, 2 usage, 3 bad URL, 4 a feature not built in (HTTP/2), 6 unresolvable host,
        7 no connection, 18 partial file, 22 HTTP error with \\-f, 23 write error, 26 read error,
        28 timeout, 35 TLS failure, 47 too many redirects, 52 empty reply, 56 receive failure,
        59 unusable cipher list, 60 untrusted certificate, 61 bad content encoding, 63 file too large,
        75 kept in the outbox.
        .SH SEE ALSO
        .BR curl (1)

        """
        return page
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }

    var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}
