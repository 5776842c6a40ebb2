import Courier
import CourierCore
import Glibc

/// What every URL of one invocation shares, worked out once: the parsed options and the request
/// body, the files and stores the transfers write to, and the request parts that do not depend on
/// the URL (curl's default headers, the -H, -b, -e and -r fields, the transfer options with their
/// TLS and proxy settings). A URL's job adds only its own target, output and outbox key — a CLI
/// run of thousands of URLs pays for the flags once, not per URL.
final class CLIContext: @unchecked Sendable {
    let options: CommandLineOptions
    let body: (body: RequestBody, contentType: String?)?
    let showProgress: Bool
    let cache: ResponseCache?
    let headerDump: HeaderDump?
    let cookies: CookieJar?
    /// --outbox: where requests are journaled before they are sent, and wait until their server
    /// answers (the same `Outbox` a library engine freezes its operations in).
    let outbox: Outbox?
    var journal: Journal? { outbox?.journal }
    /// --trace-ascii's file.
    let trace: HeaderDump?
    /// What `-T -` read, for the trace's `=> Send data` blocks.
    let uploadCopy: UploadCopy?

    /// The fields every request sends: curl's own (User-Agent, Accept, the body's type) as the
    /// -b Cookie, -H, -e Referer and -r Range fields replace them, without what -H 'Name:' removes.
    let requestHeaders: HTTPHeaders
    let transferOptions: TransferOptions
    /// -n, --netrc-file: the file's entries (nil: none asked for, or no such file).
    private(set) var netrc: Netrc?
    /// --hsts: the store every request consults and feeds (saved when the run ends).
    private(set) var hsts: HSTSStore?
    /// The last origin parsed, which the next URL with the same one is built on.
    let origins = OriginReuse()
    /// Bodies for stdout through its buffer: one sink for every job (it holds nothing of its own).
    let stdoutStream = StreamSink { bytes in
        Terminal.write(bytes: bytes)
        return .proceed
    }
    /// `-Z`'s meter for all the transfers together (nil without -Z, or with -s).
    let parallelMeter: ParallelMeter?
    /// Why no request can be made (TLS files or proxy settings that cannot be used), or nil.
    let setupError: CourierError?
    /// Whether heads are rendered as text (-i, -I, -D, -v, --trace-ascii, -w's header sizes).
    let needsHeadText: Bool
    /// Whether -w prints this end's address (local_ip, local_port, json): asked of the socket.
    let writeOutNeedsLocalAddress: Bool
    /// Whether -w prints the server's certificates (certs, num_certs, json): read off the TLS
    /// connection while it serves the transfer.
    let writeOutNeedsCertificates: Bool

    init(options: CommandLineOptions, body: (body: RequestBody, contentType: String?)?, showProgress: Bool,
         cache: ResponseCache?, headerDump: HeaderDump?, cookies: CookieJar? = nil, cookieHeader: String? = nil,
         outbox: Outbox? = nil, trace: HeaderDump? = nil, uploadCopy: UploadCopy? = nil, parallelMeter: ParallelMeter? = nil) {
        self.parallelMeter = parallelMeter
        self.options = options
        self.body = body
        self.showProgress = showProgress
        self.cache = cache
        self.headerDump = headerDump
        self.cookies = cookies
        self.outbox = outbox
        self.trace = trace
        self.uploadCopy = uploadCopy
        let format = options.writeOut ?? ""
        needsHeadText = options.include || options.head || headerDump != nil || options.verbose || trace != nil
            || format.contains("size_header") || format.contains("%{json}")
        writeOutNeedsLocalAddress = format.contains("%{local_") || format.contains("%{json}")
        writeOutNeedsCertificates = format.contains("%{certs}") || format.contains("%{num_certs}") || format.contains("%{json}")

        // -A '' sends no User-Agent at all (curl's documented way to remove it).
        var defaults = HTTPHeaders()
        if options.userAgent != "" { defaults.add(name: "User-Agent", value: options.userAgent ?? "courier/\(CourierVersion.string)") }
        defaults.add(name: "Accept", value: "*/*")
        if !options.json.isEmpty {
            defaults.replaceOrAdd(name: "Accept", value: "application/json")
            defaults.add(name: "Content-Type", value: "application/json")
        } else if let contentType = body?.contentType {
            defaults.add(name: "Content-Type", value: contentType)
        }

        var headers = HTTPHeaders()
        var suppressed: [String] = []
        var suppressAcceptEncoding = false
        // -b "name=value": curl sends it as the Cookie field (a -H Cookie given too wins).
        if let cookieHeader, !options.headers.contains(where: { $0.name.lowercased() == "cookie" }) {
            headers.add(name: "Cookie", value: cookieHeader)
        }
        for header in options.headers {
            if let value = header.value {
                headers.add(name: header.name, value: value)
            } else {
                suppressed.append(header.name)
                if header.name.lowercased() == "accept-encoding" { suppressAcceptEncoding = true }
            }
        }
        // -e and -r: a -H of the same name wins.
        if let referer = options.referer, !headers.contains("Referer") {
            let url = referer.hasSuffix(";auto") ? String(referer.dropLast(5)) : referer
            if !url.isEmpty { headers.add(name: "Referer", value: url) }
        }
        if let range = options.range, !headers.contains("Range") { headers.add(name: "Range", value: "bytes=" + range) }
        // -z: a date, or a file's modification time; neither: curl's warning, and no condition.
        if let text = options.timeCondition {
            if let condition = TimeCondition(curlArgument: text, modificationTime: Self.modificationTime) {
                if !headers.contains(condition.field.name) { headers.add(name: condition.field.name, value: condition.field.value) }
            } else if !options.silent || options.showError {
                Terminal.error("Warning: Illegal date format for -z, --time-cond (and not a file name).\n"
                               + "Warning: Disabling time condition. See curl_getdate(3) for valid date syntax.\n")
            }
        }
        // The -H, -b, -e and -r fields merged into curl's defaults, validated and summarised once:
        // every URL's request shares them as they are (only URL credentials add a field).
        var merged = defaults
        RequestDraft.merge(own: headers, suppressed: suppressed, into: &merged)
        merged.prepareForSending()
        requestHeaders = merged

        var problem: CourierError?
        var tls = TLSConfiguration()
        switch TLSOptions.configuration(options) {
        case .success(let configuration): tls = configuration
        case .failure(let error): problem = error
        }
        var proxy = ProxySettings.direct
        switch Self.proxySettings(options) {
        case .success(let settings): proxy = settings
        case .failure(let error): problem = problem ?? error
        }
        if let choice = options.netrc, options.user == nil {
            do throws(CourierError) {
                if case .file(let path) = choice { netrc = try Netrc.load(path) } else { netrc = try Netrc.load() }
            } catch {
                problem = problem ?? error
            }
        }
        if let path = options.hsts {
            do throws(CourierError) {
                hsts = path.isEmpty ? HSTSStore() : try HSTSStore(file: path)
            } catch {
                problem = problem ?? error
            }
        }
        setupError = problem
        var transferOptions = Self.transferOptions(options, tls: tls, proxy: proxy, cache: cache, cookies: cookies)
        transferOptions.hsts = hsts
        transferOptions.decompress = options.compressed && !suppressAcceptEncoding
        // -v and --trace-ascii show what connecting did, the TLS handshake step by step.
        transferOptions.tracesConnections = options.verbose || trace != nil
        transferOptions.sendsHTTP10 = options.http10
        transferOptions.httpVersion = options.httpVersion
        // curl's `-H 'Expect:'` sends no Expect, and waits for no 100.
        if options.headers.contains(where: { $0.name.lowercased() == "expect" && $0.value == nil }) { transferOptions.expectContinue = .never }
        self.transferOptions = transferOptions
    }

    /// The same invocation with other options (--flush resends each entry with its own method
    /// and headers), sharing the files and stores.
    func with(options: CommandLineOptions, body: (body: RequestBody, contentType: String?)?) -> CLIContext {
        CLIContext(options: options, body: body, showProgress: false, cache: cache, headerDump: nil, cookies: cookies,
                   outbox: outbox, trace: nil)
    }

    /// curl's semantics for the deadlines and redirects the flags set.
    private static func transferOptions(_ options: CommandLineOptions, tls: TLSConfiguration, proxy: ProxySettings,
                                        cache: ResponseCache?, cookies: CookieJar?) -> TransferOptions {
        var transferOptions = TransferOptions()
        transferOptions.redirects = RedirectPolicy(follow: options.location,
                                                   maxRedirects: options.maxRedirects < 0 ? Int.max : options.maxRedirects,
                                                   allowsHTTPSDowngrade: true,
                                                   autoReferer: options.referer?.hasSuffix(";auto") ?? false)
        // curl has no first-byte or idle deadline of its own; only what the user asked for applies.
        transferOptions.timeouts = Timeouts(queue: nil,
                                            connect: options.connectTimeout.map { .seconds($0) } ?? .seconds(300),
                                            firstByte: nil, idle: nil,
                                            total: options.maxTime.map { .seconds($0) })
        if let maxTime = options.maxTime {
            transferOptions.timeouts.queue = .seconds(maxTime)
            if options.connectTimeout == nil { transferOptions.timeouts.connect = .seconds(maxTime) }
        }
        transferOptions.limits.maxBodyBytes = options.maxFileSize
        if let rate = options.limitRate {
            transferOptions.receiveRateLimit = rate
            transferOptions.sendRateLimit = rate
        }
        transferOptions.retryStaleConnection = true
        if let wait = options.expect100Timeout { transferOptions.continueTimeout = .seconds(wait) }
        // -Z: transfers started together each use the connection opened for them, as curl's do.
        transferOptions.waitsForOwnConnection = options.parallel
        if let delay = options.happyEyeballsMillis { transferOptions.happyEyeballsDelay = .milliseconds(delay) }
        if options.retry > 0 { transferOptions.retry = retryPolicy(options) }
        transferOptions.tls = tls
        transferOptions.cache = cache
        transferOptions.cookies = cookies
        transferOptions.proxy = proxy
        transferOptions.route = options.route
        if options.digest, let user = options.user {
            let (name, password) = Self.userAndPassword(user)
            transferOptions.digest = DigestLogin(user: name, password: password)
        }
        return transferOptions
    }

    /// -u's and -U's `user:password` (curl's split: at the first colon; none, no password).
    private static func userAndPassword(_ text: String) -> (user: String, password: String) {
        guard let colon = text.firstIndex(of: ":") else { return (text, "") }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// curl's proxy rules: -x for every scheme ("" for none, whatever the environment says),
    /// else the environment; --noproxy replaces no_proxy; -U replaces the credentials. A proxy
    /// string that cannot be used is curl's 5 ("unsupported proxy syntax").
    static func proxySettings(_ options: CommandLineOptions) -> Result<ProxySettings, CourierError> {
        var settings: ProxySettings
        do throws(CourierError) {
            if let text = options.proxy {
                settings = text.isEmpty ? .direct : .all(try Proxy(parsing: text, kind: options.proxyKind))
            } else {
                settings = ProxySettings.environment()
                if let problem = settings.problem { throw problem }
            }
        } catch {
            return .failure(error.code == .proxyUnsupported ? error : CourierError(.proxyUnsupported, error.detail))
        }
        if let list = options.noProxy { settings.noProxy = NoProxy(list) }
        var proxyTLS = TLSConfiguration()
        proxyTLS.caFile = options.proxyCAFile
        proxyTLS.caDirectory = options.proxyCAPath
        if options.proxyInsecure { proxyTLS.verification = .insecureAcceptAnyCertificate }
        proxyTLS.clientCertificateFile = options.proxyCertificate
        proxyTLS.clientKeyFile = options.proxyKey
        settings.proxyTLS = proxyTLS
        settings.tunnelsHTTP = options.proxyTunnel
        if let credentials = options.proxyUser {
            let (user, password) = userAndPassword(credentials)
            settings.http?.user = user
            settings.http?.password = password
            settings.https?.user = user
            settings.https?.password = password
        }
        return .success(settings)
    }

    /// curl's --retry: any method (curl does not look at it), 408/429/500/502/503/504 and timeouts;
    /// with --retry-delay a fixed wait, else 1 s doubling up to 10 minutes; refused connections
    /// only with --retry-connrefused (`transferShouldRetry`).
    static func retryPolicy(_ options: CommandLineOptions) -> RetryPolicy {
        RetryPolicy(count: options.retry,
                    intervals: [options.retryDelay.map { .seconds($0) } ?? .seconds(1)],
                    exponentialBackoff: options.retryDelay == nil, maxInterval: .seconds(600),
                    retryAfterLimit: .seconds(600),
                    maxTime: options.retryMaxTime.flatMap { $0 > 0 ? .seconds($0) : nil },
                    retriesNonIdempotent: true, retriesAllErrors: options.retryAllErrors,
                    statuses: RetryPolicy.defaultStatuses.union([500]), usesBudget: false)
    }

    /// A file's modification time in epoch seconds (-z FILE), nil when there is none.
    static func modificationTime(_ path: String) -> Int64? {
        var info = stat()
        guard !path.isEmpty, stat(path, &info) == 0 else { return nil }
        return Int64(info.st_mtim.tv_sec)
    }
}
