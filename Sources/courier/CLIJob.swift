import Courier
import CourierCore
import Dispatch
import Glibc

/// One URL of the command line: builds the transfer, writes its output, reports its outcome.
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
    @exclusivity(unchecked) private(set) var isDone = false
    // The state below is the loop thread's while the transfer runs, then the reporter's: never
    // touched from two threads at once, so not checked for overlapping access at run time.
    @exclusivity(unchecked) private var transfer: Transfer?
    @exclusivity(unchecked) private var setupError: CourierError?
    @exclusivity(unchecked) private var outputPath: String?
    @exclusivity(unchecked) private var streamsToStdout = false
    @exclusivity(unchecked) private var headerBytes = 0
    @exclusivity(unchecked) private var progress: (any ProgressDisplay)?
    @exclusivity(unchecked) private(set) var exitCode: Int32 = 0
    /// The -o/-O destination's staged file, committed or discarded when the transfer is reported.
    @exclusivity(unchecked) private var outputFile: FileSink?
    @exclusivity(unchecked) private var failedHTTPStatus: Int?
    /// The status of the last head received (a redirect's, when redirects ran out).
    @exclusivity(unchecked) private var lastStatus = 0
    /// curl's timing variables, hop by hop (redirects add up).
    @exclusivity(unchecked) private var timeline = CurlTimeline()
    /// -v: the connection the last exchange used, and whether its response closes it.
    @exclusivity(unchecked) private var servingConnection: UInt64?
    /// The local end of the connection the last head came on (for -w).
    @exclusivity(unchecked) private var localAddress: SocketAddress?
    /// The last TLS connection's certificates, for -w (curl reports the last connection's).
    @exclusivity(unchecked) private var certificates: [CertificateInfo] = []
    @exclusivity(unchecked) private var closesConnection = false
    /// --outbox: this request's entry in the journal.
    @exclusivity(unchecked) private var outboxID: String?
    /// --trace-ascii: the body's pieces are dumped as they arrive (so no size line at the end).
    @exclusivity(unchecked) private var dumpsBody = false
    /// -Z's meter: what this transfer had moved when it last reported.
    @exclusivity(unchecked) private var lastSample: ProgressSample?

    private var options: CommandLineOptions { _read { yield context.options } }
    private var body: (body: RequestBody, contentType: String?)? { context.body }
    private var journal: Journal? { context.journal }
    private var headerDump: HeaderDump? { context.headerDump }
    private var trace: HeaderDump? { context.trace }

    init(index: Int, rawURL: String, output: Output, context: CLIContext, resending entry: OutboxEntry? = nil) {
        outboxID = entry?.id
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
    private static func hasScheme(_ url: String) -> Bool {
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

    private func build(showProgress: Bool) {
        // curl assumes http:// for a URL without a scheme.
        var text = Self.hasScheme(rawURL) ? rawURL : "http://" + rawURL
        var method: HTTPMethod = options.head ? .head : (body != nil ? .post : .get)
        if let upload = options.uploadFile {
            method = options.head ? .head : .put
            // curl: an upload to a URL ending in "/" goes to the file's name there.
            if text.hasSuffix("/"), upload != "-", let name = upload.split(separator: "/").last { text += String(name) }
        }
        if let explicit = options.method { method = HTTPMethod(rawValue: explicit) }

        let reused = context.origins.split(text)
        var draft = RequestDraft(method: method, base: reused?.base, target: reused?.target ?? text, parameters: [:], engineID: 0,
                                 options: context.transferOptions, defaultHeaders: context.requestHeaders)
        // Set only when there is one: each allocates the draft's extras, even to store nil.
        if let user = options.user { draft.credentials = user }
        if let token = options.bearer { draft.authorization = .bearer(token) }
        if let body { draft.body = body.body }
        // --outbox: every attempt carries the entry's stable key (a -H Idempotency-Key wins).
        let outboxKey = journal != nil && outboxID == nil ? OutboxEntry.newID() : ""
        if !outboxKey.isEmpty, !draft.headers.contains("Idempotency-Key") { draft.headers.add(name: "Idempotency-Key", value: outboxKey) }
        let transfer: Transfer
        switch draft.makeTransfer() {
        case .success(let made): transfer = made
        case .failure(let error):
            setupError = error
            return
        }
        if let journal, outboxID == nil {
            // Journaled, durably, before anything is sent.
            do {
                let entry = try OutboxRules.entry(for: transfer, id: outboxKey, kind: "courier", now: wallClockSeconds())
                outboxID = try journal.append(entry).id
            } catch {
                setupError = error
                return
            }
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

    /// `mkdir -p` of the directory `path` is in (curl's --create-dirs).
    private static func createDirectories(for path: String) -> CourierError? {
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
        guard let transfer, setupError == nil else {
            ended()
            return
        }
        context.parallelMeter?.added()
        Runtime.shared.submit(transfer)
    }

    private func ended() {
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
        if options.fail, head.status >= 400 {
            failedHTTPStatus = head.status
            transfer.sink = .discard
            return
        }
        if options.failWithBody, head.status >= 400 { failedHTTPStatus = head.status }
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
        ended()
    }

    private static func sample(_ transfer: Transfer) -> ProgressSample {
        // A body the cache delivered came from storage, not the wire: the meter shows what was
        // delivered (as received, it would stay at 0 % while the body is printed).
        let fromStorage = transfer.cachePhase != .fresh
        return ProgressSample(received: fromStorage ? transfer.metrics.bodyBytesDecoded : transfer.metrics.bodyBytesReceived,
                       expected: transfer.expectedBodyLength,
                       sent: UInt64(max(0, transfer.requestBodyBytesSent)),
                       sendTotal: transfer.requestBodyLength > 0 && !transfer.isRequestBodyChunked ? UInt64(transfer.requestBodyLength) : nil)
    }

    // MARK: Reporting (main thread, after completion)

    func report() {
        var error = setupError ?? transfer?.error
        if let error {
            exitCode = ExitCode.forError(error)
        } else if let status = failedHTTPStatus {
            exitCode = ExitCode.httpError
            if !options.silent || options.showError {
                Terminal.error("courier: (22) The requested URL returned error: \(status)\n")
            }
        }
        // (-C - is the only resumable sink: asked first, so no other run copies the sink.)
        if options.continueAt, let transfer, case .resumable(let download) = transfer.sink,
           let failure = download.finish(succeeded: exitCode == 0) {
            error = failure
            exitCode = ExitCode.forError(failure)
        }
        if let file = outputFile {
            outputFile = nil
            // --fail-with-body keeps the error's body (curl writes it too).
            let keep = exitCode == 0 || (options.failWithBody && exitCode == ExitCode.httpError)
            if let failure = file.finish(succeeded: keep) {
                error = failure
                exitCode = ExitCode.forError(failure)
            } else if keep, options.remoteTime, let path = outputPath, let head = transfer?.head {
                Self.setRemoteTime(path, head)
            }
        }
        if options.parallel, let transfer, outputPath == nil || outputPath == "-" {
            if (options.include || options.head), let head = transfer.head, failedHTTPStatus == nil {
                Terminal.write(headText(head))
            }
            if failedHTTPStatus == nil, !transfer.responseBody.isEmpty {
                transfer.responseBody.withUnsafeBytes { Terminal.write(bytes: $0) }
            }
        }
        // A connection that failed before any response: what connecting did, and where it stopped.
        let failedConnect = servingConnection == nil ? transfer.map { ExchangeText.failedConnection(of: $0) { String(VerboseLog.curlNumber($0)) } } ?? [] : []
        if options.verbose, !failedConnect.isEmpty { Terminal.error(failedConnect.map { "* \($0)\n" }.joined()) }
        if let trace, !failedConnect.isEmpty { trace.write(failedConnect.map { "== Info: \($0)\n" }.joined()) }
        let failedNumber = failedConnect.isEmpty ? nil : transfer?.connectionTrace.map { VerboseLog.curlNumber($0.connectionID) }
        let ending = failedNumber.map { "Closing connection \($0)" }
            ?? VerboseLog.end(transfer, connection: servingConnection, closing: closesConnection || transfer?.error != nil)
        if options.verbose, !ending.isEmpty { Terminal.error("* \(ending)\n") }
        if let trace, let transfer {
            // A body kept in memory (-Z) is dumped whole now; one resumed into its file (-C -) is
            // read back from the file's end once it is in place (what this run received is its
            // tail); a failed one gets its size line.
            if dumpsBody {
            } else if case .memory = transfer.sink, !transfer.responseBody.isEmpty {
                transfer.responseBody.withUnsafeBytes { trace.write(VerboseLog.traceData($0)) }
            } else if case .resumable = transfer.sink, exitCode == 0, let path = outputPath,
                      VerboseLog.traceFileTail(path, count: transfer.metrics.bodyBytesDecoded, to: trace.write) {
            } else {
                trace.write(VerboseLog.traceData(transfer.metrics.bodyBytesReceived))
            }
            if !ending.isEmpty { trace.write("== Info: \(ending)\n") }
        }
        var message = error?.message
        if let journal, let outboxID {
            // Out of the outbox once the server answered (whatever it said); kept otherwise.
            if transfer?.head != nil {
                journal.remove(outboxID)
            } else if let error {
                if OutboxRules.waitsForNetwork(error) { exitCode = ExitCode.tryAgainLater }
                message = error.message + "; the request waits in the outbox \(journal.directory) as \(outboxID)"
            }
        }
        if let message, !options.silent || options.showError {
            Terminal.error("courier: (\(exitCode)) \(message)\n")
        }
        if let format = options.writeOut {
            let t = transfer
            if let t { timeline.hopEnded(t.metrics, next: nil) }
            let report = TransferReport(url: rawURL, effectiveURL: t?.url.description ?? rawURL,
                                        status: t?.head?.status ?? lastStatus, head: t?.head,
                                        metrics: t?.metrics ?? TransferMetrics(), exitCode: exitCode,
                                        errorMessage: error?.message ?? (failedHTTPStatus.map { "The requested URL returned error: \($0)" } ?? ""),
                                        headerBytes: headerBytes, cacheStatus: t?.cacheStatus ?? "bypass",
                                        method: t?.method.rawValue ?? options.method ?? "GET", filename: outputPath ?? "",
                                        urlIndex: index, referer: t?.headers["Referer"], timeline: timeline,
                                        localAddress: localAddress, certificates: certificates,
                                        uploadBytes: t?.requestBodyWireBytes ?? 0)
            for piece in WriteOut.render(format, report) {
                if piece.fd == 2 { Terminal.error(piece.text) } else { Terminal.write(piece.text) }
            }
        }
    }

    /// -J: the file is named by Content-Disposition instead of the URL (its last path segment,
    /// without directories); an existing file is kept unless --clobber.
    private func takeRemoteHeaderName(_ name: String, _ transfer: Transfer) {
        let path = options.outputDirectory.map { $0 + "/" + name } ?? name
        var info = stat()
        if !options.clobber, stat(path, &info) == 0 {
            setupError = CourierError(.fileWrite, "Refusing to overwrite \(path): File exists")
            transfer.sink = .discard
            return
        }
        do {
            let file = try FileSink(download: path)
            _ = outputFile?.finish(succeeded: false)
            outputFile = file
            outputPath = path
            transfer.sink = .file(file)
        } catch {
            setupError = error
            transfer.sink = .discard
        }
    }

    /// The file name a Content-Disposition field gives (`filename="a.txt"` or `filename=a.txt`),
    /// reduced to its last path segment; nil when there is none.
    static func dispositionFileName(_ field: String) -> String? {
        for parameter in field.split(separator: ";").dropFirst() {
            let trimmed = parameter.drop { $0 == " " || $0 == "\t" }
            guard trimmed.lowercased().hasPrefix("filename=") else { continue }
            var value = trimmed.dropFirst("filename=".count)
            if value.hasPrefix("\"") {
                value = value.dropFirst()
                value = value.prefix { $0 != "\"" }
            } else {
                value = value.prefix { $0 != " " && $0 != "\t" }
            }
            let name = value.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
            return name.isEmpty || name == "." || name == ".." ? nil : name
        }
        return nil
    }

    /// -R: the file's access and modification times become the response's Last-Modified.
    private static func setRemoteTime(_ path: String, _ head: ResponseHead) {
        guard let text = head.headers["Last-Modified"], let seconds = HTTPDate.parse(text) else { return }
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    private func headText(_ head: ResponseHead) -> String {
        head.statusLine + "\r\n" + head.headers.description + "\r\n"
    }

    /// -v and --trace-ascii for one exchange (loop thread, when its head arrives).
    private func logExchange(_ transfer: Transfer, _ head: ResponseHead) {
        let exchange = VerboseLog.exchange(transfer, head)
        servingConnection = transfer.connectionInfo?.id
        closesConnection = head.headers["Connection"]?.lowercased() == "close"
        if options.verbose { Terminal.error(VerboseLog.verbose(exchange)) }
        if let trace {
            VerboseLog.trace(exchange, to: trace.write) { write in
                VerboseLog.traceSent(transfer.body, count: transfer.requestBodyBytesSent, length: transfer.requestBodyLength,
                                     stdinCopy: context.uploadCopy, to: write)
            }
        }
    }
}
