import Courier
import CourierCore
import Dispatch
import Glibc

/// One URL of the command line: builds the transfer, writes its output, reports its outcome.
///
/// Its request goes the way a Swift operation's and a C request's do: a `RequestDraft` makes each
/// attempt (journaled first in the `--outbox`, as a frozen operation is), a `RequestSession`
/// decides its end, and the transfer enters the shared queue through the same door. What is
/// the CLI's own is curl's: outputs, exit codes, -w, -v.
final class CLIJob: TransferDelegate, @unchecked Sendable {
    /// Where the body goes: stdout, a file (-o, its `#N` already filled in), or a file named after
    /// the URL (-O).
    enum Output: Equatable {
        case stdout
        case file(String)
        case remoteName
    }

    let index: Int
    let rawURL: String
    let output: Output
    /// What every URL of the invocation shares (options, files, the URL-independent request parts).
    let context: CLIContext
    /// Called on the loop thread when the transfer ended (or at once, when it could not start).
    @exclusivity(unchecked) var onDone: (() -> Void)?
    @exclusivity(unchecked) var isDone = false
    // The state below is the loop thread's while the transfer runs, then the reporter's: never
    // touched from two threads at once, so not checked for overlapping access at run time.
    @exclusivity(unchecked) var transfer: Transfer?
    @exclusivity(unchecked) var setupError: CourierError?
    @exclusivity(unchecked) var outputPath: String?
    @exclusivity(unchecked) var streamsToStdout = false
    @exclusivity(unchecked) var headerBytes = 0
    @exclusivity(unchecked) var progress: (any ProgressDisplay)?
    @exclusivity(unchecked) var exitCode: Int32 = 0
    /// The -o/-O destination's staged file, committed or discarded when the transfer is reported.
    @exclusivity(unchecked) var outputFile: FileSink?
    @exclusivity(unchecked) var failedHTTPStatus: Int?
    /// The status of the last head received (a redirect's, when redirects ran out).
    @exclusivity(unchecked) var lastStatus = 0
    /// curl's timing variables, hop by hop (redirects add up).
    @exclusivity(unchecked) var timeline = CurlTimeline()
    /// -v: the connection the last exchange used, and whether its response closes it.
    @exclusivity(unchecked) var servingConnection: UInt64?
    /// The local end of the connection the last head came on (for -w).
    @exclusivity(unchecked) var localAddress: SocketAddress?
    /// The last TLS connection's certificates, for -w (curl reports the last connection's).
    @exclusivity(unchecked) var certificates: [CertificateInfo] = []
    @exclusivity(unchecked) var closesConnection = false
    /// --outbox: this request's entry in the journal.
    @exclusivity(unchecked) var freezing: FreezeState?
    /// Where the request stands; a CLI run cannot wait for the network, so an unanswered
    /// journaled request stays in the outbox for `--flush`.
    @exclusivity(unchecked) var session = RequestSession(waitsInOutbox: false)
    /// --trace-ascii: the body's pieces are dumped as they arrive (so no size line at the end).
    @exclusivity(unchecked) var dumpsBody = false
    /// -Z's meter: what this transfer had moved when it last reported.
    @exclusivity(unchecked) var lastSample: ProgressSample?

    var options: CommandLineOptions { _read { yield context.options } }
    var body: (body: RequestBody, contentType: String?)? { context.body }
    var headerDump: HeaderDump? { context.headerDump }
    var trace: HeaderDump? { context.trace }

    init(index: Int, rawURL: String, output: Output, context: CLIContext, resending entry: OutboxEntry? = nil) {
        if let entry {
            // --flush: the entry's own id, already journaled.
            let resent = FreezeState(id: entry.id, kind: entry.kind)
            resent.sequence = entry.sequence
            resent.journaled = true
            freezing = resent
        }
        self.index = index
        self.rawURL = rawURL
        self.output = output
        self.context = context
        if let problem = context.setupError {
            setupError = problem
            return
        }
        build(showProgress: context.showProgress)
    }

    /// Whether `url` names its scheme: "://" before any "/", "?" or "#" (a byte scan over the
    /// contiguous bytes: the standard library's substring search costs thousands of instructions
    /// per URL, an iterator over the UTF-8 view about ten a byte).
    static func hasScheme(_ url: String) -> Bool {
        var url = url
        return url.withUTF8 { bytes in
            var i = 0
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: ":"):
                    return i + 2 < bytes.count && bytes[i + 1] == UInt8(ascii: "/") && bytes[i + 2] == UInt8(ascii: "/")
                case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"):
                    return false
                default:
                    i += 1
                }
            }
            return false
        }
    }

    func build(showProgress: Bool) {
        // curl assumes http:// for a URL without a scheme.
        var text = Self.hasScheme(rawURL) ? rawURL : "http://" + rawURL
        var method: HTTPMethod = options.head ? .head : (body != nil ? .post : .get)
        if let upload = options.uploadFile {
            method = options.head ? .head : .put
            // curl: an upload to a URL ending in "/" goes to the file's name there.
            if text.hasSuffix("/"), upload != "-", let name = upload.split(separator: "/").last { text += String(name) }
        }
        if let explicit = options.method { method = HTTPMethod(rawValue: explicit) }
        // --digest without -u: the URL's credentials answer the challenge (as curl), and are
        // not sent as Basic beforehand.
        var urlLogin: DigestLogin?
        if options.digest, options.user == nil, let parsed = try? CourierURL(parsing: text), let user = parsed.user {
            urlLogin = DigestLogin(user: user, password: parsed.password ?? "")
            text = parsed.description
        }

        let reused = context.origins.split(text)
        var draft = RequestDraft(method: method, base: reused?.base, target: reused?.target ?? text, parameters: [:], engineID: 0,
                                 options: context.transferOptions, defaultHeaders: context.requestHeaders)
        // Set only when there is one: each allocates the draft's extras, even to store nil.
        if let user = options.user, !options.digest { draft.credentials = user }
        if let urlLogin { draft.options.digest = urlLogin }
        if let netrc = context.netrc, options.user == nil, urlLogin == nil { applyNetrc(netrc, to: &draft, url: text) }
        if let token = options.bearer { draft.authorization = .bearer(token) }
        if let body { draft.body = body.body }
        if let outbox = context.outbox {
            // --outbox: frozen as a library operation is: journaled, durably, before anything is
            // sent, every attempt carrying the entry's key (a -H Idempotency-Key wins).
            if freezing == nil { freezing = FreezeState(kind: "courier") }
            draft.outbox = outbox
            draft.freezing = freezing
        }
        let transfer: Transfer
        switch draft.makeAttempt() {
        case .success(let made): transfer = made
        case .failure(let error):
            setupError = error
            return
        }
        transfer.delegate = self
        transfer.reportsHead = true

        switch output {
        case .stdout: break
        case .file(let path): outputPath = path
        case .remoteName:
            // (The URL is built only here: `transfer.url` makes one.)
            let name = transfer.url.path.split(separator: "/").last.map(String.init) ?? ""
            guard !name.isEmpty else {
                setupError = CourierError(.fileWrite, "remote file name has no length")
                return
            }
            outputPath = name
        }
        if let directory = options.outputDirectory, let path = outputPath, path != "-", !path.hasPrefix("/") {
            outputPath = directory + "/" + path
        }
        if let outputPath, outputPath != "-", options.createDirs, let error = Self.createDirectories(for: outputPath) {
            setupError = error
            return
        }
        if let outputPath, outputPath != "-", options.continueAt {
            // -C -: the output file itself is continued (or started), with Range.
            transfer.sink = .resumable(ResumableDownload(destination: outputPath, inPlace: true))
        } else if let outputPath, outputPath != "-" {
            do {
                // Staged beside the destination, moved into place only if the transfer succeeds:
                // a failed, cut or refused download leaves what was there (curl's
                // --remove-on-error, and more: an old file is not lost either).
                let file = try FileSink(download: outputPath)
                outputFile = file
                transfer.sink = .file(file)
            } catch {
                setupError = error
                return
            }
        } else if options.parallel {
            transfer.sink = .memory
        } else {
            streamsToStdout = true
            // Not a terminal: through the stdout buffer, as curl's stdio does (one write(2) per
            // 64 KiB, not per body); a terminal sees each piece at once.
            transfer.sink = Terminal.buffersStdout ? .stream(context.stdoutStream) : .file(FileSink(descriptor: 1, name: "stdout"))
        }
        // --trace-ascii: each piece of the body is dumped as it arrives, beside its destination.
        if let trace {
            let dump = StreamSink { bytes in trace.write(VerboseLog.traceData(bytes)); return .proceed }
            switch transfer.sink {
            case .file(let file): transfer.sink = .fanOut(FanOutSink([.file(file), .stream(dump)]))
            case .stream(let stream): transfer.sink = .fanOut(FanOutSink([.stream(stream), .stream(dump)]))
            case .memory, .discard, .fanOut, .destination, .resumable: break
            }
            if case .fanOut = transfer.sink { dumpsBody = true }
        }
        // curl's rule: a meter on stderr when the body goes to a file or a pipe (not to a terminal);
        // -# draws a bar instead.
        if showProgress, outputPath != nil || !Terminal.stdoutIsTerminal || options.forceProgressBar {
            progress = options.forceProgressBar ? ProgressBar() : ProgressMeter()
            transfer.reportsProgress = true
            transfer.progressIntervalMillis = 100
        } else if context.parallelMeter != nil {
            transfer.reportsProgress = true
            transfer.progressIntervalMillis = 250
        }
        self.transfer = transfer
    }

    /// -n: the .netrc entry for the URL's host (with the URL's user, that user's) becomes the
    /// request's Basic credentials, or with --digest its Digest login, as curl does; nothing when
    /// none matches.
    private func applyNetrc(_ netrc: Netrc, to draft: inout RequestDraft, url: String) {
        guard let parsed = try? CourierURL(parsing: url),
              let (login, password) = netrc.credentials(forHost: parsed.host, user: parsed.user) else { return }
        if options.digest {
            draft.options.digest = DigestLogin(user: login, password: password)
        } else {
            draft.credentials = "\(login):\(password)"
        }
    }

    /// `mkdir -p` of the directory `path` is in (curl's --create-dirs).
    static func createDirectories(for path: String) -> CourierError? {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        var current = path.hasPrefix("/") ? "" : "."
        if path.hasPrefix("/") { components = components.dropFirst() }
        for component in components where !component.isEmpty {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                return CourierError(.fileWrite, "\(current): \(String(cString: strerror(errno)))")
            }
        }
        return nil
    }

    func start() {
        guard let transfer, setupError == nil, session.send() else {
            ended()
            return
        }
        context.parallelMeter?.added()
        transfer.submit(cancelled: false)
    }

    func ended() {
        isDone = true
        onDone?()
    }

    /// For --flush: whether the server answered (the entry is gone), and what to print.
    var outboxOutcome: (answered: Bool, text: String) {
        if let status = transfer?.head?.status { return (true, String(status)) }
        let error = setupError ?? transfer?.error
        let waiting = error.map(OutboxRules.waitsForNetwork) ?? false
        return (false, "kept (\(exitCode)\(waiting ? ", try again later" : "")): \(error?.message ?? "no answer")")
    }

    // MARK: TransferDelegate (loop thread)

    func transferDidReceiveHead(_ transfer: Transfer) {
        let status = transfer.headStatus
        guard status != 0 else { return }
        lastStatus = status
        // A redirect being followed: its hop's times are counted, and the next hop starts now.
        if transfer.machine.followsRedirect { timeline.hopEnded(transfer.metrics, next: monotonicNanos()) }
        // -w's local_ip/local_port: the socket is asked while the connection still serves us.
        if context.writeOutNeedsLocalAddress { localAddress = transfer.localAddress }
        // (A cache answer has no connection: the last one's chain stays.)
        if context.writeOutNeedsCertificates, let chain = transfer.peerCertificates { certificates = chain }
        // Nothing shows heads as text: no text is made (most runs, and the fast path of many URLs).
        guard context.needsHeadText || options.fail || options.failWithBody || options.remoteHeaderName,
              let head = transfer.head else { return }
        let headText = context.needsHeadText ? headText(head) : ""
        // Every head of the exchange, redirects included, as received (or as the cache served it).
        headerDump?.write(headText)
        // (A 401 being answered with Digest is not the answer: -f waits for the one after it.)
        if options.fail, head.status >= 400, !transfer.machine.followsRedirect {
            failedHTTPStatus = head.status
            transfer.sink = .discard
            return
        }
        if options.failWithBody, head.status >= 400, !transfer.machine.followsRedirect { failedHTTPStatus = head.status }
        if options.remoteHeaderName, output == .remoteName, !transfer.machine.followsRedirect,
           let name = head.headers["Content-Disposition"].flatMap(Self.dispositionFileName) {
            takeRemoteHeaderName(name, transfer)
        }
        headerBytes += headText.utf8.count
        if options.verbose || trace != nil { logExchange(transfer, head) }
        if options.include || options.head {
            switch transfer.sink {
            case .file(let file):
                var bytes = Array(headText.utf8)
                _ = bytes.withUnsafeMutableBytes { file.write(UnsafeRawBufferPointer($0)) }
            case .stream where streamsToStdout:
                Terminal.write(headText)
            case .memory, .discard, .stream, .fanOut, .destination, .resumable:
                break
            }
        }
    }

    func transferShouldRetry(_ transfer: Transfer, reason: RetryReason, retry: Int) -> Bool {
        var problem = "HTTP error"
        if case .failure(let error) = reason {
            if error.code == .connectFailed, !options.retryConnRefused, !options.retryAllErrors { return false }
            // (curl retries an unreachable network only with --retry-all-errors.)
            if error.code == .noRoute, !options.retryAllErrors { return false }
            problem = error.code == .connectFailed ? "connection refused" : (error.code.primary == .timeout ? "timeout" : "error")
        }
        if !options.silent || options.showError {
            let wait = Int(CLIContext.retryPolicy(options).interval(beforeRetry: retry).seconds.rounded(.up))
            Terminal.error("Warning: Problem : \(problem). Will retry in \(wait) seconds. \(options.retry - retry + 1) retries left.\n")
        }
        return true
    }

    func transferDidProgress(_ transfer: Transfer) {
        if let meter = context.parallelMeter {
            let sample = Self.sample(transfer)
            meter.moved(from: lastSample, to: sample)
            lastSample = sample
            return
        }
        progress?.update(Self.sample(transfer))
    }

    func transferDidComplete(_ transfer: Transfer) {
        if let meter = context.parallelMeter {
            let sample = Self.sample(transfer)
            meter.moved(from: lastSample, to: sample)
            meter.ended(expectedKnown: sample.expected != nil, sendTotalKnown: sample.sendTotal != nil, sentSomething: sample.sent > 0)
        }
        progress?.finish(Self.sample(transfer))
        // (No authenticator, and no waiting in the outbox: the session concludes every attempt.)
        let action = session.attemptEnded(RequestSession.Attempt(answered: transfer.head != nil, failure: transfer.error?.code,
                                                                 journaled: freezing?.journaled ?? false))
        precondition(action == .conclude, "a CLI attempt the session did not conclude")
        ended()
    }

    static func sample(_ transfer: Transfer) -> ProgressSample {
        // A body the cache delivered came from storage, not the wire: the meter shows what was
        // delivered (as received, it would stay at 0 % while the body is printed).
        let fromStorage = transfer.cachePhase != .fresh
        return ProgressSample(received: fromStorage ? transfer.metrics.bodyBytesDecoded : transfer.metrics.bodyBytesReceived,
                       expected: transfer.expectedBodyLength,
                       sent: UInt64(max(0, transfer.requestBodyBytesSent)),
                       sendTotal: transfer.requestBodyLength > 0 && !transfer.isRequestBodyChunked ? UInt64(transfer.requestBodyLength) : nil)
    }
}
