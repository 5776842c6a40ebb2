import CLLHTTP

/// Receives what the decoder finds, on the loop thread, in order: one head, body parts, complete.
package protocol ResponseDecoderDelegate: AnyObject {
    /// The final head arrived (1xx interim responses are consumed silently). Return an error to
    /// stop (a redirect that must not be followed, for instance).
    func decoderDidReceiveHead(_ head: ResponseHead, contentLength: UInt64?) -> CourierError?
    /// Body bytes, already de-chunked; valid only during the call. Return an error to stop.
    func decoderDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> CourierError?
}

/// An HTTP/1.1 response parser on llhttp that copies header bytes once and body bytes never.
///
/// llhttp does the byte-level work (status line, header syntax, Content-Length and chunked framing,
/// keep-alive rules). This type adds what a client needs on top, following SwiftNIO's decoder:
/// - it tells llhttp there is no body for HEAD, 1xx, 204 and 304 (RFC 9110 sections 6.4.1, 15.3.5,
///   15.4.5), which llhttp cannot know for HEAD and gets wrong for a 204 carrying Content-Length;
/// - it skips 1xx interim responses and rejects 101 (Courier never asks to upgrade);
/// - it enforces the size limits inside the callbacks, before anything grows;
/// - it pauses at the end of each message, so bytes that follow a response are seen and can be
///   rejected rather than silently parsed as the next response.
///
/// The decoder is reused for every request on a connection; `begin(expectsBody:)` arms it.
package final class ResponseDecoder {
    /// Result of feeding bytes.
    package enum Progress: Equatable {
        /// Every byte was consumed and the message is not complete yet.
        case needMore
        /// The message ended after `consumed` bytes of this feed; `keepAlive` is llhttp's verdict
        /// combined with the framing (close-delimited bodies can never be kept alive).
        case complete(consumed: Int, keepAlive: Bool)
        /// The response is invalid.
        case failed(CourierError)
    }

    @exclusivity(unchecked) package var limits: ResponseLimits
    @exclusivity(unchecked) package unowned(unsafe) var delegate: ResponseDecoderDelegate?

    /// The head being built; moved out to the delegate when complete.
    @exclusivity(unchecked) private var head = ResponseHead()
    @exclusivity(unchecked) package private(set) var trailers = HTTPHeaders()
    @exclusivity(unchecked) private var building: FieldState = .none
    @exclusivity(unchecked) private var headBytes = 0
    @exclusivity(unchecked) private var fieldCount = 0
    @exclusivity(unchecked) private var reasonBytes: [UInt8] = []
    @exclusivity(unchecked) private var expectsBody = true
    @exclusivity(unchecked) private var interim = false
    @exclusivity(unchecked) private var statusLineDone = false
    @exclusivity(unchecked) package private(set) var headDelivered = false
    @exclusivity(unchecked) package private(set) var bodyBytes: UInt64 = 0
    /// Whether any byte of the current response arrived (tells "empty reply" from "reset").
    @exclusivity(unchecked) package private(set) var receivedAnything = false
    @exclusivity(unchecked) private var pendingError: CourierError?
    private let parser: UnsafeMutablePointer<llhttp_t>

    private enum FieldState { case none, name, value }

    package init(limits: ResponseLimits = ResponseLimits()) {
        self.limits = limits
        parser = .allocate(capacity: 1)
        llhttp_init(parser, HTTP_RESPONSE, ResponseDecoder.settings)
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        parser.deallocate()
    }

    /// Prepares for the response to the next request. `expectsBody` is false for HEAD.
    package func begin(expectsBody: Bool) {
        self.expectsBody = expectsBody
        headDelivered = false
        receivedAnything = false
        bodyBytes = 0
        pendingError = nil
        trailers = HTTPHeaders()
        resetHead()
    }

    /// Parses bytes. On `.complete` the caller decides what to do with the `count - consumed` bytes
    /// left over (on a connection without pipelining, they are an error).
    package func feed(_ bytes: UnsafeRawBufferPointer) -> Progress {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .needMore }
        receivedAnything = true
        let chars = base.assumingMemoryBound(to: CChar.self)
        let err = llhttp_execute(parser, chars, bytes.count)
        switch err {
        case HPE_OK:
            return .needMore
        case HPE_PAUSED:
            let position = llhttp_get_error_pos(parser)
            let consumed = position.map { $0 - chars } ?? bytes.count
            llhttp_resume(parser)
            return .complete(consumed: consumed, keepAlive: llhttp_should_keep_alive(parser) != 0)
        default:
            return .failed(error(for: err))
        }
    }

    /// The connection reached end of stream. A close-delimited body completes here; anything else
    /// unfinished is an error the caller classifies (nothing received, head only, part of a body).
    package func finish() -> Progress {
        let err = llhttp_finish(parser)
        switch err {
        case HPE_OK:
            return .failed(endOfStreamError())
        case HPE_PAUSED:
            llhttp_resume(parser)
            return .complete(consumed: 0, keepAlive: false)
        default:
            return .failed(endOfStreamError())
        }
    }

    /// What an unexpected end of stream means at this point of the response.
    package func endOfStreamError() -> CourierError {
        if !receivedAnything { return CourierError(.emptyReply) }
        if !headDelivered { return CourierError(.connectionReset, "connection closed inside the response head") }
        return CourierError(.truncatedBody, "after \(bodyBytes) body bytes")
    }

    /// Resets llhttp after an error so the decoder can be reused (errors are sticky otherwise).
    package func reset() {
        llhttp_init(parser, HTTP_RESPONSE, ResponseDecoder.settings)
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        begin(expectsBody: true)
    }

    private func resetHead() {
        head = ResponseHead()
        building = .none
        headBytes = 0
        fieldCount = 0
        reasonBytes.removeAll(keepingCapacity: true)
        interim = false
        statusLineDone = false
    }

    private func error(for err: llhttp_errno_t) -> CourierError {
        if let pendingError { return pendingError }
        let reason = llhttp_get_error_reason(parser).map { String(cString: $0) }
        switch err {
        case HPE_INVALID_CONTENT_LENGTH:
            return CourierError(.badContentLength, reason)
        case HPE_UNEXPECTED_CONTENT_LENGTH:
            return CourierError(.ambiguousFraming, reason)
        case HPE_INVALID_CHUNK_SIZE:
            return CourierError(.badChunk, reason)
        case HPE_INVALID_TRANSFER_ENCODING:
            return CourierError(.ambiguousFraming, reason)
        case HPE_CLOSED_CONNECTION:
            return CourierError(.unsolicitedData, reason)
        case HPE_PAUSED_UPGRADE:
            return CourierError(.unexpectedUpgrade)
        case HPE_INVALID_VERSION, HPE_INVALID_STATUS:
            return CourierError(.badStatusLine, reason)
        default:
            if !headDelivered { return CourierError(statusLineDone ? .badHeader : .badStatusLine, reason) }
            return CourierError(.badChunk, reason)
        }
    }

    // MARK: - llhttp callbacks (C function pointers; `self` comes back through `parser->data`)

    @inline(__always)
    private static func decoder(_ p: UnsafeMutablePointer<llhttp_t>?) -> ResponseDecoder {
        Unmanaged<ResponseDecoder>.fromOpaque(p!.pointee.data).takeUnretainedValue()
    }

    /// One settings table for every decoder; llhttp keeps a pointer to it for the parser's life.
    /// Written once before any parser uses it, then only read: safe to share across threads.
    nonisolated(unsafe) private static let settings: UnsafeMutablePointer<llhttp_settings_t> = {
        let s = UnsafeMutablePointer<llhttp_settings_t>.allocate(capacity: 1)
        llhttp_settings_init(s)
        s.pointee.on_message_begin = { p in
            let d = ResponseDecoder.decoder(p)
            d.resetHead()
            return 0
        }
        s.pointee.on_status = { p, at, length in
            let d = ResponseDecoder.decoder(p)
            guard d.countHeadBytes(length) else { return -1 }
            d.reasonBytes.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        s.pointee.on_status_complete = { p in
            ResponseDecoder.decoder(p).statusLineDone = true
            return 0
        }
        s.pointee.on_header_field = { p, at, length in
            let d = ResponseDecoder.decoder(p)
            d.statusLineDone = true
            guard d.countHeadBytes(length) else { return -1 }
            if d.building != .name {
                if d.building == .value { d.endField() }
                d.fieldCount += 1
                if d.fieldCount > d.limits.maxHeaderCount {
                    d.pendingError = CourierError(.headerCountExceeded, "more than \(d.limits.maxHeaderCount) fields")
                    return -1
                }
                if d.headDelivered {
                    d.trailers.beginField()
                } else {
                    if d.fieldCount == 1 {
                        // One allocation for the bytes and one for the index, instead of the
                        // doubling steps of a dozen fields.
                        d.head.headers.reserveCapacity(bytes: 768, fields: 16)
                    }
                    d.head.headers.beginField()
                }
                d.building = .name
            }
            let bytes = UnsafeRawBufferPointer(start: at, count: length)
            if d.headDelivered { d.trailers.appendPartial(bytes) } else { d.head.headers.appendPartial(bytes) }
            return 0
        }
        s.pointee.on_header_value = { p, at, length in
            let d = ResponseDecoder.decoder(p)
            guard d.countHeadBytes(length) else { return -1 }
            if d.building == .name {
                if d.headDelivered { d.trailers.beginValue() } else { d.head.headers.beginValue() }
                d.building = .value
            }
            let bytes = UnsafeRawBufferPointer(start: at, count: length)
            if d.headDelivered { d.trailers.appendPartial(bytes) } else { d.head.headers.appendPartial(bytes) }
            return 0
        }
        s.pointee.on_headers_complete = { p in
            let d = ResponseDecoder.decoder(p)
            return d.headersComplete()
        }
        s.pointee.on_body = { p, at, length in
            let d = ResponseDecoder.decoder(p)
            d.bodyBytes &+= UInt64(length)
            if let max = d.limits.maxBodyBytes, d.bodyBytes > max {
                d.pendingError = CourierError(.bodyTooLarge, "more than \(max) bytes")
                return -1
            }
            if let delegate = d.delegate, let error = delegate.decoderDidReceiveBody(UnsafeRawBufferPointer(start: at, count: length)) {
                d.pendingError = error
                return -1
            }
            return 0
        }
        s.pointee.on_message_complete = { p in
            let d = ResponseDecoder.decoder(p)
            if d.building == .value { d.endField() }
            if d.interim {
                // A 1xx interim response: forget it and parse the real one that follows.
                return 0
            }
            return Int32(HPE_PAUSED.rawValue)
        }
        return s
    }()

    private func countHeadBytes(_ length: Int) -> Bool {
        headBytes += length
        if headBytes > limits.maxHeaderBytes {
            pendingError = CourierError(.headerBytesExceeded, "more than \(limits.maxHeaderBytes) bytes")
            return false
        }
        return true
    }

    private func endField() {
        if headDelivered { trailers.endField() } else { head.headers.endField() }
        building = .none
    }

    /// Returns llhttp's `on_headers_complete` verdict: 0 to read a body, 1 for none, -1 on error.
    private func headersComplete() -> Int32 {
        if building == .value { endField() }
        let status = Int(llhttp_get_status_code(parser))
        guard status >= 100, status <= 999 else {
            // llhttp accepts any digit count; RFC 9110 section 15 says three.
            pendingError = CourierError(.badStatusLine, "status \(status) is not three digits")
            return -1
        }
        if status == 101 {
            pendingError = CourierError(.unexpectedUpgrade)
            return -1
        }
        if status < 200 {
            interim = true
            return 1
        }
        head.status = status
        head.versionMinor = llhttp_get_http_minor(parser)
        head.reason = String(decoding: reasonBytes, as: UTF8.self)
        headDelivered = true
        building = .none
        let flags = parser.pointee.flags
        let hasLength = flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0 && flags & UInt16(F_CHUNKED.rawValue) == 0
        let noBody = !expectsBody || status == 204 || status == 304
        let delivered = head
        head = ResponseHead()
        if let error = delegate?.decoderDidReceiveHead(delivered, contentLength: noBody ? 0 : (hasLength ? parser.pointee.content_length : nil)) {
            pendingError = error
            return -1
        }
        if let max = limits.maxBodyBytes, hasLength, !noBody, parser.pointee.content_length > max {
            pendingError = CourierError(.bodyTooLarge, "Content-Length \(parser.pointee.content_length) exceeds \(max)")
            return -1
        }
        return noBody ? 1 : 0
    }
}
