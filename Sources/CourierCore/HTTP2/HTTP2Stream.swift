import CNGHTTP2

/// One exchange on an HTTP/2 connection: the transfer's carrier. It builds the request's header
/// block, feeds the body to nghttp2 as its windows allow, hands the response to the transfer,
/// holds the stream's window shut while the consumer is paused, and reports how the exchange
/// ended (once) through its connection.
package final class HTTP2Stream: ExchangeCarrier {
    unowned(unsafe) let connection: HTTP2Connection
    let transfer: Transfer
    @exclusivity(unchecked) package internal(set) var machine: HTTP2StreamStateMachine
    /// The stream id, once submitted.
    @exclusivity(unchecked) package internal(set) var id: Int32 = 0
    // The response head being received.
    @exclusivity(unchecked) private var status = 0
    @exclusivity(unchecked) private var headBytes = 0
    /// The head's Content-Length, noted as its field goes by (no search of the head after).
    @exclusivity(unchecked) private var contentLength: UInt64?
    @exclusivity(unchecked) private var finalHeadSeen = false
    /// The error the stream is reset with on Courier's side (a refused head, a limit, a cancel).
    @exclusivity(unchecked) var failure: CourierError?
    /// The error code of the server's RST_STREAM, if it sent one.
    @exclusivity(unchecked) var resetByServer: UInt32?
    /// END_STREAM arrived and the body is complete.
    @exclusivity(unchecked) private var completed = false
    /// The stream closed while the consumer still held back bytes: reported on resume.
    @exclusivity(unchecked) private var endHeld = false
    @exclusivity(unchecked) private(set) var reported = false
    /// DATA bytes whose window has not reopened yet: the consumer was paused, or they came
    /// ahead of the receive rate.
    @exclusivity(unchecked) private var unconsumed = 0
    /// DATA bytes whose window reopened so far.
    @exclusivity(unchecked) private var credited: UInt64 = 0
    /// The window grew past the connection's first stream window (bodies beyond a few KiB).
    @exclusivity(unchecked) private var windowGrown = false
    /// The receive and send rates (`TransferOptions.receiveRateLimit`, `.sendRateLimit`), and
    /// the body bytes that arrived ahead of the receive rate (see `HTTP2Stream+Rates`).
    @exclusivity(unchecked) var receivePacer: RatePacer?
    @exclusivity(unchecked) var sendPacer: RatePacer?
    @exclusivity(unchecked) var paced: [UInt8] = []
    @exclusivity(unchecked) var pacedOffset = 0
    @exclusivity(unchecked) var pacedDelivered: UInt64 = 0
    // The request body.
    @exclusivity(unchecked) var bytesBody: [UInt8] = []
    @exclusivity(unchecked) var bytesOffset = 0
    @exclusivity(unchecked) var source: (any BodySource)?
    @exclusivity(unchecked) var leftover: [UInt8] = []
    @exclusivity(unchecked) var leftoverOffset = 0
    @exclusivity(unchecked) var bodySent: UInt64 = 0
    /// Until when the body waits for a 100 (`.max`: it does not wait).
    @exclusivity(unchecked) var continueDeadline: UInt64 = .max
    /// A final answer came before the 100: the body is never sent.
    @exclusivity(unchecked) var bodyRefused = false

    init(connection: HTTP2Connection, transfer: Transfer, now: UInt64) {
        self.connection = connection
        self.transfer = transfer
        let timeouts = transfer._options.timeouts
        machine = HTTP2StreamStateMachine(now: now, totalDeadline: transfer.machine.totalDeadline,
                                          firstByteLimit: timeouts.firstByte?.millisecondsRoundedUp ?? .max,
                                          idleLimit: timeouts.idle?.millisecondsRoundedUp ?? .max,
                                          sendLimit: timeouts.send.map { $0.millisecondsRoundedUp })
        let options = transfer._options
        if options.receiveRateLimit > 0 { receivePacer = RatePacer(limit: options.receiveRateLimit) }
        if options.sendRateLimit > 0 { sendPacer = RatePacer(limit: options.sendRateLimit) }
    }

    /// When the connection's timer must wake for this stream: a deadline, or a rate's pause.
    var nextWake: UInt64 {
        min(machine.nextDeadline, receivePacer?.resumeAt ?? .max, sendPacer?.resumeAt ?? .max, continueDeadline)
    }

    // MARK: - ExchangeCarrier

    package var connectionID: UInt64 { connection.id }
    package var trace: ConnectionTrace? { connection.trace }
    package var tlsDetails: TLSDetails? { connection.stream.tlsDetails }
    package var peerCertificates: [CertificateInfo] { connection.stream.peerCertificates }
    package var localAddress: SocketAddress? { connection.stream.localAddress }

    /// Ends the exchange now with `error` and resets the stream (CANCEL); the connection goes on
    /// serving its other streams. Whatever still arrives for the stream is dropped.
    package func abort(_ error: CourierError) {
        guard !reported else { return }
        let reason = failure ?? error
        failure = reason
        machine.closed()
        if endHeld {
            connection.heldEnds.removeAll { $0 === self }
        } else if id > 0, connection.streams.find(Int(id)) === self {
            _ = connection.removeStream(id)
            connection.session.reset(streamID: id, errorCode: UInt32(NGHTTP2_CANCEL.rawValue))
        }
        finish(.failure(reason, replay: false))
        connection.flush()
    }

    package func pauseReadingForConsumer() {
        machine.windowHeld(true, by: .consumer, now: connection.nowMillis)
    }

    package func resumeReadingForConsumer() {
        guard !reported else { return }
        connection.resume(self)
    }

    /// Reads land in the loop's buffer and go through nghttp2: nothing to lend.
    package func offerReadLanding(_ landing: ReadLanding, leaseTaker: ReadLeaseTaker?) {}

    // MARK: - The response

    /// What becomes of a received header field.
    enum FieldVerdict {
        /// A field of the head (or trailers): the connection's header block gathers it.
        case keep
        /// A pseudo-header (its `:status` is taken here).
        case skip
        /// Over the head's limits: the stream fails (the error is kept here).
        case refuse
    }

    /// A response field, with the `fieldsSoFar` the block already holds.
    func headerField(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, fieldsSoFar: Int) -> FieldVerdict {
        headBytes += name.count + value.count + 32
        let limits = transfer._options.limits
        if headBytes > limits.maxHeaderBytes {
            failure = CourierError(.headerBytesExceeded, "over \(limits.maxHeaderBytes) bytes")
            return .refuse
        }
        if name.first == UInt8(ascii: ":") {
            if !finalHeadSeen, ByteClass.equals(name, ":status") {
                var code = 0
                for byte in value { code = code * 10 + Int(byte &- 48) }
                status = code
            }
            return .skip
        }
        if fieldsSoFar >= limits.maxHeaderCount {
            failure = CourierError(.headerCountExceeded, "over \(limits.maxHeaderCount) fields")
            return .refuse
        }
        if name.count == 14, !finalHeadSeen, ByteClass.equals(name, "content-length") { contentLength = Self.decimal(value) }
        return .keep
    }

    func headersEnded(endStream: Bool, now: UInt64) {
        machine.responseFrame(now: now)
        if transfer.metrics.firstByte == 0 { transfer.metrics.firstByte = monotonicNanos() }
        let block = connection.headerBlock
        if finalHeadSeen {
            transfer.trailers = block.take()
        } else if status < 200 {
            // An informational head (100 Continue, 103 Early Hints; nghttp2 refuses 101).
            block.clear()
            informationalHead(status: status)
            headBytes = 0
            return
        } else {
            finalHeadSeen = true
            finalHeadBeforeContinue()
            machine.headReceived(now: now)
            // (The silence limit now applies: it may fall before the first-byte deadline armed.)
            connection.arm(machine.nextDeadline)
            var head = ResponseHead(status: status, versionMinor: 0, reason: "", headers: block.take())
            head.versionMajor = 2
            if let error = transfer.receiveHead(head, contentLength: contentLength, nowMillis: now, approval: connection.owner) {
                abort(error)
                return
            }
        }
        if endStream { responseEnded() }
    }

    func dataReceived(_ bytes: UnsafeRawBufferPointer, now: UInt64) {
        guard failure == nil else { return }
        machine.responseFrame(now: now)
        if receivePacer != nil {
            paceReceived(bytes, now: now)
        } else {
            deliver(bytes, now: now)
        }
    }

    /// Hands body bytes to the transfer; their window reopens once the consumer took them.
    func deliver(_ bytes: UnsafeRawBufferPointer, now: UInt64) {
        transfer.metrics.completedAt = monotonicNanos()
        if let error = transfer.receiveBody(bytes, nowMillis: now) {
            abort(error)
            return
        }
        unconsumed += bytes.count
        if !transfer.pausedByConsumer { reopenWindow() }
    }

    /// Gives the server back the window of the bytes the consumer took, and grows the window of
    /// a stream whose body turns out large (not a rate-limited one: its window is its burst).
    private func reopenWindow() {
        guard unconsumed > 0, !endHeld, id > 0 else { return }
        credited += UInt64(unconsumed)
        connection.session.consumed(streamID: id, count: unconsumed)
        unconsumed = 0
        if !windowGrown, receivePacer == nil, credited >= UInt64(connection.firstStreamWindow / 2) {
            windowGrown = true
            connection.session.growWindow(streamID: id, to: connection.grownStreamWindow)
        }
    }

    /// END_STREAM arrived: the body is complete unless the transfer finds it short.
    func responseEnded() {
        guard failure == nil, !completed else { return }
        completed = true
        if bodyRefused, id > 0 {
            // The body the server did not wait for: the stream ends here, without error.
            connection.session.reset(streamID: id, errorCode: UInt32(NGHTTP2_NO_ERROR.rawValue))
            connection.flush()
        }
        // (Bytes held for the receive rate end the body when they are delivered.)
        if !holdsPacedBytes { transfer.metrics.completedAt = monotonicNanos() }
    }

    /// The consumer can take more: deliver what was held, open the window again, and report an
    /// end that waited for it.
    func resumed(now: UInt64) {
        machine.windowHeld(false, by: .consumer, now: now)
        if let error = transfer.deliverHeldBody() {
            abort(error)
            return
        }
        guard !transfer.isHoldingBody else { return }
        reopenWindow()
        if receivePacer != nil { deliverPaced(now: now) }
        finishHeldEnd()
    }

    /// Reports an end that waited for the consumer (or the receive rate) once nothing is held.
    func finishHeldEnd() {
        guard endHeld, !transfer.isHoldingBody, !holdsPacedBytes else { return }
        endHeld = false
        connection.heldEnds.removeAll { $0 === self }
        finishClosed(errorCode: 0)
    }

    /// A Content-Length value's number (nghttp2 has checked that it is one), nil past UInt64.
    private static func decimal(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard !bytes.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard byte >= 48, byte <= 57 else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(byte - 48))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }

    // MARK: - The end

    /// nghttp2 closed the stream with `errorCode` (0: both sides ended it).
    func closed(errorCode: UInt32) {
        if errorCode == 0, completed, failure == nil, transfer.isHoldingBody || holdsPacedBytes {
            // (The machine stays open: the total deadline still holds while the held bytes wait.)
            endHeld = true
            connection.heldEnds.append(self)
            return
        }
        finishClosed(errorCode: errorCode)
    }

    private func finishClosed(errorCode: UInt32) {
        machine.closed()
        if errorCode == 0, completed, failure == nil {
            if let error = transfer.completeBody() {
                finish(.failure(error, replay: false))
            } else {
                finish(.success(reusable: true))
            }
            return
        }
        if let failure {
            finish(.failure(failure, replay: false))
            return
        }
        let name = HTTP2Session.errorName(errorCode)
        switch errorCode {
        case UInt32(NGHTTP2_REFUSED_STREAM.rawValue):
            // Refused by RST_STREAM, or above a GOAWAY's last stream id: never processed.
            finish(.failure(CourierError(.http2StreamReset, "stream \(id) refused by the server"), replay: true))
        case UInt32(NGHTTP2_HTTP_1_1_REQUIRED.rawValue):
            finish(.failure(CourierError(.http2NotNegotiated, "the server requires HTTP/1.1"), replay: true))
        default:
            if let code = resetByServer {
                finish(.failure(CourierError(.http2StreamReset, "stream \(id) reset by the server: \(HTTP2Session.errorName(code))"), replay: false))
            } else if let code = connection.goAwayError {
                finish(.failure(CourierError(.http2GoAway, "the server ended the connection: \(HTTP2Session.errorName(code))"), replay: false))
            } else if errorCode == 0 {
                finish(.failure(CourierError(.truncatedBody, "stream \(id) closed before its end"), replay: false))
            } else {
                finish(.failure(CourierError(.http2Protocol, "stream \(id): \(name)"), replay: false))
            }
        }
    }

    /// The connection failed under the stream: a request the server never answered may go
    /// again elsewhere when its method is idempotent (it may have been processed otherwise).
    func connectionFailed(_ error: CourierError) {
        machine.closed()
        let replay = !machine.responseStarted && transfer._method.isIdempotent && transfer._body.isReplayable
        let described = failure ?? (machine.responseStarted || error.code != .connectionReset ? error
            : CourierError(.emptyReply, "the HTTP/2 connection closed before the response"))
        finish(.failure(described, replay: replay))
    }

    private func finish(_ outcome: ExchangeOutcome) {
        guard !reported else { return }
        reported = true
        source?.close()
        source = nil
        transfer.carrier = nil
        connection.streamEnded(self, transfer, outcome: outcome)
    }
}
