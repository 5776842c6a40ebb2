import CUV

/// One connection speaking HTTP/1.1 over a byte stream: the I/O half of
/// `HTTP1ConnectionStateMachine`.
///
/// It feeds the machine what the stream and the decoder report and carries out the actions it
/// returns: encoding and writing the request, handing the response to the transfer, arming one
/// timer for whichever deadline the machine says is next, telling its owner how things ended.
/// It does not know whether the stream is TCP or TLS, nor who its owner is.
///
/// The connection owns a libuv timer whose `data` holds a retain on it, given back only in the
/// timer's close callback: the object outlives every callback libuv may still deliver. The timer
/// is re-armed lazily: moving a deadline later (every read pushes the idle deadline) costs
/// nothing; the timer fires at the old time, the machine finds nothing due, and it re-arms.
package final class HTTP1Connection: ExchangeCarrier, ByteStreamDelegate, ResponseDecoderDelegate {
    package let id: UInt64
    package let poolKey: Int
    package let origin: Origin
    private unowned(unsafe) let owner: HTTP1ConnectionDelegate
    unowned(unsafe) let resources: HTTP1Resources
    let stream: any ByteStream
    private let uvLoop: UnsafeMutablePointer<uv_loop_t>
    @exclusivity(unchecked) package internal(set) var machine: HTTP1ConnectionStateMachine
    let decoder = ResponseDecoder()
    private let timer: UnsafeMutablePointer<uv_timer_t>
    @exclusivity(unchecked) private var timerDeadline: UInt64 = 0
    @exclusivity(unchecked) package internal(set) var transfer: Transfer?
    @exclusivity(unchecked) private var closeRequested = false
    @exclusivity(unchecked) private var readMillis: UInt64 = 0
    @exclusivity(unchecked) private var headLength = 0
    @exclusivity(unchecked) private var exchangeBytesSent = 0
    /// True while `begin` runs, so a write that completes synchronously reuses its clock reading.
    @exclusivity(unchecked) private var pendingFromBegin = false
    /// Body bytes remain to be sent in this exchange (after the head): an answer that arrives
    /// now is early (`finalHeadBeforeBodySent`).
    @exclusivity(unchecked) private(set) var bodyPending = false
    /// Sends the bodies (made for the first request that has one).
    @exclusivity(unchecked) var bodyWriter: RequestBodyWriter?
    /// How reading the response is held back: consumer pauses, the receive rate, lent reads, an
    /// end that waits for held bytes (see `ReceiveFlow`).
    @exclusivity(unchecked) var receive = ReceiveFlow()
    /// The earliest time a rate limit (either direction) lets bytes move again; `.max`: none.
    @exclusivity(unchecked) private var paceResumeAt: UInt64 = .max
    /// The consumer that offered to take the socket's reads (see `ReadLease`), until the read
    /// that carried its offer has been parsed.
    @exclusivity(unchecked) var leaseTaker: ReadLeaseTaker?
    /// The socket's reads, lent to the consumer's thread until they come back
    /// (`leaseReturned`) or the connection takes them back.
    @exclusivity(unchecked) var lease: ReadLease?
    /// The Host header value for this origin, formatted once per connection rather than per request.
    private let hostHeader: String
    /// Set when the connection goes to an HTTP proxy that forwards its requests (not a tunnel).
    private let forward: ForwardProxy?
    /// What connecting did, when the request that opened it asked (`-v`); the transfer it serves
    /// first takes it.
    package var trace: ConnectionTrace?

    /// A connection to `origin` over `stream` (not yet open), which must be up within
    /// `connectTimeout`.
    package init(id: UInt64, poolKey: Int, origin: Origin, stream: any ByteStream, owner: HTTP1ConnectionDelegate,
                 resources: HTTP1Resources, uvLoop: UnsafeMutablePointer<uv_loop_t>, connectTimeout: Nanoseconds?,
                 forwardingProxy: Proxy? = nil) {
        self.id = id
        self.poolKey = poolKey
        self.origin = origin
        self.stream = stream
        self.owner = owner
        self.resources = resources
        self.uvLoop = uvLoop
        hostHeader = origin.authorityField
        forward = forwardingProxy.map { [hostHeader] in ForwardProxy(hostHeader: hostHeader, proxy: $0) }
        machine = HTTP1ConnectionStateMachine(connectDeadline: deadlineMillis(after: connectTimeout, from: uv_now(uvLoop)))
        timer = .allocate(capacity: 1)
        uv_timer_init(uvLoop, timer)
        timer.pointee.data = Unmanaged.passRetained(self).toOpaque()
        decoder.delegate = self
    }

    package var nowMillis: UInt64 { uv_now(uvLoop) }

    package var connectionID: UInt64 { id }
    /// What connecting took and found (copied into the first transfer's metrics).
    package var timings: ConnectTimings { stream.facts.timings }
    /// Where the connection went, kept once it is up (each transfer it carries gets a copy).
    @exclusivity(unchecked) package private(set) var remoteEndpoint = RemoteEndpoint()
    /// What TLS agreed on for this connection (nil for plain TCP), read now.
    package var tlsDetails: TLSDetails? { stream.tlsDetails }
    /// The certificates the server sent (empty for plain TCP), read now.
    package var peerCertificates: [CertificateInfo] { stream.peerCertificates }
    /// This end's address (on demand).
    package var localAddress: SocketAddress? { stream.localAddress }

    /// Opens the stream; the owner hears `connectionEstablished` or `connectionFailed`.
    package func connect() {
        rearmTimer()
        stream.open(delegate: self)
    }

    // MARK: - Commands from the owner

    /// Starts sending `transfer`'s request. The pool calls this only on an idle connection.
    package func begin(_ transfer: Transfer, at nowNanos: UInt64 = monotonicNanos()) {
        self.transfer = transfer
        decoder.limits = transfer._options.limits
        decoder.begin(expectsBody: transfer._method != .head)
        exchangeBytesSent = 0
        transfer.metrics.requestStart = nowNanos
        let timeouts = transfer._options.timeouts
        let now = nowMillis
        let hasBody = transfer.requestBodyChunked || transfer.requestBodyLength > 0
        let deadlines = HTTP1ConnectionStateMachine.ExchangeDeadlines(
            total: transfer.machine.totalDeadline,
            firstByte: deadlineMillis(after: timeouts.firstByte, from: now),
            idleLimit: timeouts.idle?.millisecondsRoundedUp ?? .max)
        let replayable = transfer._method.isIdempotent && transfer._body.isReplayable
        bodyPending = hasBody
        receive.begin(rateLimit: transfer._options.receiveRateLimit)
        pendingFromBegin = true
        let action = machine.sendRequest(replayable: replayable, deadlines: deadlines,
                                         poolIdleLimit: transfer._options.poolIdleTimeout.millisecondsRoundedUp)
        if hasBody { bodyWillFollow(transfer, now: now) }
        perform(action)
        pendingFromBegin = false
        rearmTimer()
    }

    /// The request has a body: whether it waits for a 100, and the machine's body flow (kept off
    /// the path of bodiless requests).
    @inline(never)
    private func bodyWillFollow(_ transfer: Transfer, now: UInt64) {
        let expectsContinue = transfer.requestExpectsContinue
        let continueDeadline = expectsContinue ? deadlineMillis(after: transfer._options.continueTimeout, from: now) : UInt64.max
        let timeouts = transfer._options.timeouts
        machine.bodyFollows(HTTP1ConnectionStateMachine.Flow(awaitingContinue: expectsContinue, continueDeadline: continueDeadline,
                                                             firstByteLimit: timeouts.firstByte?.millisecondsRoundedUp ?? .max,
                                                             sendLimit: timeouts.send.map { $0.millisecondsRoundedUp }),
                            now: now)
    }

    /// Abandons the exchange in flight with `error` (cancellation, a deadline the owner tracks).
    package func abort(_ error: CourierError) {
        perform(machine.abort(error))
    }

    /// Closes the connection at the pool's request (eviction, shutdown, limit lowered).
    package func closeFromPool() {
        perform(machine.close())
    }

    /// The pool parked the connection.
    package func becameIdle() {
        machine.parked(now: nowMillis)
        rearmTimer()
    }

    // MARK: - Writing the request

    private func writeRequest() {
        guard let transfer else { preconditionFailure("writeRequest without a transfer") }
        var framing = RequestEncoder.Framing(
            host: !transfer.userSetHost,
            contentLength: RequestEncoder.contentLength(for: transfer._method, bodyLength: transfer.requestBodyLength),
            acceptEncoding: transfer._options.decompress && !transfer.userSetAcceptEncoding)
        if bodyPending {
            if transfer.requestBodyChunked {
                framing.contentLength = nil
                framing.chunked = true
            }
            framing.expectContinue = bodyAwaitsContinue
        }
        RequestEncoder.encodeHead(method: transfer._method, path: transfer._path, query: transfer._query, hostHeader: hostHeader,
                                  headers: transfer._headers, framing: framing, into: &resources.headBuffer)
        if let forward { RequestEncoder.forwardForm(forward, method: transfer._method, headers: transfer._headers, head: &resources.headBuffer) }
        headLength = resources.headBuffer.count
        if transfer.requestAsksToClose || !transfer._options.reuseConnection {
            machine.requestAsksToClose()
            // curl's --http1.0 (which asks to close, see PoolKeys): the old request line.
            if transfer._options.hasComposition, transfer._options.sendsHTTP10 {
                RequestEncoder.downgradeToHTTP10(UnsafeMutableRawBufferPointer(start: resources.headBuffer.base, count: resources.headBuffer.count))
            }
        }
        let head = resources.headBuffer.bytes
        if case .empty = transfer._body {
            stream.write(head, nil, final: true)
            return
        }
        if bodyWriter == nil { bodyWriter = RequestBodyWriter(connection: self, stream: stream, resources: resources) }
        bodyWriter!.send(head: head, of: transfer, awaitingContinue: bodyAwaitsContinue)
    }

    /// Whether the request now being written holds its body back for a 100.
    var bodyAwaitsContinue: Bool { machine.flow.awaitingContinue }

    /// The body writer gives up on the exchange (the body could not be produced).
    func abortExchange(_ error: CourierError) {
        perform(machine.abort(error))
    }

    /// The body's producer has nothing yet (`waiting`), or produced again: no silence deadline
    /// runs while it is the caller's pace.
    func producerWaits(_ waiting: Bool) {
        machine.producerWaits(waiting, now: nowMillis)
        if !waiting { rearmTimer() }
    }

    package func streamDidWrite(_ count: Int, final: Bool) {
        guard let transfer else { preconditionFailure("a write reported with no exchange") }
        transfer.metrics.bytesSent &+= UInt64(count)
        exchangeBytesSent += count
        if exchangeBytesSent > headLength {
            let wire = exchangeBytesSent - headLength
            let payload = wire - min(bodyWriter?.framingBytes ?? 0, wire)
            transfer.requestBodyBytesSent = min(UInt64(payload), transfer.requestBodyChunked ? .max : transfer.requestBodyLength)
            transfer.requestBodyWireBytes = UInt64(wire)
            if !final { machine.bodyBytesWritten(now: nowMillis) }
            if transfer.reportsProgress { transfer.sentRequestBytes(count, nowMillis: nowMillis, isLast: final) }
        }
        if final {
            bodyPending = false
            // Written within the call that began the exchange (the usual case): same instant.
            transfer.metrics.requestSent = pendingFromBegin && !stream.hasPendingWrites ? transfer.metrics.requestStart : monotonicNanos()
            let hadBody = exchangeBytesSent > headLength
            if hadBody { machine.bodyBytesWritten(now: nowMillis) }
            perform(machine.requestWritten())
            // (The first-byte deadline starts now for a request with a body.)
            if hadBody { rearmTimer() }
        } else if let writer = bodyWriter, writer.isSending, !stream.hasPendingWrites {
            writer.pump()
        }
    }

    // MARK: - Reading the response

    package func streamDidOpen() {
        perform(machine.connected())
    }

    package func streamDidFailToOpen(_ error: CourierError) {
        perform(machine.connectFailed(error))
    }

    package func streamDidReceive(_ bytes: UnsafeRawBufferPointer) {
        switch machine.state {
        case .active:
            guard let transfer else { preconditionFailure("an exchange without a transfer") }
            readMillis = nowMillis
            // One clock reading per read: first byte and, if the response ends here, completion.
            let readAt = monotonicNanos()
            transfer.metrics.completedAt = readAt
            if machine.bytesReceived(now: readMillis) {
                transfer.metrics.firstByte = readAt
                rearmTimer()
            }
            if receive.rateLimit > 0 { countForRate(bytes.count) }
            switch decoder.feed(bytes, scratch: resources.spanScratch) {
            case .needMore:
                if _slowPath(leaseTaker != nil) { decideLending(transfer) }
            case .complete(let consumed, let keepAlive):
                if transfer.pausedByConsumer,
                   !receive.responseEnded(.complete(keepAlive: keepAlive, trailingBytes: consumed < bytes.count),
                                          consumerHolding: transfer.isHoldingBody) {
                    return
                }
                completeResponse(transfer, keepAlive: keepAlive, trailingBytes: consumed < bytes.count)
            case .failed(let error):
                perform(machine.responseInvalid(error))
            }
        case .idle:
            perform(machine.unsolicitedBytes())
        case .connecting, .closed:
            break
        }
    }

    @inline(__always)
    func completeResponse(_ transfer: Transfer, keepAlive: Bool, trailingBytes: Bool) {
        if let error = transfer.completeBody() {
            perform(machine.responseInvalid(error))
            return
        }
        transfer.trailers = decoder.trailers
        perform(machine.responseComplete(keepAlive: keepAlive, trailingBytes: trailingBytes))
    }

    package func streamDidEnd(_ end: StreamEnd) {
        // (TLS delivers a close_notify in the same read as the records before it.)
        if let transfer, case .closed(let closeNotify) = end,
           !receive.responseEnded(.streamClosed(closeNotify: closeNotify), consumerHolding: transfer.isHoldingBody) {
            return
        }
        switch end {
        case .failed(let error):
            perform(machine.transportFailed(error))
        case .closed(let closeNotify):
            var body: HTTP1ConnectionStateMachine.BodyAtClose?
            if case .active = machine.state, let transfer {
                switch decoder.finish() {
                case .complete:
                    transfer.trailers = decoder.trailers
                    body = .complete(error: transfer.completeBody())
                case .failed(let error):
                    body = .incomplete(error)
                case .needMore:
                    body = .incomplete(decoder.endOfStreamError())
                }
            }
            perform(machine.streamClosed(closeNotify: closeNotify, body: body))
        }
    }

    @inline(__always)
    package func decoderDidReceiveHead(_ head: consuming ResponseHead, contentLength: UInt64?) -> CourierError? {
        guard let transfer else { preconditionFailure("a response head with no exchange") }
        if bodyPending { perform(machine.finalHeadBeforeBodySent()) }
        return transfer.receiveHead(head, contentLength: contentLength, nowMillis: readMillis, approval: owner)
    }

    package func decoderDidReceiveInformational(status: Int) {
        perform(machine.informationalReceived(status: status))
    }

    package func decoderDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        guard let transfer else { preconditionFailure("response body bytes with no exchange") }
        return transfer.receiveBody(bytes, nowMillis: readMillis)
    }

    // MARK: - Actions

    func perform(_ action: HTTP1ConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .announceReady:
            remoteEndpoint = stream.facts.timings.remoteEndpoint
            owner.connectionEstablished(self)
        case .writeRequest:
            writeRequest()
        case .sendBody:
            guard let transfer, let writer = bodyWriter else { preconditionFailure("a held body with no exchange") }
            writer.continueAllowed(transfer)
        case .stopSendingBody:
            bodyWriter?.close()
        case .completeRequest(let close):
            guard let finished = transfer else { preconditionFailure("an exchange completed with no transfer") }
            transfer = nil
            if let writer = bodyWriter, writer.isSending { writer.close() }
            if !receive.isPlain { endReceiveFlow() }
            if close { closeConnection() }
            owner.exchangeFinished(self, finished, outcome: .success(reusable: !close))
        case .failRequest(let error, let replay):
            guard let failed = transfer else { preconditionFailure("an exchange failed with no transfer") }
            transfer = nil
            closeConnection()
            owner.exchangeFinished(self, failed, outcome: .failure(error, replay: replay))
        case .failConnect(let error):
            closeConnection()
            let described = error.code == .connectTimeout && error.detail == nil
                ? CourierError(.connectTimeout, "\(origin.host):\(origin.port)") : error
            owner.connectionFailed(self, error: described)
        case .closeIdle:
            closeConnection()
            owner.idleConnectionClosed(self)
        case .close:
            closeConnection()
        }
    }

    // MARK: - Deadlines

    func rearmTimer() {
        let deadline = min(machine.nextDeadline, paceResumeAt)
        guard deadline != .max, !closeRequested else { return }
        if timerDeadline == 0 || deadline < timerDeadline {
            let now = nowMillis
            uv_timer_start(timer, Self.onTimer, deadline > now ? deadline - now : 0, 0)
            timerDeadline = deadline
        }
    }

    /// A rate limit (either direction) moved when bytes may go again: the timer watches it too.
    func pacingChanged(rearming: Bool = true) {
        paceResumeAt = min(receive.resumeAt, bodyWriter?.resumeAt ?? .max)
        if rearming { rearmTimer() }
    }

    private static let onTimer: uv_timer_cb = { timer in
        let connection = Unmanaged<HTTP1Connection>.fromOpaque(timer!.pointee.data).takeUnretainedValue()
        connection.timerDeadline = 0
        let now = connection.nowMillis
        if now >= connection.paceResumeAt { connection.paceTimerFired(now: now) }
        connection.perform(connection.machine.timerFired(now: now, bodyBytes: connection.transfer?.metrics.bodyBytesReceived ?? 0))
        connection.rearmTimer()
    }

    // MARK: - Closing

    /// The connection negotiated HTTP/2: its open stream goes to the connection that speaks it
    /// (`ByteStream.handOver`), and this one retires without closing it.
    package func retireForHandOver() -> any ByteStream {
        precondition(machine.isIdle && transfer == nil, "a busy HTTP/1 connection handed over")
        closeRequested = true
        uv_timer_stop(timer)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { handle in
            Unmanaged<HTTP1Connection>.fromOpaque(handle!.pointee.data).release()
            UnsafeMutableRawPointer(handle!).deallocate()
        }
        return stream
    }

    private func closeConnection() {
        guard !closeRequested else { return }
        closeRequested = true
        if let lease {
            self.lease = nil
            lease.revoke()
        }
        bodyWriter?.close()
        stream.close()
        uv_timer_stop(timer)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { handle in
            Unmanaged<HTTP1Connection>.fromOpaque(handle!.pointee.data).release()
            UnsafeMutableRawPointer(handle!).deallocate()
        }
    }
}
