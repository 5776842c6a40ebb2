import Dispatch
import Courier
import CourierCore

/// `courier --outbox DIR --flush`: sends each waiting request once, oldest first, with the
/// command line's transfer flags (-m, --connect-timeout, TLS, proxy) and the entry's own method,
/// URL, headers (its Idempotency-Key among them) and body. Each outcome is a line on stdout:
/// `<id> <method> <url> <status>` for an answered request (now gone from the outbox), or
/// `... kept (<exit code>...): <reason>` for one still waiting. A run killed part-way leaves
/// what it did not finish; the request in flight is sent again by the next flush, with the same key.
enum OutboxFlush {
    static func run(_ journal: Journal, context: CLIContext) -> Int32 {
        for entry in journal.entries {
            var resend = context.options
            resend.method = entry.method
            resend.headers = entry.headers.map { ($0.name, $0.value) }
            resend.outputs = ["/dev/null"]
            resend.remoteNameAll = false
            resend.remoteNameCount = 0
            resend.head = false
            resend.uploadFile = nil
            let body: (body: RequestBody, contentType: String?)?
            do {
                let contents = try OutboxRules.body(of: entry)
                body = contents.isEmpty ? nil : (contents, nil)
            } catch {
                Terminal.write("\(entry.id) \(entry.method) \(entry.url) kept (\(ExitCode.forError(error))): \(error.message)\n")
                continue
            }
            let job = CLIJob(index: 0, rawURL: entry.url, output: .file("/dev/null"), context: context.with(options: resend, body: body),
                             resending: entry)
            let ended = DispatchSemaphore(value: 0)
            job.onDone = { ended.signal() }
            job.start()
            ended.wait()
            job.report()
            Terminal.write("\(entry.id) \(entry.method) \(entry.url) \(job.outboxOutcome.text)\n")
        }
        return journal.entries.isEmpty ? 0 : ExitCode.tryAgainLater
    }
}
