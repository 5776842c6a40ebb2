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
    @exclusivity(unchecked) private var bodyReader: FileBodyReader?
    /// The Host header value for this origin, formatted once per connection rather than per request.
    private let hostHeader: String

    /// A connection to `origin` over `stream` (not yet open), which must be up within
    /// `connectTimeout`.
    package init(id: UInt64, poolKey: Int, origin: Origin, stream: any ByteStream, owner: HTTP1ConnectionDelegate,
                 resources: HTTP1Resources, uvLoop: UnsafeMutablePointer<uv_loop_t>, connectTimeout: Nanoseconds?) {
        self.id = id
        self.poolKey = poolKey
        self.origin = origin
        self.stream = stream
        self.owner = owner
        self.resources = resources
        self.uvLoop = uvLoop
        let bracketed = origin.host.utf8.contains(UInt8(ascii: ":")) ? "[\(origin.host)]" : origin.host
        hostHeader = origin.port == origin.scheme.defaultPort ? bracketed : "\(bracketed):\(origin.port)"
        machine = HTTP1ConnectionStateMachine(connectDeadline: deadlineMillis(after: connectTimeout, from: uv_now(uvLoop)))
        timer = .allocate(capacity: 1)
        uv_timer_init(uvLoop, timer)
        timer.pointee.data = Unmanaged.passRetained(self).toOpaque()
        decoder.delegate = self
    }

    private var nowMillis: UInt64 { uv_now(uvLoop) }

    /// What connecting took and found (copied into the first transfer's metrics).
    package var timings: ConnectTimings { stream.timings }

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
        let deadlines = HTTP1ConnectionStateMachine.ExchangeDeadlines(
            total: transfer.machine.totalDeadline,
            firstByte: deadlineMillis(after: timeouts.firstByte, from: nowMillis),
            idleLimit: timeouts.idle?.millisecondsRoundedUp ?? .max)
        let replayable = transfer._method.isIdempotent && transfer._body.isReplayable
        pendingFromBegin = true
        perform(machine.sendRequest(replayable: replayable, deadlines: deadlines,
                                    poolIdleLimit: transfer._options.poolIdleTimeout.millisecondsRoundedUp))
        pendingFromBegin = false
        rearmTimer()
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
        let framing = RequestEncoder.Framing(
            host: !transfer.userSetHost,
            contentLength: RequestEncoder.contentLength(for: transfer._method, bodyLength: transfer.requestBodyLength),
            acceptEncoding: transfer._options.decompress && !transfer.userSetAcceptEncoding)
        RequestEncoder.encodeHead(method: transfer._method, path: transfer._path, query: transfer._query, hostHeader: hostHeader,
                                  headers: transfer._headers, framing: framing, into: &resources.headBuffer)
        headLength = resources.headBuffer.count
        if transfer.requestAsksToClose || !transfer._options.reuseConnection { machine.requestAsksToClose() }
        let head = resources.headBuffer.bytes
        switch transfer._body {
        case .empty:
            stream.write(head, nil, final: true)
        case .bytes(let body):
            body.withUnsafeBytes { stream.write(head, $0, final: true) }
        case .file(let path):
            switch FileBodyReader.open(path: path, expectedLength: transfer.requestBodyLength) {
            case .failure(let error):
                perform(machine.abort(error))
            case .success(let reader):
                bodyReader = reader
                stream.write(head, nil, final: transfer.requestBodyLength == 0)
                if transfer.requestBodyLength > 0, self.transfer === transfer, !stream.hasPendingWrites { writeNextBodyPiece() }
            }
        }
    }

    /// Sends the next piece of a streamed body; the next comes once the stream has drained, so
    /// an upload holds at most one piece in memory.
    private func writeNextBodyPiece() {
        guard let reader = bodyReader else { return }
        switch reader.readChunk() {
        case .failure(let error):
            perform(machine.abort(error))
        case .success(let piece):
            let final = reader.remaining == 0
            if final { bodyReader = nil }
            piece.withUnsafeBytes { stream.write($0, nil, final: final) }
        }
    }

    package func streamDidWrite(_ count: Int, final: Bool) {
        guard let transfer else { return }
        transfer.metrics.bytesSent &+= UInt64(count)
        exchangeBytesSent += count
        if exchangeBytesSent > headLength {
            transfer.requestBodyBytesSent = UInt64(exchangeBytesSent - headLength)
            if transfer.reportsProgress { transfer.sentRequestBytes(count, nowMillis: nowMillis, isLast: final) }
        }
        if final {
            // Written within the call that began the exchange (the usual case): same instant.
            transfer.metrics.requestSent = pendingFromBegin && !stream.hasPendingWrites ? transfer.metrics.requestStart : monotonicNanos()
            perform(machine.requestWritten())
        } else if bodyReader != nil, !stream.hasPendingWrites {
            writeNextBodyPiece()
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
            switch decoder.feed(bytes, scratch: resources.spanScratch) {
            case .needMore:
                break
            case .complete(let consumed, let keepAlive):
                if let error = transfer.completeBody() {
                    perform(machine.responseInvalid(error))
                    return
                }
                transfer.trailers = decoder.trailers
                perform(machine.responseComplete(keepAlive: keepAlive, trailingBytes: consumed < bytes.count))
            case .failed(let error):
                perform(machine.responseInvalid(error))
            }
        case .idle:
            perform(machine.unsolicitedBytes())
        case .connecting, .closed:
            break
        }
    }

    package func streamDidEnd(_ end: StreamEnd) {
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

    package func decoderDidReceiveHead(_ head: consuming ResponseHead, contentLength: UInt64?) -> CourierError? {
        transfer?.receiveHead(head, contentLength: contentLength)
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
            owner.connectionEstablished(self)
        case .writeRequest:
            writeRequest()
        case .completeRequest(let close):
            guard let finished = transfer else { return }
            transfer = nil
            bodyReader = nil
            if close { closeConnection() }
            owner.exchangeFinished(self, finished, outcome: .success(reusable: !close))
        case .failRequest(let error, let replay):
            guard let failed = transfer else { return }
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

    private func rearmTimer() {
        let deadline = machine.nextDeadline
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
        connection.perform(connection.machine.timerFired(now: connection.nowMillis,
                                                         bodyBytes: connection.transfer?.metrics.bodyBytesReceived ?? 0))
        connection.rearmTimer()
    }

    // MARK: - Closing

    private func closeConnection() {
        guard !closeRequested else { return }
        closeRequested = true
        bodyReader = nil
        stream.close()
        uv_timer_stop(timer)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { handle in
            Unmanaged<HTTP1Connection>.fromOpaque(handle!.pointee.data).release()
            UnsafeMutableRawPointer(handle!).deallocate()
        }
    }
}
