import COpenSSL

/// TLS over a `TCPStream`: plaintext in and out for the HTTP/1 connection above, ciphertext
/// through the socket below, on the loop thread (curl's SSL connection filter).
///
/// The stream counts as open only once the handshake is done and the peer passed every check the
/// configuration asks for (`TLSSession.evaluateTrust`), so no request byte is ever written to an
/// unverified server. The end of the stream says whether the peer sent close_notify; a
/// close-delimited body is only complete with one (the HTTP/1 machine decides that).
package final class TLSStream: ByteStream, ByteStreamDelegate {
    private let tcp: TCPStream
    private let context: TLSContext
    private let host: String
    private let port: UInt16
    private unowned(unsafe) let sessions: TLSSessionCache
    private let sessionKey: Int
    @exclusivity(unchecked) private unowned(unsafe) var delegate: ByteStreamDelegate?
    @exclusivity(unchecked) private var tls: TLSSession?
    @exclusivity(unchecked) private var handshaking = true
    @exclusivity(unchecked) private var closed = false
    /// Inside `flush`: a write the socket completes at once is reported after `outgoing` is
    /// cleared, so a delegate that writes again from the report never resends old ciphertext.
    @exclusivity(unchecked) private var flushing = false
    @exclusivity(unchecked) private var deferredReport: (count: Int, final: Bool)?
    @exclusivity(unchecked) private var tlsTimings = ConnectTimings()
    /// Where decrypted records may land (see `ReadLanding`); the ciphertext always goes to the
    /// loop's buffer.
    @exclusivity(unchecked) package var readLanding: ReadLanding?

    /// TLS to `host:port` over `tcp`, resuming the session `sessions` holds for `sessionKey`.
    package init(over tcp: TCPStream, context: TLSContext, host: String, port: UInt16,
                 sessions: TLSSessionCache, sessionKey: Int) {
        self.tcp = tcp
        self.context = context
        self.host = host
        self.port = port
        self.sessions = sessions
        self.sessionKey = sessionKey
    }

    package var hasPendingWrites: Bool { tcp.hasPendingWrites }

    package var tlsDetails: TLSDetails? { handshaking ? nil : tls?.details }

    package var peerCertificates: [CertificateInfo] { handshaking ? [] : tls?.peerCertificateInfo ?? [] }

    /// This end's address: the TCP socket's.
    package var localAddress: SocketAddress? { tcp.localAddress }

    // Every record of a read is decrypted and delivered before the read returns, so OpenSSL holds
    // no plaintext while the socket is paused.
    package func pauseReading() { tcp.pauseReading() }
    package func resumeReading() { tcp.resumeReading() }

    package var timings: ConnectTimings {
        var merged = tcp.timings
        merged.tlsEnd = tlsTimings.tlsEnd
        merged.tlsResumed = tlsTimings.tlsResumed
        merged.tlsVerifyResult = tls?.verifyResult ?? 0
        return merged
    }

    package func open(delegate: ByteStreamDelegate) {
        self.delegate = delegate
        tcp.open(delegate: self)
    }

    // MARK: - From the socket

    package func streamDidOpen() {
        guard let session = TLSSession(context: context, host: host, port: port, session: sessions.session(for: sessionKey)) else {
            failOpen(CourierError(.tlsHandshake, "SSL_new: \(TLSErrors.drain())"))
            return
        }
        let key = sessionKey
        session.onNewSession = { [unowned(unsafe) sessions] ticket in sessions.store(ticket, for: key) }
        if let trace = tcp.trace { session.record(into: trace) }
        tls = session
        continueHandshake(UnsafeRawBufferPointer(start: nil, count: 0))
    }

    package func streamDidFailToOpen(_ error: CourierError) {
        failOpen(error)
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
        if flushing {
            deferredReport = (count, final)
        } else {
            delegate?.streamDidWrite(count, final: final)
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
            // TCP ended; a close_notify would have been reported from `readRecords` already.
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
            if let trace = tcp.trace { traceFailure(error, trace, tls) }
            failOpen(error)
        case .done:
            if let trace = tcp.trace { for line in tls.handshakeSummary() { trace.add(line) } }
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
    private func readRecords() {
        guard let tls else { return }
        let buffer = tcp.plaintextBuffer
        reading: while !closed {
            // Each record decrypts into a landing zone when the exchange offers one (no copy of
            // the plaintext afterwards), else into the loop's buffer.
            let landing = readLanding
            let zone = landing?.landingZone()
            defer { if zone != nil { landing?.landed() } }
            let target = zone ?? buffer
            switch tls.readPlaintext(into: target) {
            case .bytes(let count):
                delegate?.streamDidReceive(UnsafeRawBufferPointer(start: target.baseAddress, count: count))
            case .wantMore:
                break reading
            case .closed:
                delegate?.streamDidEnd(.closed(closeNotify: true))
                break reading
            case .failed(let error):
                delegate?.streamDidEnd(.failed(error))
                break reading
            }
        }
        tls.receive(UnsafeRawBufferPointer(start: nil, count: 0))
        // Reading can make TLS answer (a key update); send it.
        if !closed, tls.outgoing.count > 0 { flush(plaintextCount: 0, final: false) }
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
        tcp.write(tls.outgoing.bytes, nil, final: final, reporting: plaintextCount)
        flushing = false
        tls.outgoing.clear()
        if let report = deferredReport {
            deferredReport = nil
            delegate?.streamDidWrite(report.count, final: report.final)
        }
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
            tcp.writeLastWords(tls.outgoing.bytes)
            tls.outgoing.clear()
        }
        tcp.close()
    }
}
