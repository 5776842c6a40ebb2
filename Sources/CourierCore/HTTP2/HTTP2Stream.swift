import CNGHTTP2

/// One exchange on an HTTP/2 connection: the transfer's carrier. It builds the request's header
/// block, feeds the body to nghttp2 as its windows allow, hands the response to the transfer,
/// holds the stream's window shut while the consumer is paused, and reports how the exchange
/// ended (once) through its connection.
package final class HTTP2Stream: ExchangeCarrier {
    private unowned(unsafe) let connection: HTTP2Connection
    let transfer: Transfer
    @exclusivity(unchecked) package private(set) var machine: HTTP2StreamStateMachine
    /// The stream id, once submitted.
    @exclusivity(unchecked) package private(set) var id: Int32 = 0
    // The response head being received.
    @exclusivity(unchecked) private var status = 0
    @exclusivity(unchecked) private var fields = HTTPHeaders()
    @exclusivity(unchecked) private var headBytes = 0
    @exclusivity(unchecked) private var finalHeadSeen = false
    /// The error the stream is reset with on Courier's side (a refused head, a limit, a cancel).
    @exclusivity(unchecked) private var failure: CourierError?
    /// The error code of the server's RST_STREAM, if it sent one.
    @exclusivity(unchecked) var resetByServer: UInt32?
    /// END_STREAM arrived and the body is complete.
    @exclusivity(unchecked) private var completed = false
    /// The stream closed while the consumer still held back bytes: reported on resume.
    @exclusivity(unchecked) private var endHeld = false
    @exclusivity(unchecked) private var reported = false
    /// DATA bytes received while the consumer was paused: their window reopens on resume.
    @exclusivity(unchecked) private var unconsumed = 0
    // The request body.
    @exclusivity(unchecked) private var bytesBody: [UInt8] = []
    @exclusivity(unchecked) private var bytesOffset = 0
    @exclusivity(unchecked) private var source: (any BodySource)?
    @exclusivity(unchecked) private var leftover: [UInt8] = []
    @exclusivity(unchecked) private var leftoverOffset = 0
    @exclusivity(unchecked) private var bodySent: UInt64 = 0

    init(connection: HTTP2Connection, transfer: Transfer, now: UInt64) {
        self.connection = connection
        self.transfer = transfer
        let timeouts = transfer._options.timeouts
        machine = HTTP2StreamStateMachine(now: now, totalDeadline: transfer.machine.totalDeadline,
                                          firstByteLimit: timeouts.firstByte?.millisecondsRoundedUp ?? .max,
                                          idleLimit: timeouts.idle?.millisecondsRoundedUp ?? .max)
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
        } else if id > 0, connection.streams[id] === self {
            connection.streams[id] = nil
            if connection.lastStream === self { connection.lastStream = nil }
            connection.session.reset(streamID: id, errorCode: UInt32(NGHTTP2_CANCEL.rawValue))
        }
        finish(.failure(reason, replay: false))
        connection.flush()
    }

    package func pauseReadingForConsumer() {
        machine.consumerPaused(true, now: connection.nowMillis)
    }

    package func resumeReadingForConsumer() {
        guard !reported else { return }
        connection.resume(self)
    }

    /// Reads land in the loop's buffer and go through nghttp2: nothing to lend.
    package func offerReadLanding(_ landing: ReadLanding, leaseTaker: ReadLeaseTaker?) {}

    // MARK: - The request

    /// Why `submit` sent nothing, when the request itself is at fault (its body cannot be read).
    var submitFailure: CourierError? { id == 0 ? failure : nil }

    /// Submits the request; its stream id, or nil when nghttp2 has none left.
    func submit() -> Int32? {
        let method = transfer._method
        var hasBody = transfer.requestBodyChunked || transfer.requestBodyLength > 0
        switch transfer._body {
        case .empty:
            hasBody = false
        case .bytes(let body):
            bytesBody = body
        case .file, .multipart, .stream:
            switch transfer._body.makeSource(length: transfer.requestBodyLength) {
            case .success(let made)?:
                source = made
                made.wake = { [unowned(unsafe) self] in
                    guard !self.reported, self.id > 0 else { return }
                    self.connection.session.resumeBody(streamID: self.id)
                    self.connection.flush()
                }
            case .failure(let error)?:
                failure = error
                return nil
            case nil:
                hasBody = false
            }
        }
        let length = transfer.requestBodyChunked ? nil : RequestEncoder.contentLength(for: method, bodyLength: transfer.requestBodyLength)
        connection.requestBlock.encode(method: method, scheme: transfer._authority.scheme == .https ? "https" : "http",
                                       authority: connection.authority, path: transfer._path, query: transfer._query,
                                       headers: transfer._headers, contentLength: length,
                                       acceptEncoding: transfer._options.decompress && !transfer.userSetAcceptEncoding)
        guard let streamID = connection.session.submitRequest(connection.requestBlock, hasBody: hasBody) else { return nil }
        id = streamID
        if !hasBody { requestSent() }
        return streamID
    }

    private func requestSent() {
        machine.requestSent(now: connection.nowMillis)
        transfer.metrics.requestSent = monotonicNanos()
    }

    /// nghttp2 wants body bytes: from memory, or from the source (a piece it gave that does not
    /// fit waits in `leftover`).
    func pullBody(into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyPull {
        // A body of announced length ends at that length, and is an error when its source ends
        // before it or would give more (the Content-Length sent would be a lie).
        let announced = transfer.requestBodyChunked ? nil : transfer.requestBodyLength
        let room = announced.map { Int(min(UInt64(buffer.count), $0 - bodySent)) } ?? buffer.count
        let buffer = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room])
        var written = 0
        if bytesBody.count > 0 {
            written = min(buffer.count, bytesBody.count - bytesOffset)
            bytesBody.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + bytesOffset, byteCount: written) }
            bytesOffset += written
            return bodyProgress(written, end: bytesOffset == bytesBody.count)
        }
        guard let source else { return bodyProgress(0, end: true) }
        if leftoverOffset < leftover.count {
            written = min(buffer.count, leftover.count - leftoverOffset)
            leftover.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + leftoverOffset, byteCount: written) }
            leftoverOffset += written
            return bodyProgress(written, end: false)
        }
        switch source.read() {
        case .bytes(let piece):
            written = min(buffer.count, piece.count)
            buffer.baseAddress!.copyMemory(from: piece.baseAddress!, byteCount: written)
            if written < piece.count {
                leftover = Array(UnsafeRawBufferPointer(rebasing: piece[written...]))
                leftoverOffset = 0
            }
            return bodyProgress(written, end: false)
        case .array(let piece):
            written = min(buffer.count, piece.count)
            piece.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: written) }
            if written < piece.count {
                leftover = Array(piece[written...])
                leftoverOffset = 0
            }
            return bodyProgress(written, end: false)
        case .end:
            source.close()
            self.source = nil
            if let announced, bodySent < announced {
                failure = CourierError(.fileRead, "the body ended \(announced - bodySent) bytes before its announced length")
                return .failed
            }
            return bodyProgress(0, end: true)
        case .pending:
            return .deferred
        case .failed(let error):
            failure = error
            return .failed
        }
    }

    private func bodyProgress(_ count: Int, end: Bool) -> HTTP2BodyPull {
        bodySent += UInt64(count)
        transfer.metrics.bytesSent &+= UInt64(count)
        transfer.requestBodyBytesSent = bodySent
        transfer.requestBodyWireBytes = bodySent
        if transfer.reportsProgress, count > 0 || end { transfer.sentRequestBytes(count, nowMillis: connection.nowMillis, isLast: end) }
        let complete = end || (!transfer.requestBodyChunked && bodySent == transfer.requestBodyLength && count > 0)
        if complete {
            source?.close()
            source = nil
            requestSent()
        }
        return .bytes(count, end: complete)
    }

    // MARK: - The response

    func headerField(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool {
        headBytes += name.count + value.count + 32
        let limits = transfer._options.limits
        if headBytes > limits.maxHeaderBytes {
            failure = CourierError(.headerBytesExceeded, "over \(limits.maxHeaderBytes) bytes")
            return false
        }
        if name.first == UInt8(ascii: ":") {
            if !finalHeadSeen, name.elementsEqual(":status".utf8) {
                var code = 0
                for byte in value { code = code * 10 + Int(byte &- 48) }
                status = code
            }
            return true
        }
        if fields.count >= limits.maxHeaderCount {
            failure = CourierError(.headerCountExceeded, "over \(limits.maxHeaderCount) fields")
            return false
        }
        fields.appendField(name: name, value: value)
        return true
    }

    func headersEnded(endStream: Bool, now: UInt64) {
        machine.responseFrame(now: now)
        if transfer.metrics.firstByte == 0 { transfer.metrics.firstByte = monotonicNanos() }
        if finalHeadSeen {
            transfer.trailers = fields
        } else if status < 200 {
            // An informational head (103 Early Hints; nghttp2 refuses 101 in HTTP/2).
            fields = HTTPHeaders()
            headBytes = 0
            return
        } else {
            finalHeadSeen = true
            machine.headReceived(now: now)
            // (The silence limit now applies: it may fall before the first-byte deadline armed.)
            connection.arm(machine.nextDeadline)
            var head = ResponseHead(status: status, versionMinor: 0, reason: "", headers: fields)
            head.versionMajor = 2
            let contentLength = fields.withValueBytes(of: "content-length") { Self.decimal($0) } ?? nil
            fields = HTTPHeaders()
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
        transfer.metrics.completedAt = monotonicNanos()
        if let error = transfer.receiveBody(bytes, nowMillis: now) {
            abort(error)
            return
        }
        if transfer.pausedByConsumer {
            unconsumed += bytes.count
        } else {
            connection.session.consumed(streamID: id, count: bytes.count)
        }
    }

    /// END_STREAM arrived: the body is complete unless the transfer finds it short.
    func responseEnded() {
        guard failure == nil, !completed else { return }
        completed = true
        transfer.metrics.completedAt = monotonicNanos()
    }

    /// The consumer can take more: deliver what was held, open the window again, and report an
    /// end that waited for it.
    func resumed(now: UInt64) {
        machine.consumerPaused(false, now: now)
        if let error = transfer.deliverHeldBody() {
            abort(error)
            return
        }
        guard !transfer.isHoldingBody else { return }
        if unconsumed > 0, !endHeld {
            connection.session.consumed(streamID: id, count: unconsumed)
        }
        unconsumed = 0
        if endHeld {
            endHeld = false
            connection.heldEnds.removeAll { $0 === self }
            finishClosed(errorCode: 0)
        }
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
        machine.closed()
        if errorCode == 0, completed, failure == nil, transfer.isHoldingBody {
            endHeld = true
            connection.heldEnds.append(self)
            return
        }
        finishClosed(errorCode: errorCode)
    }

    private func finishClosed(errorCode: UInt32) {
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
