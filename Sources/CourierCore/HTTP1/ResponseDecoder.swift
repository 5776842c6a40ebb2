import CHTTPParser
import CLLHTTP

/// Receives what the decoder finds, on the loop thread, in order: one head, body parts, complete.
package protocol ResponseDecoderDelegate: AnyObject {
    /// The final head arrived (1xx interim responses are consumed silently). Return an error to
    /// stop (a redirect that must not be followed, for instance).
    func decoderDidReceiveHead(_ head: consuming ResponseHead, contentLength: UInt64?) -> CourierError?
    /// Body bytes, already de-chunked; valid only during the call. Return an error to stop.
    func decoderDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> CourierError?
    /// An interim (1xx) response arrived; its head is not kept. (A 100 releases a body held back
    /// for `Expect: 100-continue`.)
    func decoderDidReceiveInformational(status: Int)
}

extension ResponseDecoderDelegate {
    package func decoderDidReceiveInformational(status: Int) {}
}

/// An HTTP/1.1 response parser that copies header bytes once and body bytes never.
///
/// llhttp does the byte-level work of the head (status line, header syntax, Content-Length, the
/// framing rules and keep-alive), with its per-field callbacks kept in C (`CHTTPParser`): Swift
/// sees one call per head and one per body piece. Chunked bodies are decoded by
/// `ChunkedDecoder` (llhttp 8 refuses valid chunk extensions). On top, following SwiftNIO's
/// decoder, this type adds what a client needs:
/// - it tells llhttp there is no body for HEAD, 1xx, 204 and 304 (RFC 9110 sections 6.4.1, 15.3.5,
///   15.4.5), which llhttp cannot know for HEAD and gets wrong for a 204 carrying Content-Length;
/// - it skips 1xx interim responses and rejects 101 (Courier never asks to upgrade);
/// - it enforces the size limits while parsing, before anything grows;
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

    /// Memory a head is recorded in while it is parsed, lent to `feed`: the runtime keeps one for
    /// all its connections (they are parsed one at a time, on the loop thread), so pooled
    /// connections own none. A head that continues into the next read moves into memory the
    /// parser owns.
    package final class SpanScratch {
        /// Fields recorded here when a head has at most this many (more use the parser's memory).
        static let fieldCapacity: UInt32 = 64
        let fields = UnsafeMutablePointer<HTTPHeaders.Field>.allocate(capacity: Int(SpanScratch.fieldCapacity))
        package init() {
            // The C parser writes h1p_field where Swift reads HTTPHeaders.Field: the same four
            // UInt32 in the same order.
            precondition(MemoryLayout<HTTPHeaders.Field>.stride == MemoryLayout<h1p_field>.stride
                && MemoryLayout<HTTPHeaders.Field>.offset(of: \.valueEnd) == MemoryLayout<h1p_field>.offset(of: \.value_end))
        }
        deinit { fields.deallocate() }
    }

    @exclusivity(unchecked) package var limits: ResponseLimits
    @exclusivity(unchecked) package unowned(unsafe) var delegate: ResponseDecoderDelegate?
    /// Trailer fields of the last chunked response.
    @exclusivity(unchecked) package private(set) var trailers = HTTPHeaders()
    @exclusivity(unchecked) package private(set) var headDelivered = false
    /// Body bytes as received (before content decoding, after de-chunking).
    @exclusivity(unchecked) package private(set) var bodyBytes: UInt64 = 0
    /// Whether any byte of the current response arrived (tells "empty reply" from "reset").
    @exclusivity(unchecked) package private(set) var receivedAnything = false
    @exclusivity(unchecked) private var expectsBody = true
    @exclusivity(unchecked) private var pendingError: CourierError?
    /// Set while a chunked body is being decoded (from the end of its head to its last CRLF).
    @exclusivity(unchecked) private var chunked: ChunkedDecoder?
    /// llhttp's keep-alive verdict for a chunked response, taken when its head ended.
    @exclusivity(unchecked) private var chunkedKeepAlive = false
    private let parser: UnsafeMutablePointer<h1p_parser>

    package init(limits: ResponseLimits = ResponseLimits()) {
        self.limits = limits
        parser = .allocate(capacity: 1)
        h1p_init(parser, nil, ResponseDecoder.onHeadersComplete, ResponseDecoder.onBody)
        parser.pointee.context = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        h1p_release(parser)
        parser.deallocate()
    }

    /// Prepares for the response to the next request. `expectsBody` is false for HEAD.
    package func begin(expectsBody: Bool) {
        self.expectsBody = expectsBody
        headDelivered = false
        receivedAnything = false
        bodyBytes = 0
        pendingError = nil
        chunked = nil
        if !trailers.isEmpty { trailers = HTTPHeaders() }
        h1p_begin(parser, UInt32(clamping: limits.maxHeaderCount), UInt64(clamping: limits.maxHeaderBytes))
    }

    /// Parses bytes with span memory of its own (tests; the runtime lends a scratch block).
    package func feed(_ bytes: UnsafeRawBufferPointer) -> Progress {
        let scratch = SpanScratch()
        return feed(bytes, scratch: scratch)
    }

    /// Parses bytes. On `.complete` the caller decides what to do with the `count - consumed` bytes
    /// left over (on a connection without pipelining, they are an error).
    package func feed(_ bytes: UnsafeRawBufferPointer, scratch: SpanScratch) -> Progress {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .needMore }
        receivedAnything = true
        if chunked != nil { return feedChunked(bytes, from: 0) }
        let chars = base.assumingMemoryBound(to: CChar.self)
        let fieldBlock = UnsafeMutableRawPointer(scratch.fields).assumingMemoryBound(to: h1p_field.self)
        let status = h1p_execute(parser, chars, bytes.count, fieldBlock, SpanScratch.fieldCapacity)
        switch status {
        case HPE_OK:
            // The read buffer is about to be reused: keep what the head has so far.
            if !headDelivered, parser.pointee.head_bytes > 0, h1p_stash(parser) != 0 {
                return .failed(CourierError(.noMemory, "keeping a response head"))
            }
            return .needMore
        case HPE_PAUSED:
            let consumed = llhttp_get_error_pos(&parser.pointee.llhttp).map { $0 - chars } ?? bytes.count
            let keepAlive = llhttp_should_keep_alive(&parser.pointee.llhttp) != 0
            llhttp_resume(&parser.pointee.llhttp)
            if chunked != nil {
                chunkedKeepAlive = keepAlive
                return feedChunked(bytes, from: consumed)
            }
            return .complete(consumed: consumed, keepAlive: keepAlive)
        default:
            return .failed(error(for: status))
        }
    }

    private func feedChunked(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> Progress {
        let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
        switch chunked!.feed(rest, body: { piece in body(piece) }) {
        case .needMore:
            return .needMore
        case .complete(let consumed):
            trailers = chunked!.trailers
            chunked = nil
            return .complete(consumed: offset + consumed, keepAlive: chunkedKeepAlive)
        case .failed(let error):
            chunked = nil
            return .failed(error)
        }
    }

    /// The connection reached end of stream. A close-delimited body completes here; anything else
    /// unfinished is an error the caller classifies (nothing received, head only, part of a body).
    package func finish() -> Progress {
        if chunked != nil { return .failed(endOfStreamError()) }
        switch llhttp_finish(&parser.pointee.llhttp) {
        case HPE_PAUSED:
            llhttp_resume(&parser.pointee.llhttp)
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

    /// What the Content-Length body being read still lacks; nil outside such a body (no body yet,
    /// chunked, close-delimited, complete). Asked between reads (llhttp counts `content_length`
    /// down as it consumes the body).
    package var lengthBodyLeft: UInt64? {
        let flags = UInt32(parser.pointee.llhttp.flags)
        let lengthOnly = flags & (F_CONTENT_LENGTH.rawValue | F_CHUNKED.rawValue | F_SKIPBODY.rawValue) == F_CONTENT_LENGTH.rawValue
        guard headDelivered, chunked == nil, lengthOnly else { return nil }
        let left = parser.pointee.llhttp.content_length
        return left > 0 ? left : nil
    }

    /// `count` bytes of that body were read past the decoder (a `ReadLease`): they count as
    /// received, and llhttp expects that many fewer. At least one byte must be left to llhttp,
    /// which ends the message on its last byte as always.
    package func bodyReadElsewhere(_ count: UInt64) {
        guard count > 0 else { return }
        precondition(lengthBodyLeft.map { count < $0 } ?? false, "a lease read past the body's last byte")
        parser.pointee.llhttp.content_length -= count
        bodyBytes &+= count
    }

    /// Resets the parser after an error so the decoder can be reused (errors are sticky otherwise).
    package func reset() {
        h1p_reset(parser)
        begin(expectsBody: true)
    }

    private func error(for status: llhttp_errno_t) -> CourierError {
        switch parser.pointee.limit_error {
        case H1P_HEAD_BYTES:
            return CourierError(.headerBytesExceeded, "more than \(limits.maxHeaderBytes) bytes")
        case H1P_FIELD_COUNT:
            return CourierError(.headerCountExceeded, "more than \(limits.maxHeaderCount) fields")
        case H1P_NO_MEMORY:
            return CourierError(.noMemory, "keeping a response head")
        default:
            break
        }
        if let pendingError { return pendingError }
        let reason = llhttp_get_error_reason(&parser.pointee.llhttp).map { String(cString: $0) }
        switch status {
        case HPE_INVALID_CONTENT_LENGTH:
            return CourierError(.badContentLength, reason)
        case HPE_UNEXPECTED_CONTENT_LENGTH, HPE_INVALID_TRANSFER_ENCODING:
            return CourierError(.ambiguousFraming, reason)
        case HPE_CLOSED_CONNECTION:
            return CourierError(.unsolicitedData, reason)
        case HPE_PAUSED_UPGRADE:
            return CourierError(.unexpectedUpgrade)
        case HPE_INVALID_VERSION, HPE_INVALID_STATUS:
            return CourierError(.badStatusLine, reason)
        default:
            if !headDelivered { return CourierError(parser.pointee.status_done != 0 ? .badHeader : .badStatusLine, reason) }
            return CourierError(.malformedResponse, reason)
        }
    }

    // MARK: - Callbacks from the C parser (`self` comes back through `context`)

    /// Runs `body` with the decoder behind `context`, without a retain/release pair: the decoder
    /// is alive for the whole `h1p_execute` call that invokes the callback.
    @inline(__always)
    private static func with<R>(_ parser: UnsafeMutablePointer<h1p_parser>?, _ body: (ResponseDecoder) -> R) -> R {
        Unmanaged<ResponseDecoder>.fromOpaque(parser!.pointee.context)._withUnsafeGuaranteedRef(body)
    }

    private static let onHeadersComplete: h1p_head_cb = { parser in
        ResponseDecoder.with(parser) { $0.headersComplete() }
    }

    private static let onBody: h1p_body_cb = { parser, at, length in
        ResponseDecoder.with(parser) { decoder in
            decoder.body(UnsafeRawBufferPointer(start: at, count: length)) == nil ? 0 : -1
        }
    }

    private func body(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        bodyBytes &+= UInt64(bytes.count)
        if let max = limits.maxBodyBytes, bodyBytes > max {
            pendingError = CourierError(.bodyTooLarge, "more than \(max) bytes")
            return pendingError
        }
        if let delegate, let error = delegate.decoderDidReceiveBody(bytes) {
            pendingError = error
            return error
        }
        return nil
    }

    /// The reason phrase as a string; "OK", nearly every response's, without decoding.
    @inline(__always)
    private static func reasonPhrase(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        if bytes.count == 2, bytes[0] == UInt8(ascii: "O"), bytes[1] == UInt8(ascii: "K") { return "OK" }
        return bytes.isEmpty ? "" : String(decoding: bytes, as: UTF8.self)
    }

    /// Returns llhttp's `on_headers_complete` verdict: 0 to read a body, 1 for none, -1 on error.
    private func headersComplete() -> Int32 {
        let status = Int(llhttp_get_status_code(&parser.pointee.llhttp))
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
            parser.pointee.interim = 1
            delegate?.decoderDidReceiveInformational(status: status)
            return 1
        }
        var layout = h1p_layout()
        guard h1p_lay_out(parser, &layout) == 0 else {
            pendingError = CourierError(.noMemory, "laying out a response head")
            return -1
        }
        var headers = HTTPHeaders()
        if layout.field_count > 0 {
            // One copy of the names and values, one of the index: no per-field allocation.
            let storage = Array(UnsafeBufferPointer(start: layout.storage, count: Int(layout.storage_length)))
            let index = UnsafeRawPointer(layout.fields!).assumingMemoryBound(to: HTTPHeaders.Field.self)
            headers = HTTPHeaders(received: storage, fields: Array(UnsafeBufferPointer(start: index, count: Int(layout.field_count))))
        }
        let reason = Self.reasonPhrase(UnsafeBufferPointer(start: layout.reason, count: Int(layout.reason_length)))
        let head = ResponseHead(status: status, versionMinor: llhttp_get_http_minor(&parser.pointee.llhttp),
                                reason: reason, headers: headers)
        headDelivered = true
        let flags = UInt32(parser.pointee.llhttp.flags)
        let isChunked = flags & F_CHUNKED.rawValue != 0
        let hasLength = flags & F_CONTENT_LENGTH.rawValue != 0 && !isChunked
        let noBody = !expectsBody || status == 204 || status == 304
        let contentLength = parser.pointee.llhttp.content_length
        let headBytes = Int(parser.pointee.head_bytes)
        let fieldCount = Int(parser.pointee.field_count)
        let announced: UInt64? = noBody ? 0 : (hasLength ? contentLength : nil)
        if let delegate, let error = delegate.decoderDidReceiveHead(head, contentLength: announced) {
            pendingError = error
            return -1
        }
        if noBody { return 1 }
        if let max = limits.maxBodyBytes, hasLength, contentLength > max {
            pendingError = CourierError(.bodyTooLarge, "Content-Length \(contentLength) exceeds \(max)")
            return -1
        }
        if isChunked {
            // llhttp treats the message as bodiless and pauses after the head; the chunks are
            // decoded here, within what the head left of the limits.
            chunked = ChunkedDecoder(byteBudget: max(0, limits.maxHeaderBytes - headBytes),
                                     fieldBudget: max(0, limits.maxHeaderCount - fieldCount))
            return 1
        }
        return 0
    }
}
