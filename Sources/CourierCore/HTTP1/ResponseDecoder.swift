import CLLHTTP

/// Receives what the decoder finds, on the loop thread, in order: one head, body parts, complete.
package protocol ResponseDecoderDelegate: AnyObject {
    /// The final head arrived (1xx interim responses are consumed silently). Return an error to
    /// stop (a redirect that must not be followed, for instance).
    func decoderDidReceiveHead(_ head: consuming ResponseHead, contentLength: UInt64?) -> CourierError?
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

    /// A header name or value as llhttp reported it: a pointer into the buffer being parsed.
    package struct Span {
        var isValue: Bool
        var start: UnsafePointer<UInt8>
        var count: Int
    }

    /// Spans in a block on the stack of `feed` (spans never outlive one feed: they are copied or
    /// materialized before it returns), so an idle decoder holds no span memory at all. Appending is
    /// a store and a count; a head with more spans than fit takes the incremental path.
    /// Memory for spans, lent to `feed`: the runtime keeps one for all its connections (they are
    /// parsed one at a time, on the loop thread), so pooled connections own none.
    package final class SpanScratch {
        let base = UnsafeMutablePointer<Span>.allocate(capacity: SpanList.capacity)
        package init() {}
        deinit { base.deallocate() }
    }

    fileprivate struct SpanList {
        static let capacity = 96
        var base: UnsafeMutablePointer<Span>?
        var count = 0
        var isEmpty: Bool { count == 0 }
        var isFull: Bool { count == SpanList.capacity || base == nil }
        subscript(index: Int) -> Span { base![index] }
        mutating func append(_ span: Span) {
            (base! + count).initialize(to: span)
            count += 1
        }
        mutating func removeAll() { count = 0 }
    }

    /// While a head lies within one `feed` (the usual case), callbacks only record spans and the
    /// head is copied once, with one memcpy, when it is complete. A head that continues into the
    /// next read is copied ("materialized") before the read buffer is reused, and the rest of it is
    /// appended piece by piece as before.
    @exclusivity(unchecked) private var spans = SpanList()
    @exclusivity(unchecked) private var spanMode = true
    /// The reason phrase while it lies in the buffer being parsed.
    @exclusivity(unchecked) private var reasonSpan: UnsafeBufferPointer<UInt8>?

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
        if !trailers.isEmpty { trailers = HTTPHeaders() }
        resetHead()
    }

    /// Parses bytes. On `.complete` the caller decides what to do with the `count - consumed` bytes
    /// left over (on a connection without pipelining, they are an error).
    package func feed(_ bytes: UnsafeRawBufferPointer) -> Progress {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .needMore }
        receivedAnything = true
        return withUnsafeTemporaryAllocation(of: Span.self, capacity: SpanList.capacity) { block in
            spans = SpanList(base: block.baseAddress, count: 0)
            defer { spans = SpanList() }
            return execute(base.assumingMemoryBound(to: CChar.self), bytes.count)
        }
    }

    /// `feed` with span memory lent by the caller (the connection's runtime).
    package func feed(_ bytes: UnsafeRawBufferPointer, scratch: SpanScratch) -> Progress {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .needMore }
        receivedAnything = true
        spans = SpanList(base: scratch.base, count: 0)
        defer { spans = SpanList() }
        return execute(base.assumingMemoryBound(to: CChar.self), bytes.count)
    }

    private func execute(_ chars: UnsafePointer<CChar>, _ count: Int) -> Progress {
        let err = llhttp_execute(parser, chars, count)
        switch err {
        case HPE_OK:
            // The read buffer is about to be reused: keep what the head has so far.
            if spanMode, !headDelivered, !spans.isEmpty || reasonSpan != nil { materializeSpans() }
            return .needMore
        case HPE_PAUSED:
            let position = llhttp_get_error_pos(parser)
            let consumed = position.map { $0 - chars } ?? count
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
        // Only what a previous message left behind is reset: rebuilding empty values costs
        // retains and releases on every response.
        if !head.headers.isEmpty { head.headers = HTTPHeaders() }
        head.status = 0
        building = .none
        headBytes = 0
        fieldCount = 0
        reasonBytes.removeAll(keepingCapacity: true)
        spans.removeAll()
        spanMode = true
        reasonSpan = nil
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

    /// Runs `body` with the decoder behind `parser->data`, without a retain/release pair: the
    /// decoder is alive for the whole `llhttp_execute` call that invokes the callback.
    @inline(__always)
    private static func with<R>(_ p: UnsafeMutablePointer<llhttp_t>?, _ body: (ResponseDecoder) -> R) -> R {
        Unmanaged<ResponseDecoder>.fromOpaque(p!.pointee.data)._withUnsafeGuaranteedRef(body)
    }

    /// One settings table for every decoder; llhttp keeps a pointer to it for the parser's life.
    /// Written once before any parser uses it, then only read: safe to share across threads.
    nonisolated(unsafe) private static let settings: UnsafeMutablePointer<llhttp_settings_t> = {
        let s = UnsafeMutablePointer<llhttp_settings_t>.allocate(capacity: 1)
        llhttp_settings_init(s)
        s.pointee.on_message_begin = { p in
            ResponseDecoder.with(p) { d in
                d.resetHead()
                return 0
            }
        }
        s.pointee.on_status = { p, at, length in
            ResponseDecoder.with(p) { d in
                guard d.countHeadBytes(length) else { return -1 }
                if d.spanMode, d.reasonSpan == nil, d.reasonBytes.isEmpty, let start = UnsafeRawPointer(at)?.assumingMemoryBound(to: UInt8.self) {
                    d.reasonSpan = UnsafeBufferPointer(start: start, count: length)
                } else {
                    d.reasonBytes.append(contentsOf: ResponseDecoder.bytes(at, length))
                }
                return 0
            }
        }
        s.pointee.on_status_complete = { p in
            ResponseDecoder.with(p) { d in
                d.statusLineDone = true
                return 0
            }
        }
        s.pointee.on_header_field = { p, at, length in
            ResponseDecoder.with(p) { d in d.headerField(at, length) }
        }
        s.pointee.on_header_value = { p, at, length in
            ResponseDecoder.with(p) { d in d.headerValue(at, length) }
        }
        s.pointee.on_headers_complete = { p in
            ResponseDecoder.with(p) { d in d.headersComplete() }
        }
        s.pointee.on_body = { p, at, length in
            ResponseDecoder.with(p) { d in d.body(at, length) }
        }
        s.pointee.on_message_complete = { p in
            ResponseDecoder.with(p) { d in
                if d.building == .value { d.endField() }
                // A 1xx interim response: forget it and parse the real one that follows.
                return d.interim ? 0 : Int32(HPE_PAUSED.rawValue)
            }
        }
        return s
    }()

    @inline(__always)
    private static func bytes(_ at: UnsafePointer<CChar>?, _ length: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafeRawPointer(at)?.assumingMemoryBound(to: UInt8.self), count: length)
    }

    private func headerField(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        statusLineDone = true
        guard countHeadBytes(length) else { return -1 }
        if spanMode, !headDelivered, spans.isFull { materializeSpans() }
        if spanMode, !headDelivered, let start = UnsafeRawPointer(at)?.assumingMemoryBound(to: UInt8.self) {
            // Within one feed llhttp reports each name once, so every name span starts a field.
            fieldCount += 1
            if fieldCount > limits.maxHeaderCount { return tooManyFields() }
            spans.append(Span(isValue: false, start: start, count: length))
            return 0
        }
        return appendFieldBytes(Self.bytes(at, length))
    }

    private func headerValue(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        guard countHeadBytes(length) else { return -1 }
        if spanMode, !headDelivered, spans.isFull { materializeSpans() }
        if spanMode, !headDelivered, let start = UnsafeRawPointer(at)?.assumingMemoryBound(to: UInt8.self) {
            spans.append(Span(isValue: true, start: start, count: length))
            return 0
        }
        appendValueBytes(Self.bytes(at, length))
        return 0
    }

    /// Incremental building: a name piece (a new field unless the name continues).
    private func appendFieldBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        if building != .name {
            if building == .value { endField() }
            fieldCount += 1
            if fieldCount > limits.maxHeaderCount { return tooManyFields() }
            if headDelivered {
                trailers.beginField()
            } else {
                if fieldCount == 1 { head.headers.reserveCapacity(bytes: 768, fields: 16) }
                head.headers.beginField()
            }
            building = .name
        }
        if headDelivered { trailers.appendPartial(bytes) } else { head.headers.appendPartial(bytes) }
        return 0
    }

    /// Incremental building: a value piece.
    private func appendValueBytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        if building == .name {
            if headDelivered { trailers.beginValue() } else { head.headers.beginValue() }
            building = .value
        }
        if headDelivered { trailers.appendPartial(bytes) } else { head.headers.appendPartial(bytes) }
    }

    private func tooManyFields() -> Int32 {
        pendingError = CourierError(.headerCountExceeded, "more than \(limits.maxHeaderCount) fields")
        return -1
    }

    /// Copies the spans recorded so far into the head and continues incrementally.
    private func materializeSpans() {
        spanMode = false
        if let reasonSpan {
            reasonBytes.append(contentsOf: reasonSpan)
            self.reasonSpan = nil
        }
        let recorded = spans.count
        spans.removeAll()
        fieldCount = 0
        for index in 0..<recorded {
            let span = spans[index]
            let bytes = UnsafeBufferPointer(start: span.start, count: span.count)
            if span.isValue { appendValueBytes(bytes) } else { _ = appendFieldBytes(bytes) }
        }
    }

    /// Builds the head's fields from spans that all lie in the current buffer: one copy of the
    /// region from the first name to the last value, fields indexed into it.
    private func headersFromSpans() -> HTTPHeaders {
        guard spans.count > 0 else { return HTTPHeaders() }
        let first = spans[0]
        let last = spans[spans.count - 1]
        let regionStart = first.start
        let regionCount = (last.start - regionStart) + last.count
        // (Array(buffer) and reserve-then-append stay on specialized code paths; building arrays
        // with `unsafeUninitializedCapacity` looks up generic metadata at run time per call.)
        let storage = Array(UnsafeBufferPointer(start: regionStart, count: regionCount))
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(fieldCount)
        var index = 0
        while index < spans.count {
            let name = spans[index]
            let nameStart = name.start - regionStart
            var valueStart = nameStart + name.count
            var valueEnd = valueStart
            index += 1
            if index < spans.count, spans[index].isValue {
                valueStart = spans[index].start - regionStart
                while index < spans.count, spans[index].isValue {
                    valueEnd = (spans[index].start - regionStart) + spans[index].count
                    index += 1
                }
            }
            // Optional whitespace around a value is not part of it (RFC 9110 section 5.5).
            while valueEnd > valueStart, regionStart[valueEnd - 1] == 0x20 || regionStart[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            while valueStart < valueEnd, regionStart[valueStart] == 0x20 || regionStart[valueStart] == 0x09 { valueStart += 1 }
            fields.append(HTTPHeaders.Field(nameStart: UInt32(nameStart), nameEnd: UInt32(nameStart + name.count),
                                            valueStart: UInt32(valueStart), valueEnd: UInt32(valueEnd)))
        }
        return HTTPHeaders(received: storage, fields: fields)
    }

    private func body(_ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        bodyBytes &+= UInt64(length)
        if let max = limits.maxBodyBytes, bodyBytes > max {
            pendingError = CourierError(.bodyTooLarge, "more than \(max) bytes")
            return -1
        }
        if let delegate, let error = delegate.decoderDidReceiveBody(UnsafeRawBufferPointer(start: at, count: length)) {
            pendingError = error
            return -1
        }
        return 0
    }

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
        if spanMode, !spans.isEmpty {
            head.headers = headersFromSpans()
            spans.removeAll()
        }
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
        head.reason = reasonSpan.map { String(decoding: $0, as: UTF8.self) } ?? String(decoding: reasonBytes, as: UTF8.self)
        headDelivered = true
        building = .none
        let flags = parser.pointee.flags
        let hasLength = flags & UInt16(F_CONTENT_LENGTH.rawValue) != 0 && flags & UInt16(F_CHUNKED.rawValue) == 0
        let noBody = !expectsBody || status == 204 || status == 304
        // Moved to the delegate, not copied; `head` is left empty for the next message.
        var delivered = ResponseHead()
        swap(&delivered, &head)
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
