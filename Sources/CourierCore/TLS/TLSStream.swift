import COpenSSL
import CUV

/// TLS as a filter over any byte stream (a socket, a proxy's CONNECT tunnel): plaintext in and
/// out for the HTTP connection above, ciphertext through the stream below, on the loop thread
/// (curl's SSL connection filter).
///
/// The stream counts as open only once the handshake is done and the peer passed every check the
/// configuration asks for (`TLSSession.evaluateTrust`), so no request byte is ever written to an
/// unverified server. The end of the stream says whether the peer sent close_notify; a
/// close-delimited body is only complete with one (the HTTP/1 machine decides that).
package final class TLSStream: ByteStream, ByteStreamDelegate {
    private let lower: any ByteStream
    private let context: TLSContext
    private let host: String
    private let port: UInt16
    private let uvLoop: UnsafeMutablePointer<uv_loop_t>
    private unowned(unsafe) let sessions: TLSSessionCache
    private let sessionKey: Int
    private let trace: ConnectionTrace?
    private let alpn: ALPNOffer
    @exclusivity(unchecked) private unowned(unsafe) var delegate: ByteStreamDelegate?
    @exclusivity(unchecked) private var tls: TLSSession?
    @exclusivity(unchecked) private var handshaking = true
    @exclusivity(unchecked) private var closed = false
    /// The plaintext each ciphertext write below carries, in order: the stream below reports its
    /// writes one for one, in the order they were made, and the layer above hears the plaintext.
    @exclusivity(unchecked) private var writesBelow = Deque<(plaintext: Int, final: Bool)>()
    /// Inside `flush`: a write the stream below completes at once is reported after `outgoing` is
    /// cleared, so a delegate that writes again from the report never resends old ciphertext.
    @exclusivity(unchecked) private var flushing = false
    @exclusivity(unchecked) private var deferredReport: (count: Int, final: Bool)?
    @exclusivity(unchecked) private var tlsTimings = ConnectTimings()
    /// Where decrypted records may land (see `ReadLanding`); the ciphertext always goes to the
    /// loop's buffer.
    @exclusivity(unchecked) package var readLanding: ReadLanding?

    /// TLS to `host:port` over `lower`, resuming the session `sessions` holds for `sessionKey`.
    package init(over lower: any ByteStream, context: TLSContext, host: String, port: UInt16, uvLoop: UnsafeMutablePointer<uv_loop_t>,
                 sessions: TLSSessionCache, sessionKey: Int, trace: ConnectionTrace?, alpn: ALPNOffer = .http1) {
        self.lower = lower
        self.alpn = alpn
        self.context = context
        self.host = host
        self.port = port
        self.uvLoop = uvLoop
        self.sessions = sessions
        self.sessionKey = sessionKey
        self.trace = trace
    }

    package var hasPendingWrites: Bool { lower.hasPendingWrites }

    /// The stream below's facts, with the handshake's: its session once done, and no socket
    /// whose bytes are the plaintext (no sendfile, no read leases under TLS).
    package var facts: StreamFacts {
        var facts = lower.facts
        facts.timings.tlsEnd = tlsTimings.tlsEnd
        facts.timings.tlsResumed = tlsTimings.tlsResumed
        facts.timings.tlsVerifyResult = tls?.verifyResult ?? 0
        facts.tls = handshaking ? nil : tls
        facts.bytesAreOnSocket = false
        return facts
    }

    // Every record of a read is decrypted and delivered before the read returns, so OpenSSL holds
    // no plaintext while the socket is paused.
    package func pauseReading() { lower.pauseReading() }
    package func resumeReading() { lower.resumeReading() }

    package func open(delegate: ByteStreamDelegate) {
        self.delegate = delegate
        lower.open(delegate: self)
    }

    package func handOver(to delegate: ByteStreamDelegate) { self.delegate = delegate }

    // MARK: - From the stream below

    package func streamDidOpen() {
        guard let session = TLSSession(context: context, host: host, port: port, session: sessions.session(for: sessionKey), alpn: alpn) else {
            failOpen(CourierError(.tlsHandshake, "SSL_new: \(TLSErrors.drain())"))
            return
        }
        let key = sessionKey
        session.onNewSession = { [unowned(unsafe) sessions] ticket in sessions.store(ticket, for: key) }
        if let trace { session.record(into: trace) }
        tls = session
        continueHandshake(UnsafeRawBufferPointer(start: nil, count: 0))
    }

    package func streamDidFailToOpen(_ error: CourierError) {
        let told = delegate
        close()
        told?.streamDidFailToOpen(error)
    }

    package func streamDidReceive(_ ciphertext: UnsafeRawBufferPointer) {
        if handshaking {
            continueHandshake(ciphertext)
        } else {
            tls?.receive(ciphertext)
            readRecords()
        }
    }

    package func streamDidWrite(_ count: Int, final: Bool) {
        guard let (plaintext, finalWrite) = writesBelow.popFirst(), plaintext > 0 || finalWrite else { return }
        if flushing {
            deferredReport = (plaintext, finalWrite)
        } else {
            delegate?.streamDidWrite(plaintext, final: finalWrite)
        }
    }

    package func streamDidEnd(_ end: StreamEnd) {
        if handshaking {
            switch end {
            case .closed:
                failOpen(CourierError(.tlsHandshake, "connection closed during the TLS handshake"))
            case .failed(let error):
                failOpen(CourierError(.tlsHandshake, "during the TLS handshake: \(error.message)"))
            }
            return
        }
        switch end {
        case .closed:
            // The stream below ended; a close_notify would have been reported from `readRecords` already.
            delegate?.streamDidEnd(.closed(closeNotify: false))
        case .failed:
            delegate?.streamDidEnd(end)
        }
    }

    // MARK: - Handshake and records

    private func continueHandshake(_ ciphertext: UnsafeRawBufferPointer) {
        guard let tls else { return }
        tls.receive(ciphertext)
        let progress = tls.handshake(ciphertext)
        flush(plaintextCount: 0, final: false)
        guard !closed else { return }
        switch progress {
        case .inProgress:
            break
        case .failed(let error):
            if let trace { traceFailure(error, trace, tls) }
            failOpen(error)
        case .done:
            if let trace { for line in tls.handshakeSummary() { trace.add(line) } }
            handshaking = false
            tlsTimings.tlsEnd = monotonicNanos()
            tlsTimings.tlsResumed = tls.resumed
            delegate?.streamDidOpen()
            // Records after the handshake in the same read (Go sends its session ticket with
            // its Finished) are still in `tls`'s input: read them now, before the buffer is reused.
            if closed { tls.receive(UnsafeRawBufferPointer(start: nil, count: 0)) } else { readRecords() }
        }
    }

    /// Decrypts every record the last read brought and hands the plaintext up, stopping if the
    /// stream closes on the way.
    ///
    /// Records are decrypted one after the other into the same buffer until it is full, and the
    /// plaintext goes up in one piece: a record holds at most 16 KiB, and handing each up on its
    /// own split the HTTP/2 DATA frames that straddle record boundaries into more, smaller body
    /// pieces (1 GiB over h2: 49 k writes of the body to its file against curl's 33 k).
    private func readRecords() {
        guard let tls else { return }
        let buffer = LoopReadBuffers.plaintext(of: uvLoop)
        reading: while !closed {
            // The records decrypt into a landing zone when the exchange offers one (no copy of
            // the plaintext afterwards), else into the loop's buffer.
            let landing = readLanding
            let zone = landing?.landingZone()
            defer { if zone != nil { landing?.landed() } }
            let target = zone ?? buffer
            var filled = 0
            var drained = false
            var end: StreamEnd?
            filling: while filled < target.count {
                switch tls.readPlaintext(into: UnsafeMutableRawBufferPointer(rebasing: target[filled...])) {
                case .bytes(let count): filled += count
                case .wantMore: drained = true; break filling
                case .closed: end = .closed(closeNotify: true); break filling
                case .failed(let error): end = .failed(error); break filling
                }
            }
            if filled > 0 { delegate?.streamDidReceive(UnsafeRawBufferPointer(start: target.baseAddress, count: filled)) }
            if let end {
                if !closed { delegate?.streamDidEnd(end) }
                break reading
            }
            // A full buffer: more records may wait, read on. (An empty one cannot take any.)
            if drained || filled == 0 { break reading }
        }
        tls.receive(UnsafeRawBufferPointer(start: nil, count: 0))
        // Reading can make TLS answer (a key update); send it.
        if !closed, tls.outgoing.count > 0 { flush(plaintextCount: 0, final: false) }
    }

    /// Where the handshake stopped and why: the chain when the handshake itself finished (the
    /// refusal is Courier's, after it), else the last message that went through.
    @inline(never)
    private func traceFailure(_ error: CourierError, _ trace: ConnectionTrace, _ tls: TLSSession) {
        if tls.handshakeDone {
            for line in tls.handshakeSummary() { trace.add(line) }
            trace.add("SSL certificate problem: \(error.message)")
        } else {
            trace.add("TLS handshake failed after \(trace.lastHandshakeMessage ?? "starting"): \(error.message)")
        }
    }

    // MARK: - Writing

    package func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?, final: Bool) {
        guard !closed, let tls else { return }
        if let error = tls.write(first) ?? second.flatMap({ tls.write($0) }) {
            delegate?.streamDidEnd(.failed(error))
            return
        }
        flush(plaintextCount: first.count + (second?.count ?? 0), final: final)
    }

    /// Sends the ciphertext TLS produced, reporting `plaintextCount` request bytes once it left.
    private func flush(plaintextCount: Int, final: Bool) {
        guard let tls else { return }
        guard tls.outgoing.count > 0 else {
            if plaintextCount > 0 || final { delegate?.streamDidWrite(plaintextCount, final: final) }
            return
        }
        flushing = true
        writesBelow.append((plaintextCount, final))
        lower.write(tls.outgoing.bytes, nil, final: final)
        flushing = false
        tls.outgoing.clear()
        if let report = deferredReport {
            deferredReport = nil
            delegate?.streamDidWrite(report.count, final: report.final)
        }
    }

    // MARK: - Closing

    private func failOpen(_ error: CourierError) {
        let told = delegate
        close()
        told?.streamDidFailToOpen(error)
    }

    package func close() {
        guard !closed else { return }
        closed = true
        delegate = nil
        readLanding = nil
        if let tls, tls.handshakeDone {
            // close_notify, best effort: the peer learns the close was deliberate.
            tls.shutdown()
            if tls.outgoing.count > 0 { lower.write(tls.outgoing.bytes, nil, final: false) }
            tls.outgoing.clear()
        }
        lower.close()
    }
}
