import Courier
import CourierCore
import Dispatch
import Glibc

/// A job's report, on the main thread once its transfer ended: exit code, output file, -v's
/// end, the outbox entry, -w.
extension CLIJob {
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
        // Out of the outbox once the server answered (whatever it said); kept otherwise.
        let journaled = freezing?.journaled ?? false
        switch session.conclude(journaled: journaled ? (answered: transfer?.head != nil, failure: error?.code) : nil) {
        case .remove:
            if let freezing { context.outbox?.forget(id: freezing.id) }
        case .keep:
            if let error, let freezing, let outbox = context.outbox {
                if OutboxRules.waitsForNetwork(error) { exitCode = ExitCode.tryAgainLater }
                message = error.message + "; the request waits in the outbox \(outbox.directory) as \(freezing.id)"
            }
        case .none:
            break
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
    func takeRemoteHeaderName(_ name: String, _ transfer: Transfer) {
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
    static func setRemoteTime(_ path: String, _ head: ResponseHead) {
        guard let text = head.headers["Last-Modified"], let seconds = HTTPDate.parse(text) else { return }
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    func headText(_ head: ResponseHead) -> String {
        head.statusLine + "\r\n" + head.headers.description + "\r\n"
    }

    /// -v and --trace-ascii for one exchange (loop thread, when its head arrives).
    func logExchange(_ transfer: Transfer, _ head: ResponseHead) {
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
