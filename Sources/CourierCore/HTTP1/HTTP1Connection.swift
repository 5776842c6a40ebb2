import CUV

/// What a paused consumer's held bytes keep waiting: the response's end.
private enum DeferredCompletion {
    case complete(keepAlive: Bool, trailingBytes: Bool)
    /// The stream closed (`closeNotify` as `StreamEnd.closed` has it).
    case streamClosed(closeNotify: Bool?)
}

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
package final class HTTP1Connection: ByteStreamDelegate, ResponseDecoderDelegate {
    package let id: UInt64
    package let poolKey: Int
    package let origin: Origin
    private unowned(unsafe) let owner: HTTP1ConnectionDelegate
    private unowned(unsafe) let resources: HTTP1Resources
    private let stream: any ByteStream
    private let uvLoop: UnsafeMutablePointer<uv_loop_t>
    @exclusivity(unchecked) package private(set) var machine: HTTP1ConnectionStateMachine
    let decoder = ResponseDecoder()
    private let timer: UnsafeMutablePointer<uv_timer_t>
    @exclusivity(unchecked) private var timerDeadline: UInt64 = 0
    @exclusivity(unchecked) package private(set) var transfer: Transfer?
    @exclusivity(unchecked) private var closeRequested = false
    @exclusivity(unchecked) private var readMillis: UInt64 = 0
    @exclusivity(unchecked) private var headLength = 0
    @exclusivity(unchecked) private var exchangeBytesSent = 0
    /// True while `begin` runs, so a write that completes synchronously reuses its clock reading.
    @exclusivity(unchecked) private var pendingFromBegin = false
    /// The streamed body being sent, until its last piece left (or the exchange ended).
    @exclusivity(unchecked) private var bodySource: (any BodySource)?
    /// A piece read from `bodySource` that a send rate limit holds back until its bytes are on
    /// schedule (valid until the source's next read, which waits for it).
    @exclusivity(unchecked) private var heldPiece: BodyRead?
    @exclusivity(unchecked) private var pumping = false
    @exclusivity(unchecked) private var pumpAgain = false
    @exclusivity(unchecked) private var bodyChunksWritten = 0
    @exclusivity(unchecked) private var bodyFramingBytes = 0
    @exclusivity(unchecked) private var bodyPayloadHanded: UInt64 = 0
    /// Body bytes remain to be sent in this exchange (after the head): an answer that arrives
    /// now is early (`finalHeadBeforeBodySent`).
    @exclusivity(unchecked) private var bodyPending = false
    /// The exchange's receive rate limit (bytes per second, 0 for none), read once at its start.
    @exclusivity(unchecked) private var receiveRateLimit: UInt64 = 0
    /// The response completed (or the stream ended) while the consumer had paused it with body
    /// bytes held: acted on once they are delivered.
    @exclusivity(unchecked) private var deferredCompletion: DeferredCompletion?
    /// Rate limits: when the current measuring window started and what it carried.
    @exclusivity(unchecked) private var rateWindowStart: UInt64 = 0
    @exclusivity(unchecked) private var rateWindowBytes: UInt64 = 0
    @exclusivity(unchecked) private var rateTimerArmed = false
    @exclusivity(unchecked) private var pausedForRate = false
    @exclusivity(unchecked) private var rateResumeAt: UInt64 = .max
    @exclusivity(unchecked) private var consumerPaused = false
    /// The exchange's body consumer takes reads into its own memory (`offerReadLanding`). The
    /// same as `stream.readLanding != nil`, kept as a flag: asking the stream is a protocol call,
    /// and every exchange's end tests this.
    @exclusivity(unchecked) private var landingOffered = false
    /// The consumer that offered to take the socket's reads (see `ReadLease`), until the read
    /// that carried its offer has been parsed; then the lease starts, or not.
    @exclusivity(unchecked) private var leaseTaker: ReadLeaseTaker?
    /// The socket's reads are lent to the consumer's thread: the loop reads again when the lease
    /// comes back (`leaseReturned`) or takes them back (`closeConnection`).
    @exclusivity(unchecked) private var lease: ReadLease?
    /// This exchange's body had its lease (or could never have one): no second offer.
    @exclusivity(unchecked) private var leaseSettled = false
    /// The smallest rest of a body worth a lease: below it, the hand-offs a lease saves do not pay
    /// for the descriptors it makes and the two hand-offs it adds (the lease's return, the body's
    /// last byte).
    static let smallestLease: UInt64 = 128 << 10
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
        let bracketed = origin.host.utf8.contains(UInt8(ascii: ":")) ? "[\(origin.host)]" : origin.host
        hostHeader = origin.port == origin.scheme.defaultPort ? bracketed : "\(bracketed):\(origin.port)"
        forward = forwardingProxy.map { [hostHeader] in ForwardProxy(hostHeader: hostHeader, proxy: $0) }
        machine = HTTP1ConnectionStateMachine(connectDeadline: deadlineMillis(after: connectTimeout, from: uv_now(uvLoop)))
        timer = .allocate(capacity: 1)
        uv_timer_init(uvLoop, timer)
        timer.pointee.data = Unmanaged.passRetained(self).toOpaque()
        decoder.delegate = self
    }

    package var nowMillis: UInt64 { uv_now(uvLoop) }

    /// What connecting took and found (copied into the first transfer's metrics).
    package var timings: ConnectTimings { stream.facts.timings }
    /// Where the connection went, kept once it is up (each transfer it carries gets a copy).
    @exclusivity(unchecked) package private(set) var remoteEndpoint = RemoteEndpoint()

    /// Opens the stream; the owner hears `connectionEstablished` or `connectionFailed`.
    /// What TLS agreed on for this connection (nil for plain TCP), read now.
    package var tlsDetails: TLSDetails? { stream.tlsDetails }
    /// The certificates the server sent (empty for plain TCP), read now.
    package var peerCertificates: [CertificateInfo] { stream.peerCertificates }
    /// This end's address (on demand).
    package var localAddress: SocketAddress? { stream.localAddress }

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
        receiveRateLimit = transfer._options.receiveRateLimit
        if rateWindowStart != 0 {
            rateWindowStart = 0
            rateWindowBytes = 0
        }
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
        bodyPayloadHanded = 0
        let expectsContinue = transfer.requestExpectsContinue
        let continueDeadline = expectsContinue ? deadlineMillis(after: transfer._options.continueTimeout, from: now) : UInt64.max
        machine.bodyFollows(HTTP1ConnectionStateMachine.Flow(awaitingContinue: expectsContinue, continueDeadline: continueDeadline,
                                                             firstByteLimit: transfer._options.timeouts.firstByte?.millisecondsRoundedUp ?? .max),
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
        guard let transfer else { return }
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
        switch transfer._body {
        case .empty:
            stream.write(head, nil, final: true)
        case .bytes(let body) where transfer._options.sendRateLimit > 0:
            // In pieces, each sent when the rate allows (a quarter second's worth at most).
            let piece = Int(min(64 << 10, max(1, transfer._options.sendRateLimit / 4)))
            startSource(BytesBodySource(body, pieceSize: piece), head: head, transfer: transfer)
        case .bytes(let body) where !bodyAwaitsContinue:
            body.withUnsafeBytes { stream.write(head, $0, final: true) }
        case .bytes:
            // Held for the 100 (`releaseHeldBody` sends it).
            stream.write(head, nil, final: false)
        case .file, .multipart, .stream:
            guard let made = transfer._body.makeSource(length: transfer.requestBodyLength) else { return }
            switch made {
            case .failure(let error):
                perform(machine.abort(error))
            case .success(let source):
                startSource(source, head: head, transfer: transfer)
            }
        }
    }

    /// Writes the head, then the body from `source` as the stream (and the rate) takes it.
    private func startSource(_ source: any BodySource, head: UnsafeRawBufferPointer, transfer: Transfer) {
        bodySource = source
        bodyChunksWritten = 0
        bodyFramingBytes = 0
        stream.write(head, nil, final: !bodyPending)
        if !bodyPending { closeBodySource() }
        if self.transfer === transfer { pumpBody() }
    }

    /// Whether the request now being written holds its body back for a 100.
    private var bodyAwaitsContinue: Bool { machine.flow.awaitingContinue }

    /// The body held for `100 Continue` may go.
    private func releaseHeldBody() {
        guard let transfer else { return }
        if bodySource == nil, case .bytes(let body) = transfer._body {
            body.withUnsafeBytes { stream.write($0, nil, final: true) }
        } else {
            pumpBody()
        }
    }

    /// Sends pieces of a streamed body while the stream takes them without queueing: the next
    /// piece is read only once the previous one left, so an upload holds one piece in memory.
    /// A loop rather than recursion (a write the kernel takes at once reports from inside the
    /// call), so a fast socket cannot deepen the stack.
    private func pumpBody() {
        if pumping {
            pumpAgain = true
            return
        }
        pumping = true
        defer { pumping = false }
        repeat {
            pumpAgain = false
            guard let source = bodySource, let transfer, !stream.hasPendingWrites, !bodyAwaitsContinue else { return }
            let limited = transfer._options.sendRateLimit > 0
            if !limited, let file = source.nextFile, !transfer.requestBodyChunked {
                guard sendFilePiece(file, transfer: transfer) else { continue }
            }
            let read = heldPiece ?? source.read()
            heldPiece = nil
            if limited, let wait = sendRateWait(transfer, piece: read) {
                heldPiece = read
                armRateTimer(after: wait)
                return
            }
            switch read {
            case .bytes(let piece):
                writeBodyPiece(piece, transfer: transfer)
            case .array(let piece):
                piece.withUnsafeBytes { writeBodyPiece($0, transfer: transfer) }
            case .end:
                if transfer.requestBodyChunked {
                    RequestEncoder.encodeChunkLine(size: 0, first: bodyChunksWritten == 0, into: &resources.chunkLine)
                    bodyFramingBytes += resources.chunkLine.count
                    closeBodySource()
                    stream.write(resources.chunkLine.bytes, nil, final: true)
                } else {
                    closeBodySource()
                    perform(machine.abort(CourierError(.fileRead, "the body ended \(transfer.requestBodyLength - bodyPayloadHanded) bytes before its announced length")))
                }
            case .pending:
                machine.producerWaits(true, now: nowMillis)
                source.wake = { [unowned(unsafe) self, weak source] in
                    guard let source, source === self.bodySource else { return }
                    self.machine.producerWaits(false, now: self.nowMillis)
                    self.rearmTimer()
                    self.pumpBody()
                }
                return
            case .failed(let error):
                closeBodySource()
                perform(machine.abort(error))
            }
        } while pumpAgain
    }

    /// The next part of a file body straight from the page cache (`ByteStream.sendFile`): as much
    /// as the socket takes, counted and reported as a write. False when it did something (sent,
    /// failed): pump again, or stop; true when the piece must go the usual way (the socket is
    /// full: that piece's completion is the wake; or the stream cannot).
    private func sendFilePiece(_ file: FileBodySource, transfer: Transfer) -> Bool {
        let left = transfer.requestBodyLength - bodyPayloadHanded
        let want = Int(min(file.remaining, left, 1 << 30))
        guard want > 0 else { return true }
        if let problem = file.checkBeforeSending(want) {
            closeBodySource()
            perform(machine.abort(problem))
            return false
        }
        switch stream.facts.plainSocket?.sendFile(file.descriptor, count: want) ?? .unavailable {
        case .sent(let n):
            file.sentElsewhere(n)
            bodyPayloadHanded += UInt64(n)
            let final = bodyPayloadHanded == transfer.requestBodyLength
            if final { closeBodySource() }
            pumpAgain = !final
            streamDidWrite(n, final: final)
            return false
        case .endOfFile:
            closeBodySource()
            perform(machine.abort(file.shrank))
            return false
        case .failed:
            return false
        case .full, .unavailable:
            return true
        }
    }

    private func writeBodyPiece(_ piece: UnsafeRawBufferPointer, transfer: Transfer) {
        guard piece.count > 0 else {
            pumpAgain = true
            return
        }
        if transfer.requestBodyChunked {
            RequestEncoder.encodeChunkLine(size: piece.count, first: bodyChunksWritten == 0, into: &resources.chunkLine)
            bodyChunksWritten += 1
            bodyFramingBytes += resources.chunkLine.count
            bodyPayloadHanded += UInt64(piece.count)
            stream.write(resources.chunkLine.bytes, piece, final: false)
            return
        }
        let left = transfer.requestBodyLength - bodyPayloadHanded
        let sent = UnsafeRawBufferPointer(rebasing: piece.prefix(Int(min(UInt64(piece.count), left))))
        bodyPayloadHanded += UInt64(sent.count)
        let final = bodyPayloadHanded == transfer.requestBodyLength
        // (The source's buffer holds the piece until the write returned: closed after it.)
        let source = bodySource
        if final { bodySource = nil }
        stream.write(sent, nil, final: final)
        if final {
            source?.wake = nil
            source?.close()
        }
    }

    private func closeBodySource() {
        guard let source = bodySource else { return }
        bodySource = nil
        heldPiece = nil
        source.wake = nil
        source.close()
    }

    package func streamDidWrite(_ count: Int, final: Bool) {
        guard let transfer else { return }
        transfer.metrics.bytesSent &+= UInt64(count)
        exchangeBytesSent += count
        if exchangeBytesSent > headLength {
            let payload = exchangeBytesSent - headLength - min(bodyFramingBytes, exchangeBytesSent - headLength)
            transfer.requestBodyBytesSent = min(UInt64(payload), transfer.requestBodyChunked ? .max : transfer.requestBodyLength)
            transfer.requestBodyWireBytes = UInt64(exchangeBytesSent - headLength)
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
        } else if bodySource != nil, !stream.hasPendingWrites {
            pumpBody()
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
            guard let transfer else { return }
            readMillis = nowMillis
            // One clock reading per read: first byte and, if the response ends here, completion.
            let readAt = monotonicNanos()
            transfer.metrics.completedAt = readAt
            if machine.bytesReceived(now: readMillis) {
                transfer.metrics.firstByte = readAt
                rearmTimer()
            }
            if receiveRateLimit > 0 { countForRate(bytes.count, limit: receiveRateLimit) }
            switch decoder.feed(bytes, scratch: resources.spanScratch) {
            case .needMore:
                if _slowPath(leaseTaker != nil) { startLease(transfer) }
            case .complete(let consumed, let keepAlive):
                if transfer.pausedByConsumer, transfer.isHoldingBody {
                    deferredCompletion = .complete(keepAlive: keepAlive, trailingBytes: consumed < bytes.count)
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
    private func completeResponse(_ transfer: Transfer, keepAlive: Bool, trailingBytes: Bool) {
        if let error = transfer.completeBody() {
            perform(machine.responseInvalid(error))
            return
        }
        transfer.trailers = decoder.trailers
        perform(machine.responseComplete(keepAlive: keepAlive, trailingBytes: trailingBytes))
    }

    package func streamDidEnd(_ end: StreamEnd) {
        if let transfer, transfer.isHoldingBody, case .closed(let closeNotify) = end {
            // (TLS delivers a close_notify in the same read as the records before it.)
            deferredCompletion = .streamClosed(closeNotify: closeNotify)
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
        if bodyPending { perform(machine.finalHeadBeforeBodySent()) }
        return transfer?.receiveHead(head, contentLength: contentLength)
    }

    package func decoderDidReceiveInformational(status: Int) {
        perform(machine.informationalReceived(status: status))
    }

    // MARK: - Pausing reads (back-pressure from the consumer, rate limits)

    /// The exchange's body consumer keeps pieces in memory of its own: later reads may land there
    /// (see `ReadLanding`) until the exchange ends. Called with every piece; the first one counts.
    /// `leaseTaker`, when the transfer allows it, may take the reads themselves (see `ReadLease`).
    func offerReadLanding(_ landing: ReadLanding, leaseTaker taker: ReadLeaseTaker?) {
        if !landingOffered {
            landingOffered = true
            stream.readLanding = landing
        }
        if let taker, !leaseSettled, lease == nil { leaseTaker = taker }
    }

    /// After a read whose body pieces went to a consumer that offered to take the reads: lends
    /// them for the rest of a Content-Length body long enough to be worth it, on a plain socket
    /// with nothing left to send, no rate limit and no pause in force. A pause leaves the offer
    /// open for a later piece; anything else settles it for this exchange.
    @inline(never)
    private func startLease(_ transfer: Transfer) {
        let taker = leaseTaker!
        leaseTaker = nil
        if consumerPaused || transfer.pausedByConsumer { return }
        leaseSettled = true
        guard !bodyPending, receiveRateLimit == 0, let left = decoder.lengthBodyLeft, left > Self.smallestLease,
              let post = resources.post, let socket = stream.facts.plainSocket?.leasableDescriptor else { return }
        let connection = UncheckedSendable(self)
        let idleLimit = transfer._options.timeouts.idle?.millisecondsRoundedUp ?? .max
        guard let lease = ReadLease(socket: socket, budget: left - 1, idleLimitMillis: idleLimit, returned: { lease in
            post { connection.value.leaseReturned(lease) }
        }) else { return }
        guard taker.take(lease) else {
            lease.revoke()
            return
        }
        self.lease = lease
        stream.pauseReading()
        machine.readingPaused(true, now: nowMillis)
    }

    /// The lease ended by itself (loop thread): what it read counts as received, and the loop
    /// reads again, for the body's last byte or the end the reader met; silence or a broken
    /// socket fails the exchange as they would have on the loop.
    private func leaseReturned(_ returned: ReadLease) {
        guard let lease, lease === returned, let transfer, case .active = machine.state else { return }
        self.lease = nil
        let taken = lease.taken
        decoder.bodyReadElsewhere(taken)
        transfer.bodyReadElsewhere(taken)
        switch lease.end {
        case .budgetUsed?, .closed?:
            machine.readingPaused(false, now: nowMillis)
            stream.resumeReading()
            rearmTimer()
        case .failed(let failure)?:
            streamDidEnd(.failed(CourierError(.connectionReset, String(cString: uv_err_name(-failure)))))
        case .silent?:
            perform(machine.lentReadsFellSilent(bodyBytes: transfer.metrics.bodyBytesReceived))
        case .revoked?, nil:
            break
        }
    }

    /// The transfer's consumer cannot take more: stop reading the socket.
    func pauseReadingForConsumer() {
        consumerPaused = true
        stream.pauseReading()
        machine.readingPaused(true, now: nowMillis)
    }

    /// The consumer can take more (on the loop thread): deliver what was held, then finish a
    /// response that completed meanwhile, or read again.
    package func resumeReadingForConsumer() {
        guard let transfer, case .active = machine.state else { return }
        if let error = transfer.deliverHeldBody() {
            deferredCompletion = nil
            perform(machine.responseInvalid(error))
            return
        }
        guard !transfer.isHoldingBody else { return }
        if let pending = deferredCompletion {
            deferredCompletion = nil
            switch pending {
            case .complete(let keepAlive, let trailingBytes):
                completeResponse(transfer, keepAlive: keepAlive, trailingBytes: trailingBytes)
            case .streamClosed(let closeNotify):
                streamDidEnd(.closed(closeNotify: closeNotify))
            }
            return
        }
        consumerPaused = false
        guard !pausedForRate else { return }
        stream.resumeReading()
        machine.readingPaused(false, now: nowMillis)
        rearmTimer()
    }

    /// Counts received bytes against the receive rate; over it, reading pauses until the window
    /// allows more (the timer resumes it).
    private func countForRate(_ count: Int, limit: UInt64) {
        let now = nowMillis
        if rateWindowStart == 0 { rateWindowStart = now }
        rateWindowBytes &+= UInt64(count)
        // When the bytes so far would be on schedule at this rate.
        let due = rateWindowStart &+ rateWindowBytes &* 1000 / max(limit, 1)
        if due > now {
            pausedForRate = true
            stream.pauseReading()
            machine.readingPaused(true, now: now)
            armRateTimer(after: due - now)
        }
    }

    /// How long a rate-limited upload must hold `piece` back; nil when it may go now. A piece
    /// goes when the bytes handed so far *and its own* are on schedule, so the upload's average
    /// never exceeds the rate (counting only what was sent before it let the last piece out early:
    /// a body of a few pieces then averaged far above the rate).
    private func sendRateWait(_ transfer: Transfer, piece: BodyRead) -> UInt64? {
        let size: Int
        switch piece {
        case .bytes(let bytes): size = bytes.count
        case .array(let bytes): size = bytes.count
        case .end, .pending, .failed: return nil
        }
        let limit = transfer._options.sendRateLimit
        let now = nowMillis
        if rateWindowStart == 0 { rateWindowStart = now }
        let due = rateWindowStart &+ (bodyPayloadHanded &+ UInt64(size)) &* 1000 / limit
        return due > now ? due - now : nil
    }

    private func armRateTimer(after millis: UInt64) {
        rateResumeAt = nowMillis &+ millis
        rateTimerArmed = true
        timerDeadline = 0
        rearmTimer()
    }

    /// The rate timer came due: read again, or send the next piece.
    private func rateTimerFired() {
        rateTimerArmed = false
        rateResumeAt = .max
        if pausedForRate {
            pausedForRate = false
            if let transfer, !consumerPaused, !transfer.isHoldingBody {
                stream.resumeReading()
                machine.readingPaused(false, now: nowMillis)
            }
        }
        if bodySource != nil { pumpBody() }
    }

    package func decoderDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        transfer?.receiveBody(bytes, nowMillis: readMillis)
    }

    // MARK: - Actions

    private func perform(_ action: HTTP1ConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .announceReady:
            remoteEndpoint = stream.facts.timings.remoteEndpoint
            owner.connectionEstablished(self)
        case .writeRequest:
            writeRequest()
        case .sendBody:
            releaseHeldBody()
        case .stopSendingBody:
            closeBodySource()
        case .completeRequest(let close):
            guard let finished = transfer else { return }
            transfer = nil
            if bodySource != nil { closeBodySource() }
            if deferredCompletion != nil { deferredCompletion = nil }
            if pausedForRate || rateTimerArmed || consumerPaused || landingOffered { resetAfterExchange() }
            if close { closeConnection() }
            owner.exchangeFinished(self, finished, outcome: .success(reusable: !close))
        case .failRequest(let error, let replay):
            guard let failed = transfer else { return }
            transfer = nil
            closeBodySource()
            deferredCompletion = nil
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

    /// What an exchange set on the connection goes before it returns to the pool: reads land in
    /// the loop's buffer again (the next exchange's consumer is another), and a connection that
    /// paused for the rate limit or its consumer reads again (an idle connection must notice the
    /// server closing it).
    private func resetAfterExchange() {
        if landingOffered {
            landingOffered = false
            stream.readLanding = nil
            leaseTaker = nil
            leaseSettled = false
            if let lease {
                self.lease = nil
                lease.revoke()
            }
        }
        rateTimerArmed = false
        rateResumeAt = .max
        if pausedForRate || consumerPaused {
            pausedForRate = false
            consumerPaused = false
            stream.resumeReading()
        }
    }

    private func rearmTimer() {
        let deadline = min(machine.nextDeadline, rateResumeAt)
        guard deadline != .max, !closeRequested else { return }
        if timerDeadline == 0 || deadline < timerDeadline {
            let now = nowMillis
            uv_timer_start(timer, Self.onTimer, deadline > now ? deadline - now : 0, 0)
            timerDeadline = deadline
        }
    }

    private static let onTimer: uv_timer_cb = { timer in
        let connection = Unmanaged<HTTP1Connection>.fromOpaque(timer!.pointee.data).takeUnretainedValue()
        connection.timerDeadline = 0
        if connection.rateTimerArmed, connection.nowMillis >= connection.rateResumeAt { connection.rateTimerFired() }
        connection.perform(connection.machine.timerFired(now: connection.nowMillis,
                                                         bodyBytes: connection.transfer?.metrics.bodyBytesReceived ?? 0))
        connection.rearmTimer()
    }

    // MARK: - Closing

    private func closeConnection() {
        guard !closeRequested else { return }
        closeRequested = true
        if let lease {
            self.lease = nil
            lease.revoke()
        }
        closeBodySource()
        stream.close()
        uv_timer_stop(timer)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { handle in
            Unmanaged<HTTP1Connection>.fromOpaque(handle!.pointee.data).release()
            UnsafeMutableRawPointer(handle!).deallocate()
        }
    }
}
