import CNGHTTP2

/// An HTTP/2 stream's request: its header block, and its body fed to nghttp2 as the windows
/// and the send rate allow, held to its announced length.
extension HTTP2Stream {
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
                                       acceptEncoding: transfer._options.decompress && !transfer.userSetAcceptEncoding,
                                       expectContinue: hasBody && transfer.requestExpectsContinueOverHTTP2, priority: transfer._options.priority,
                                       mayHaveHost: transfer.userSetHost)
        guard let streamID = connection.session.submitRequest(connection.requestBlock, hasBody: hasBody) else { return nil }
        id = streamID
        if hasBody, transfer.requestExpectsContinueOverHTTP2 {
            // The body waits for the 100, or the continue timeout (curl's --expect100-timeout).
            continueDeadline = connection.nowMillis &+ transfer._options.continueTimeout.millisecondsRoundedUp
            machine.bodyHeld(.continueWait)
            connection.arm(continueDeadline)
        }
        if !hasBody { requestSent() }
        return streamID
    }

    func requestSent() {
        machine.requestSent(now: connection.nowMillis)
        transfer.metrics.requestSent = monotonicNanos()
    }

    /// nghttp2 wants body bytes: from memory, or from the source (a piece it gave that does not
    /// fit waits in `leftover`).
    func pullBody(into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyPull {
        // (The body waits for a 100; one refused by a final answer never goes.)
        if continueDeadline != .max || bodyRefused { return .deferred }
        // A body of announced length ends at that length, and is an error when its source ends
        // before it or would give more (the Content-Length sent would be a lie).
        let announced = transfer.requestBodyChunked ? nil : transfer.requestBodyLength
        var room = announced.map { Int(min(UInt64(buffer.count), $0 - bodySent)) } ?? buffer.count
        if var pacer = sendPacer, room > 0 {
            // A piece goes when it is on the send rate's schedule; the timer resumes the body.
            room = min(room, pacer.pieceSize)
            let mayGo = pacer.mayGo(size: room, handed: bodySent, now: connection.nowMillis)
            sendPacer = pacer
            guard mayGo else {
                connection.arm(pacer.resumeAt)
                return .deferred
            }
        }
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
            machine.bodyHeld(.producer)
            return .deferred
        case .failed(let error):
            failure = error
            return .failed
        }
    }

    private func bodyProgress(_ count: Int, end: Bool) -> HTTP2BodyPull {
        if count > 0 { bodyMoved() }
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

    // MARK: - 100-continue

    /// An informational head arrived: a 100 lets the waiting body go.
    func informationalHead(status: Int) {
        if status == 100, continueDeadline != .max { sendBodyNow() }
    }

    /// The final head arrived while the body still waited for a 100: the server answered
    /// without it (a 401, 413, a redirect), so the body is not sent; once the response has
    /// ended, the stream is reset with NO_ERROR (RFC 9113 section 8.1).
    func finalHeadBeforeContinue() {
        guard continueDeadline != .max else { return }
        continueDeadline = .max
        bodyRefused = true
    }

    /// The continue timeout passed without a 100: the body goes (curl's behaviour).
    func continueTimerFired(now: UInt64) {
        if continueDeadline != .max, now >= continueDeadline { sendBodyNow() }
    }

    /// The body went (or may go) again: its send silence starts over, and the timer learns of
    /// the deadline a hold had lifted.
    private func bodyMoved() {
        let held = machine.bodyHold != nil
        machine.bodyProgress(now: connection.nowMillis)
        if held { connection.arm(machine.nextDeadline) }
    }

    private func sendBodyNow() {
        bodyMoved()
        continueDeadline = .max
        guard id > 0, !reported else { return }
        connection.session.resumeBody(streamID: id)
    }
}
