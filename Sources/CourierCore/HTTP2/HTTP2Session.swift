import CNGHTTP2

/// What an nghttp2 session reports while it reads frames or writes DATA: the connection that
/// owns the session implements it (the session's callbacks call it by its class, unretained; this
/// states what they say). Everything runs on the loop thread, inside `receive` or `produce`.
package protocol HTTP2SessionEvents: AnyObject {
    /// A frame header arrived (before its payload): false fails the connection (the CONTINUATION
    /// bound and the header-size bound are kept here, whatever the library's version does).
    func frameBegins(type: UInt8, length: Int, streamID: Int32) -> Bool
    /// One response header field; false resets the stream (the error is the stream's to keep).
    func headerField(streamID: Int32, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Bool
    /// A complete header block: the response head (or an informational one) or trailers.
    func headersEnded(streamID: Int32, endStream: Bool)
    /// DATA for a stream (already counted against the connection's window).
    func dataReceived(streamID: Int32, bytes: UnsafeRawBufferPointer)
    /// A DATA frame ended the stream.
    func dataEndedStream(streamID: Int32)
    /// The server reset a stream.
    func resetReceived(streamID: Int32, errorCode: UInt32)
    /// A stream closed (after its end, a reset either way, or a GOAWAY above it).
    func streamClosed(streamID: Int32, errorCode: UInt32)
    /// The server's SETTINGS arrived (not an ACK).
    func settingsReceived()
    /// A GOAWAY arrived.
    func goAwayReceived(lastStreamID: Int32, errorCode: UInt32)
    /// The session sent a GOAWAY (nghttp2 found the server in violation, or Courier closed).
    func goAwaySent(errorCode: UInt32)
    /// A PING ACK arrived.
    func pingAcknowledged()
    /// nghttp2 wants up to `buffer.count` body bytes of a stream.
    func bodyPull(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer) -> HTTP2BodyPull
}

/// What a request body gave nghttp2.
package enum HTTP2BodyPull {
    /// `count` bytes were written; `end` when they are the last.
    case bytes(Int, end: Bool)
    /// Nothing yet: the producer will wake the stream (`resumeBody`).
    case deferred
    /// The body could not be produced: the stream is reset.
    case failed
}

/// An nghttp2 client session driven in memory: bytes go in with `receive`, frames come out of
/// `produce`. It does no I/O; its owner moves the bytes over the connection's stream.
package final class HTTP2Session {
    private var session: OpaquePointer!
    /// The session's small-block allocator (see CNGHTTP2's shim): freed after the session.
    private let pool: UnsafeMutablePointer<courier_h2_pool>?
    /// The name/value list of the request being submitted.
    private var nameValues: [nghttp2_nv] = []

    /// What the session announces to the server.
    package struct Settings {
        /// A stream's first window (SETTINGS_INITIAL_WINDOW_SIZE): small, so a rate-limited
        /// download never gets more than this ahead of its rate; a stream without a rate
        /// grows its window to `grownStreamWindow` once half of this arrived (curl does the
        /// same), which costs small responses nothing.
        package var streamWindow: Int32 = 64 << 10
        /// The window of a stream that carries a large body: what one stream's paused consumer
        /// may have waiting in memory at most, and what one stream needs for GB/s.
        package var grownStreamWindow: Int32 = 4 << 20
        /// The connection window (what all streams together may have unread).
        package var connectionWindow: Int32 = 64 << 20
        /// SETTINGS_MAX_HEADER_LIST_SIZE: the response head limit.
        package var maxHeaderListSize: UInt32 = 300 * 1024
        package init() {}
    }

    /// A session reporting to `events`, the connection that owns it (see `HTTP2SessionEvents`).
    /// The callbacks' user data is the connection itself, reached by its class and unretained:
    /// nghttp2 calls back some fifteen times a request, and through the protocol every callback
    /// paid a retain and a release.
    package init(events: HTTP2Connection, settings: Settings) {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks, Self.onBeginFrame)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, Self.onHeader)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Self.onFrameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, Self.onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Self.onStreamClose)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, Self.onFrameSent)
        var options: OpaquePointer?
        nghttp2_option_new(&options)
        // Windows open as the consumer takes the bytes, not as they arrive (`consumed`).
        nghttp2_option_set_no_auto_window_update(options, 1)
        // (As many as Courier's own bound: a 300 KiB head in 4 KiB frames must pass.)
        nghttp2_option_set_max_continuations(options, HTTP2Connection.maxContinuations)
        var made: OpaquePointer?
        pool = courier_h2_pool_new()
        // (Without memory for the pool, nghttp2's own allocator, the C library's. The pool's
        // first member is its nghttp2_mem, which nghttp2 copies.)
        let status = nghttp2_session_client_new3(&made, callbacks, Unmanaged.passUnretained(events).toOpaque(), options,
                                                 pool.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: nghttp2_mem.self) })
        nghttp2_option_del(options)
        nghttp2_session_callbacks_del(callbacks)
        precondition(status == 0, "nghttp2_session_client_new3: \(status)")
        session = made
        var entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: UInt32(settings.streamWindow)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: settings.maxHeaderListSize),
        ]
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
        _ = nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, settings.connectionWindow)
    }

    deinit {
        nghttp2_session_del(session)
        courier_h2_pool_free(pool)
    }

    // MARK: - Bytes in and out

    /// Feeds bytes from the server; nil, or the error that ends the connection.
    package func receive(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        guard let base = bytes.baseAddress else { return nil }
        let result = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        guard result < 0 else { return nil }
        return CourierError(.http2Protocol, String(cString: nghttp2_strerror(Int32(result))))
    }

    /// Serializes pending frames into `buffer` (appending); stops at `limit` bytes. Returns the
    /// error that ends the connection, if nghttp2 met one.
    package func produce(into buffer: inout RawBuffer, limit: Int) -> CourierError? {
        while buffer.count < limit {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 { return CourierError(.http2Protocol, String(cString: nghttp2_strerror(Int32(count)))) }
            guard count > 0, let data else { return nil }
            buffer.append(UnsafeRawBufferPointer(start: data, count: count))
        }
        return nil
    }

    /// Whether the session has nothing more to read or write (after a GOAWAY either way).
    package var isFinished: Bool { nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 }
    /// Whether frames are waiting to be produced.
    package var wantsWrite: Bool { nghttp2_session_want_write(session) != 0 }

    // MARK: - Requests

    /// Submits a request; returns its stream id, or nil when nghttp2 refuses (no ids left).
    package func submitRequest(_ headers: HTTP2RequestHeaders, hasBody: Bool) -> Int32? {
        var provider = nghttp2_data_provider()
        provider.read_callback = Self.onBodyRead
        let base = UnsafeMutableRawPointer(mutating: headers.bytes.baseAddress!).assumingMemoryBound(to: UInt8.self)
        // (The name/value list is reused too: nghttp2 copies the fields it is handed.)
        nameValues.removeAll(keepingCapacity: true)
        for field in headers.fields {
            nameValues.append(nghttp2_nv(name: base + field.0, value: base + field.2, namelen: field.1, valuelen: field.3,
                                         flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
        }
        let id = hasBody ? nghttp2_submit_request(session, nil, &nameValues, nameValues.count, &provider, nil)
                         : nghttp2_submit_request(session, nil, &nameValues, nameValues.count, nil, nil)
        return id > 0 ? id : nil
    }

    /// A deferred body has bytes again.
    package func resumeBody(streamID: Int32) {
        _ = nghttp2_session_resume_data(session, streamID)
    }

    /// Resets a stream (cancel, a failed body, a head the transfer refused).
    package func reset(streamID: Int32, errorCode: UInt32) {
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode)
    }

    /// `count` body bytes of a stream reached its consumer: its window may reopen by as much.
    package func consumed(streamID: Int32, count: Int) {
        guard count > 0 else { return }
        _ = nghttp2_session_consume_stream(session, streamID, count)
    }

    /// Opens a stream's window to `size` bytes (a WINDOW_UPDATE for the difference).
    package func growWindow(streamID: Int32, to size: Int32) {
        _ = nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, size)
    }

    /// `count` DATA bytes arrived: the connection's window reopens at once (a stream's own
    /// window bounds what waits for its consumer).
    package func consumedOnConnection(_ count: Int) {
        guard count > 0 else { return }
        _ = nghttp2_session_consume_connection(session, count)
    }

    /// Sends a PING (liveness).
    package func ping() {
        _ = nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
    }

    /// Says GOAWAY (NO_ERROR) before closing.
    package func goAway() {
        _ = nghttp2_session_terminate_session(session, UInt32(NGHTTP2_NO_ERROR.rawValue))
    }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS.
    package var peerMaxConcurrentStreams: UInt32 {
        nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
    }

    // MARK: - Callbacks

    /// Runs `body` with the connection (the callbacks' user data), retaining nothing: the
    /// connection owns the session, and nghttp2 calls back only while the connection drives it.
    @inline(__always)
    private static func withEvents<R>(_ user: UnsafeMutableRawPointer?, _ body: (HTTP2Connection) -> R) -> R {
        Unmanaged<HTTP2Connection>.fromOpaque(user!)._withUnsafeGuaranteedRef(body)
    }

    private static let failure = Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
    private static let resetStream = Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)

    private static let onBeginFrame: nghttp2_on_begin_frame_callback = { _, header, user in
        let header = header!.pointee
        return withEvents(user) { $0.frameBegins(type: header.type, length: header.length, streamID: header.stream_id) } ? 0 : failure
    }

    private static let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, user in
        let accepted = withEvents(user) {
            $0.headerField(streamID: frame!.pointee.hd.stream_id, name: UnsafeRawBufferPointer(start: name, count: nameLength),
                           value: UnsafeRawBufferPointer(start: value, count: valueLength))
        }
        return accepted ? 0 : resetStream
    }

    private static let onFrameReceived: nghttp2_on_frame_recv_callback = { _, frame, user in
        let frame = frame!.pointee
        let endStream = frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        withEvents(user) { events in
            switch Int(frame.hd.type) {
            case Int(NGHTTP2_HEADERS.rawValue):
                events.headersEnded(streamID: frame.hd.stream_id, endStream: endStream)
            case Int(NGHTTP2_DATA.rawValue):
                if endStream { events.dataEndedStream(streamID: frame.hd.stream_id) }
            case Int(NGHTTP2_RST_STREAM.rawValue):
                events.resetReceived(streamID: frame.hd.stream_id, errorCode: frame.rst_stream.error_code)
            case Int(NGHTTP2_SETTINGS.rawValue):
                if frame.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 { events.settingsReceived() }
            case Int(NGHTTP2_GOAWAY.rawValue):
                events.goAwayReceived(lastStreamID: frame.goaway.last_stream_id, errorCode: frame.goaway.error_code)
            case Int(NGHTTP2_PING.rawValue):
                if frame.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 { events.pingAcknowledged() }
            default:
                break
            }
        }
        return 0
    }

    private static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, user in
        withEvents(user) { $0.dataReceived(streamID: streamID, bytes: UnsafeRawBufferPointer(start: data, count: length)) }
        return 0
    }

    private static let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, user in
        withEvents(user) { $0.streamClosed(streamID: streamID, errorCode: errorCode) }
        return 0
    }

    private static let onFrameSent: nghttp2_on_frame_send_callback = { _, frame, user in
        if Int(frame!.pointee.hd.type) == Int(NGHTTP2_GOAWAY.rawValue) {
            withEvents(user) { $0.goAwaySent(errorCode: frame!.pointee.goaway.error_code) }
        }
        return 0
    }

    private static let onBodyRead: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, user in
        switch withEvents(user, { $0.bodyPull(streamID: streamID, into: UnsafeMutableRawBufferPointer(start: buffer, count: length)) }) {
        case .bytes(let count, let end):
            if end { flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) }
            return count
        case .deferred:
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        case .failed:
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
    }

    /// The name of an HTTP/2 error code ("REFUSED_STREAM").
    package static func errorName(_ code: UInt32) -> String {
        String(cString: nghttp2_http2_strerror(code))
    }
}
