import CUV
import Glibc

/// The read buffer every connection shares: libuv reads into it, the parser consumes it before the
/// read callback returns, and only header bytes are ever copied out. One loop thread per process
/// means one buffer per process, which is why an idle pooled connection holds no buffer at all.
enum SharedReadBuffer {
    static let size = 256 * 1024
    nonisolated(unsafe) static let base = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
    /// Decrypted bytes for https connections (a TLS record holds at most 16 KiB).
    static let plaintextSize = 64 * 1024
    nonisolated(unsafe) static let plaintext = UnsafeMutableRawPointer.allocate(byteCount: plaintextSize, alignment: 64)
}

/// Connect-phase timestamps, copied into the metrics of the transfer a new connection serves first.
struct ConnectTimings {
    var dnsStart: UInt64 = 0
    var dnsEnd: UInt64 = 0
    var connectStart: UInt64 = 0
    var connectEnd: UInt64 = 0
    var tlsEnd: UInt64 = 0
    var tlsResumed = false
    var tlsVerifyResult: Int32 = 0
}

/// One TCP connection speaking HTTP/1.1: the I/O half of `HTTP1ConnectionStateMachine`.
///
/// It owns two libuv handles (the TCP stream and a timer), each holding a retain on the connection
/// that only its close callback gives back: the object outlives every callback libuv may still
/// deliver, and its memory is freed only after `uv_close` completes (libuv's rule, and the bug
/// FoundationNetworking had with DispatchSource, swift-corelibs-foundation #4791).
///
/// Writes try `uv_try_write` with head and body as two iovecs first. On a keep-alive connection a
/// small request leaves in that one `writev`, with nothing allocated or copied; only a partial write
/// copies the rest into a pending `uv_write`.
///
/// All deadlines share one timer, re-armed lazily: moving a deadline later (every read pushes the
/// idle deadline) costs nothing, the timer fires at the old time, finds nothing due and re-arms.
package final class HTTP1Connection: ResponseDecoderDelegate {
    package let id: UInt64
    package let poolKey: Int
    package let origin: Origin
    unowned(unsafe) let runtime: Runtime
    private let uvLoop: UnsafeMutablePointer<uv_loop_t>
    @exclusivity(unchecked) package private(set) var machine = HTTP1ConnectionStateMachine()
    let decoder: ResponseDecoder
    @exclusivity(unchecked) private var tcp: UnsafeMutablePointer<uv_tcp_t>?
    private let timer: UnsafeMutablePointer<uv_timer_t>
    @exclusivity(unchecked) private var timerDeadline: UInt64 = 0
    @exclusivity(unchecked) package private(set) var transfer: Transfer?
    @exclusivity(unchecked) private(set) var timings = ConnectTimings()
    @exclusivity(unchecked) package private(set) var remoteAddress = ""

    @exclusivity(unchecked) private var addresses: [SocketAddress] = []
    @exclusivity(unchecked) private var addressIndex = 0
    @exclusivity(unchecked) private var lastConnectError: Int32 = 0
    @exclusivity(unchecked) private var connectDeadline: UInt64 = .max
    @exclusivity(unchecked) private var idleSince: UInt64 = 0
    @exclusivity(unchecked) var idleTimeoutMillis: UInt64 = 60_000
    @exclusivity(unchecked) private var lastReadMillis: UInt64 = 0
    @exclusivity(unchecked) private var closeRequested = false
    @exclusivity(unchecked) private var writesInFlight = 0
    @exclusivity(unchecked) private var headLength = 0
    @exclusivity(unchecked) private var exchangeBytesSent = 0
    /// True while `begin` runs, so a write that completes synchronously reuses its clock reading.
    @exclusivity(unchecked) private var pendingFromBegin = false
    @exclusivity(unchecked) private var fileBody: FileBodyReader?

    /// The Host header value for this origin, formatted once per connection rather than per request.
    private let hostHeader: String

    /// The TLS context for https origins (nil for http).
    private let tlsContext: TLSContext?
    /// TLS on this connection, once TCP is up (https only).
    @exclusivity(unchecked) private var tls: TLSSession?

    init(id: UInt64, poolKey: Int, origin: Origin, runtime: Runtime, uvLoop: UnsafeMutablePointer<uv_loop_t>,
         tlsContext: TLSContext?) {
        self.id = id
        self.tlsContext = tlsContext
        let bracketed = origin.host.utf8.contains(UInt8(ascii: ":")) ? "[\(origin.host)]" : origin.host
        hostHeader = origin.port == origin.scheme.defaultPort ? bracketed : "\(bracketed):\(origin.port)"
        self.poolKey = poolKey
        self.origin = origin
        self.runtime = runtime
        self.uvLoop = uvLoop
        decoder = ResponseDecoder()
        timer = .allocate(capacity: 1)
        uv_timer_init(uvLoop, timer)
        timer.pointee.data = Unmanaged.passRetained(self).toOpaque()
        decoder.delegate = self
    }

    private var nowMillis: UInt64 { uv_now(uvLoop) }

    // MARK: - Connecting

    /// Resolves the host and connects, trying each address in turn.
    func connect(timeout: Nanoseconds?) {
        timings.dnsStart = monotonicNanos()
        connectDeadline = timeout.map { nowMillis.adding(Nanoseconds(($0.rawValue + 999_999) / 1_000_000)) } ?? .max
        rearmTimer()
        runtime.resolver.resolve(origin.host) { [self] result in
            guard machine.state == .connecting, !closeRequested else { return }
            timings.dnsEnd = monotonicNanos()
            switch result {
            case .failure(let error):
                failConnect(error)
            case .success(let found):
                addresses = found.map { var a = $0; a.port = origin.port; return a }
                timings.connectStart = monotonicNanos()
                tryNextAddress()
            }
        }
    }

    private func tryNextAddress() {
        guard addressIndex < addresses.count else {
            let reason = lastConnectError == 0 ? "no address" : String(cString: uv_err_name(lastConnectError))
            let last = addresses.last.map { " \($0)" } ?? ""
            failConnect(CourierError(.connectFailed, "connect \(reason)\(last) (\(origin.host))"))
            return
        }
        let address = addresses[addressIndex]
        addressIndex += 1
        if let old = tcp {
            // A TCP handle whose connect failed cannot be reused; each attempt gets a fresh one.
            Self.closeHandle(old)
            tcp = nil
        }
        let handle = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
        uv_tcp_init(uvLoop, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        tcp = handle
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        let status = address.withSockaddr { uv_tcp_connect(request, handle, $0, Self.onConnect) }
        if status != 0 {
            Unmanaged<HTTP1Connection>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            lastConnectError = status
            tryNextAddress()
        }
    }

    private static let onConnect: uv_connect_cb = { request, status in
        let connection = Unmanaged<HTTP1Connection>.fromOpaque(request!.pointee.data).takeRetainedValue()
        let handle = request!.pointee.handle
        request!.deallocate()
        connection.connectFinished(status: status, handle: handle)
    }

    private func connectFinished(status: Int32, handle: UnsafeMutablePointer<uv_stream_t>?) {
        // A callback for an attempt we already gave up on (closed, or superseded) changes nothing.
        guard machine.state == .connecting, !closeRequested,
              let tcp, UnsafeMutableRawPointer(tcp) == handle.map({ UnsafeMutableRawPointer($0) }) else { return }
        if status != 0 {
            lastConnectError = status
            tryNextAddress()
            return
        }
        timings.connectEnd = monotonicNanos()
        remoteAddress = addresses[addressIndex - 1].description
        // A pooled connection should hold nothing it no longer needs.
        addresses = []
        uv_tcp_nodelay(tcp, 1)
        let stream = UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp))
        let readStatus = uv_read_start(stream, Self.onAlloc, Self.onRead)
        if readStatus != 0 {
            failConnect(CourierError(.connectFailed, "read start: \(String(cString: uv_err_name(readStatus)))"))
            return
        }
        if let tlsContext {
            guard let session = TLSSession(context: tlsContext, host: origin.host, port: origin.port,
                                           session: runtime.cachedTLSSession(poolKey: poolKey)) else {
                failConnect(CourierError(.tlsHandshake, "SSL_new: \(TLSErrors.drain())"))
                return
            }
            let key = poolKey
            session.onNewSession = { [unowned(unsafe) runtime] ticket in runtime.storeTLSSession(ticket, poolKey: key) }
            tls = session
            continueHandshake(UnsafeRawBufferPointer(start: nil, count: 0))
            return
        }
        _ = machine.connected()
        runtime.connectionEstablished(self)
    }

    /// Drives the TLS handshake with received ciphertext; the connection counts as connected (and
    /// joins the pool) only once the peer passed every check.
    private func continueHandshake(_ ciphertext: UnsafeRawBufferPointer) {
        guard let tls else { return }
        tls.receive(ciphertext)
        let progress = tls.handshake(ciphertext)
        flushTLS(plaintextCount: 0, final: false)
        switch progress {
        case .inProgress:
            break
        case .failed(let error):
            timings.tlsVerifyResult = tls.verifyResult
            failConnect(error)
        case .done:
            timings.tlsEnd = monotonicNanos()
            timings.tlsResumed = tls.resumed
            timings.tlsVerifyResult = tls.verifyResult
            _ = machine.connected()
            runtime.connectionEstablished(self)
            // Anything after the handshake in the same read (a session ticket) is processed now.
            if !closeRequested { readTLSRecords() }
        }
    }

    private func failConnect(_ error: CourierError) {
        guard machine.connectFailed() == .close else { return }
        closeConnection()
        runtime.connectionFailed(self, error: error)
    }

    // MARK: - Exchanges

    /// Starts sending `transfer`'s request. The pool calls this only on an idle connection.
    func begin(_ transfer: Transfer, at nowNanos: UInt64 = monotonicNanos()) {
        self.transfer = transfer
        decoder.limits = transfer._options.limits
        decoder.begin(expectsBody: transfer._method != .head)
        exchangeBytesSent = 0
        let now = nowMillis
        transfer.metrics.requestStart = nowNanos
        transfer.firstByteDeadlineMillis = transfer._options.timeouts.firstByte.map { now.adding(Self.millis($0)) } ?? .max
        idleTimeoutMillis = Self.millis(transfer._options.poolIdleTimeout).rawValue
        let replayable = transfer._method.isIdempotent && transfer._body.isReplayable
        pendingFromBegin = true
        perform(machine.sendRequest(replayable: replayable))
        pendingFromBegin = false
        rearmTimer()
    }

    /// Abandons the exchange in flight with `error` (cancellation, a deadline the runtime tracks).
    func abort(_ error: CourierError) {
        perform(machine.abort(error))
    }

    /// Closes the connection at the pool's request (eviction, shutdown, limit lowered).
    func closeFromPool() {
        if machine.close() == .close { closeConnection() }
    }

    /// The pool parked the connection.
    func becameIdle() {
        idleSince = nowMillis
        rearmTimer()
    }

    private func writeRequest() {
        guard let transfer, let tcp else { return }
        let framing = RequestEncoder.Framing(
            host: !transfer.userSetHost,
            contentLength: RequestEncoder.contentLength(for: transfer._method, bodyLength: transfer.requestBodyLength),
            acceptEncoding: transfer._options.decompress && !transfer.userSetAcceptEncoding)
        RequestEncoder.encodeHead(method: transfer._method, target: transfer._url.target, hostHeader: hostHeader,
                                  headers: transfer._headers, framing: framing, into: &runtime.headBuffer)
        headLength = runtime.headBuffer.count
        if transfer.requestAsksToClose || !transfer._options.reuseConnection { machine.requestAsksToClose() }
        let stream = UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp))
        let head = runtime.headBuffer.bytes
        switch transfer._body {
        case .empty:
            send(head, nil, on: stream, final: true)
        case .bytes(let body):
            body.withUnsafeBytes { send(head, $0, on: stream, final: true) }
        case .file(let path):
            switch FileBodyReader.open(path: path, expectedLength: transfer.requestBodyLength) {
            case .failure(let error):
                perform(machine.abort(error))
                return
            case .success(let reader):
                fileBody = reader
                send(head, nil, on: stream, final: transfer.requestBodyLength == 0)
                if transfer.requestBodyLength > 0, machine.state != .closed, writesInFlight == 0 { pumpFile() }
            }
        }
    }

    /// Writes `first` and `second` with one `writev` if the kernel takes them; queues the rest.
    private func send(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?,
                      on stream: UnsafeMutablePointer<uv_stream_t>, final: Bool) {
        let total = first.count + (second?.count ?? 0)
        if let tls {
            if let error = tls.write(first) ?? second.flatMap({ tls.write($0) }) {
                perform(machine.transportFailed(error))
                return
            }
            flushTLS(plaintextCount: total, final: final)
            return
        }
        var buffers = (uv_buf_t(base: UnsafeMutablePointer(mutating: first.baseAddress?.assumingMemoryBound(to: CChar.self)), len: first.count),
                       uv_buf_t(base: UnsafeMutablePointer(mutating: second?.baseAddress?.assumingMemoryBound(to: CChar.self)), len: second?.count ?? 0))
        let count: UInt32 = (second?.count ?? 0) > 0 ? 2 : 1
        let written = withUnsafeMutablePointer(to: &buffers) { pointer in
            pointer.withMemoryRebound(to: uv_buf_t.self, capacity: 2) { uv_try_write(stream, $0, count) }
        }
        if written == Int32(total) {
            wrote(total, final: final)
            return
        }
        if written < 0 && written != UV_EAGAIN.rawValue {
            perform(machine.transportFailed(CourierError(.sendFailed, String(cString: uv_err_name(written)))))
            return
        }
        // Partial write: copy what is left and let libuv finish it when the socket drains.
        let done = max(0, Int(written))
        if done > 0 { wrote(done, final: false) }
        var rest: [UInt8] = []
        rest.reserveCapacity(total - done)
        if done < first.count {
            rest.append(contentsOf: UnsafeRawBufferPointer(rebasing: first[done...]))
            if let second { rest.append(contentsOf: second) }
        } else if let second {
            rest.append(contentsOf: UnsafeRawBufferPointer(rebasing: second[(done - first.count)...]))
        }
        queueWrite(rest, on: stream, final: final)
    }

    /// Sends the ciphertext TLS produced: one `write` when the kernel takes it all, the rest
    /// queued. `plaintextCount` request bytes are reported as sent once it has gone.
    private func flushTLS(plaintextCount: Int, final: Bool) {
        guard let tls, let tcp else { return }
        let pendingBytes = tls.outgoing.bytes
        guard pendingBytes.count > 0 else {
            if plaintextCount > 0 || final { wrote(plaintextCount, final: final) }
            return
        }
        let stream = UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp))
        var buffer = uv_buf_t(base: UnsafeMutablePointer(mutating: pendingBytes.baseAddress?.assumingMemoryBound(to: CChar.self)), len: pendingBytes.count)
        let written = writesInFlight > 0 ? Int32(UV_EAGAIN.rawValue) : uv_try_write(stream, &buffer, 1)
        if written == Int32(pendingBytes.count) {
            tls.outgoing.clear()
            if plaintextCount > 0 || final { wrote(plaintextCount, final: final) }
            return
        }
        if written < 0 && written != UV_EAGAIN.rawValue {
            tls.outgoing.clear()
            perform(machine.transportFailed(CourierError(.sendFailed, String(cString: uv_err_name(written)))))
            return
        }
        let rest = Array(UnsafeRawBufferPointer(rebasing: pendingBytes[max(0, Int(written))...]))
        tls.outgoing.clear()
        queueWrite(rest, on: stream, final: final, reporting: plaintextCount)
    }

    private func queueWrite(_ bytes: [UInt8], on stream: UnsafeMutablePointer<uv_stream_t>, final: Bool, reporting: Int? = nil) {
        let pending = PendingWrite(connection: self, bytes: bytes, final: final, reported: reporting ?? bytes.count)
        let status = pending.start(on: stream)
        if status != 0 {
            perform(machine.transportFailed(CourierError(.sendFailed, String(cString: uv_err_name(status)))))
            return
        }
        writesInFlight += 1
    }

    fileprivate func writeCompleted(_ pending: PendingWrite, status: Int32) {
        writesInFlight -= 1
        guard !closeRequested, transfer != nil else { return }
        if status < 0 {
            perform(machine.transportFailed(CourierError(.sendFailed, String(cString: uv_err_name(status)))))
            return
        }
        if pending.reported > 0 || pending.final { wrote(pending.reported, final: pending.final) }
        if !pending.final, fileBody != nil, writesInFlight == 0 { pumpFile() }
    }

    private func pumpFile() {
        guard let reader = fileBody, let tcp else { return }
        switch reader.readChunk() {
        case .failure(let error):
            perform(machine.abort(error))
        case .success(let chunk):
            let final = reader.remaining == 0
            if final { fileBody = nil }
            if let tls {
                if let error = chunk.withUnsafeBytes({ tls.write($0) }) {
                    perform(machine.transportFailed(error))
                    return
                }
                let stream = UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp))
                let ciphertext = Array(tls.outgoing.bytes)
                tls.outgoing.clear()
                queueWrite(ciphertext, on: stream, final: final, reporting: chunk.count)
                return
            }
            queueWrite(chunk, on: UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp)), final: final)
        }
    }

    private func wrote(_ count: Int, final: Bool) {
        guard let transfer else { return }
        transfer.metrics.bytesSent &+= UInt64(count)
        exchangeBytesSent += count
        if exchangeBytesSent > headLength {
            transfer.requestBodyBytesSent = UInt64(exchangeBytesSent - headLength)
            if transfer.reportsProgress {
                transfer.sentRequestBytes(count, nowMillis: nowMillis, isLast: final)
            }
        }
        if final {
            // Written within the call that began the exchange (the usual case): same instant.
            transfer.metrics.requestSent = writesInFlight == 0 && pendingFromBegin ? transfer.metrics.requestStart : monotonicNanos()
            perform(machine.requestWritten())
        }
    }

    // MARK: - Reading

    private static let onAlloc: uv_alloc_cb = { _, _, buffer in
        buffer!.pointee = uv_buf_init(SharedReadBuffer.base.assumingMemoryBound(to: CChar.self), UInt32(SharedReadBuffer.size))
    }

    private static let onRead: uv_read_cb = { stream, nread, _ in
        let connection = Unmanaged<HTTP1Connection>.fromOpaque(stream!.pointee.data).takeUnretainedValue()
        connection.didRead(nread)
    }

    private func didRead(_ nread: Int) {
        if nread > 0, tls != nil {
            let ciphertext = UnsafeRawBufferPointer(start: SharedReadBuffer.base, count: nread)
            if machine.state == .connecting {
                continueHandshake(ciphertext)
            } else {
                tls!.receive(ciphertext)
                readTLSRecords()
            }
        } else if nread > 0 {
            received(UnsafeRawBufferPointer(start: SharedReadBuffer.base, count: nread))
        } else if nread == Int(UV_EOF.rawValue) {
            endOfStream()
        } else if nread < 0 {
            let name = String(cString: uv_err_name(Int32(nread)))
            switch machine.state {
            case .idle:
                closeIdle()
            case .active:
                let error = decoder.receivedAnything
                    ? CourierError(.connectionReset, name)
                    : CourierError(.connectionReset, "\(name) before any response byte")
                perform(machine.transportFailed(error))
            case .connecting, .closed:
                break
            }
        }
    }

    /// Decrypts every record the last read brought and handles the plaintext, stopping if the
    /// connection closes on the way.
    private func readTLSRecords() {
        guard let tls else { return }
        let buffer = UnsafeMutableRawBufferPointer(start: SharedReadBuffer.plaintext, count: SharedReadBuffer.plaintextSize)
        reading: while !closeRequested {
            switch tls.readPlaintext(into: buffer) {
            case .bytes(let count):
                received(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count))
            case .wantMore:
                break reading
            case .closed:
                endOfStream()
                break reading
            case .failed(let error):
                switch machine.state {
                case .active: perform(machine.transportFailed(error))
                case .idle: closeIdle()
                case .connecting, .closed: break
                }
                break reading
            }
        }
        tls.receive(UnsafeRawBufferPointer(start: nil, count: 0))
        // Reading can make TLS answer (a key update); send it.
        if !closeRequested, tls.outgoing.count > 0 { flushTLS(plaintextCount: 0, final: false) }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        switch machine.state {
        case .active:
            guard let transfer else { return }
            lastReadMillis = nowMillis
            // One clock reading per read: first byte and, if the response ends here, completion.
            let readAt = monotonicNanos()
            transfer.metrics.completedAt = readAt
            if transfer.metrics.firstByte == 0 {
                transfer.metrics.firstByte = readAt
                machine.responseBytesReceived()
                // The idle deadline replaces the first-byte one and may be earlier than the timer.
                rearmTimer()
            }
            switch decoder.feed(bytes, scratch: runtime.spanScratch) {
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
            // Bytes nobody asked for: the connection can no longer be trusted to frame responses.
            closeIdle()
        case .connecting, .closed:
            break
        }
    }

    private func endOfStream() {
        switch machine.state {
        case .active:
            guard let transfer else { return }
            switch decoder.finish() {
            case .complete where tls != nil && tls?.receivedCloseNotify == false:
                // A close-delimited body over TLS is only complete with close_notify; without it an
                // attacker could have cut the stream (RFC 8446 section 6.1).
                perform(machine.transportFailed(CourierError(.tlsTruncated, "no close_notify after \(transfer.metrics.bodyBytesReceived) body bytes")))
            case .complete:
                if let error = transfer.completeBody() {
                    perform(machine.responseInvalid(error))
                    return
                }
                transfer.trailers = decoder.trailers
                perform(machine.responseComplete(keepAlive: false, trailingBytes: false))
            case .failed(let error):
                perform(machine.transportFailed(resetInsteadOfEOF() ?? error))
            case .needMore:
                perform(machine.transportFailed(resetInsteadOfEOF() ?? decoder.endOfStreamError()))
            }
        case .idle:
            closeIdle()
        case .connecting:
            if tls != nil { failConnect(CourierError(.tlsHandshake, "connection closed during the TLS handshake")) }
        case .closed:
            break
        }
    }

    /// libuv reports EOF, without reading again, when a partial read coincides with a hang-up;
    /// an RST that arrived with the data is then still pending in SO_ERROR. A reset is not a clean
    /// end (curl's 56, not 18), so ask the socket.
    private func resetInsteadOfEOF() -> CourierError? {
        guard let tcp else { return nil }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(tcp)), &fd) == 0 else { return nil }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == ECONNRESET else { return nil }
        return CourierError(.connectionReset, "ECONNRESET")
    }

    private func closeIdle() {
        guard machine.transportFailed(CourierError(.connectionReset)) == .close else { return }
        closeConnection()
        runtime.idleConnectionClosed(self)
    }

    // MARK: - Decoder delegate

    package func decoderDidReceiveHead(_ head: consuming ResponseHead, contentLength: UInt64?) -> CourierError? {
        transfer?.receiveHead(head, contentLength: contentLength)
    }

    package func decoderDidReceiveBody(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        transfer?.receiveBody(bytes, nowMillis: lastReadMillis)
    }

    // MARK: - Actions

    private func perform(_ action: HTTP1ConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .writeRequest:
            writeRequest()
        case .completeRequest(let close):
            guard let finished = transfer else { return }
            transfer = nil
            fileBody = nil
            if close { closeConnection() }
            runtime.exchangeFinished(self, finished, outcome: .success(reusable: !close))
        case .failRequest(let error, let replay):
            guard let failed = transfer else { return }
            transfer = nil
            fileBody = nil
            closeConnection()
            runtime.exchangeFinished(self, failed, outcome: .failure(error, replay: replay))
        case .close:
            closeConnection()
        }
    }

    // MARK: - Deadlines

    @inline(__always)
    static func millis(_ duration: Nanoseconds) -> Nanoseconds {
        Nanoseconds((duration.rawValue / 1_000_000) + (duration.rawValue % 1_000_000 == 0 ? 0 : 1))
    }

    private func nextDeadline() -> UInt64 {
        switch machine.state {
        case .connecting:
            return connectDeadline
        case .idle:
            return idleSince &+ idleTimeoutMillis
        case .active(let exchange):
            guard let transfer else { return .max }
            var deadline = transfer.totalDeadlineMillis
            if !exchange.responseStarted {
                deadline = min(deadline, transfer.firstByteDeadlineMillis)
            } else if let idle = transfer._options.timeouts.idle {
                deadline = min(deadline, lastReadMillis.adding(Self.millis(idle)))
            }
            return deadline
        case .closed:
            return .max
        }
    }

    private func rearmTimer() {
        let deadline = nextDeadline()
        guard deadline != .max, !closeRequested else { return }
        if timerDeadline == 0 || deadline < timerDeadline {
            let now = nowMillis
            uv_timer_start(timer, Self.onTimer, deadline > now ? deadline - now : 0, 0)
            timerDeadline = deadline
        }
    }

    private static let onTimer: uv_timer_cb = { timer in
        Unmanaged<HTTP1Connection>.fromOpaque(timer!.pointee.data).takeUnretainedValue().timerFired()
    }

    private func timerFired() {
        timerDeadline = 0
        let now = nowMillis
        switch machine.state {
        case .connecting:
            if now >= connectDeadline {
                failConnect(CourierError(.connectTimeout, "\(origin.host):\(origin.port)"))
                return
            }
        case .idle:
            if now >= idleSince &+ idleTimeoutMillis {
                closeIdle()
                return
            }
        case .active(let exchange):
            guard let transfer else { return }
            if now >= transfer.totalDeadlineMillis {
                perform(machine.timedOut(CourierError(.totalTimeout)))
                return
            }
            if !exchange.responseStarted, now >= transfer.firstByteDeadlineMillis {
                perform(machine.timedOut(CourierError(.firstByteTimeout)))
                return
            }
            if exchange.responseStarted, let idle = transfer._options.timeouts.idle,
               now >= lastReadMillis.adding(Self.millis(idle)) {
                perform(machine.timedOut(CourierError(.idleTimeout, "after \(transfer.metrics.bodyBytesReceived) body bytes")))
                return
            }
        case .closed:
            return
        }
        rearmTimer()
    }

    // MARK: - Closing

    private func closeConnection() {
        guard !closeRequested else { return }
        closeRequested = true
        if let tls, let tcp, tls.handshakeDone {
            // close_notify, best effort: the peer learns the close was deliberate.
            tls.shutdown()
            let alert = tls.outgoing.bytes
            if alert.count > 0, writesInFlight == 0 {
                var buffer = uv_buf_t(base: UnsafeMutablePointer(mutating: alert.baseAddress?.assumingMemoryBound(to: CChar.self)), len: alert.count)
                _ = uv_try_write(UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp)), &buffer, 1)
            }
            tls.outgoing.clear()
        }
        fileBody = nil
        uv_timer_stop(timer)
        Self.closeHandle(timer)
        if let tcp {
            Self.closeHandle(tcp)
            self.tcp = nil
        }
    }

    /// Closes a handle whose `data` holds a retained connection; the retain and the memory are
    /// released in the close callback, when libuv is done with both.
    private static func closeHandle<Handle>(_ handle: UnsafeMutablePointer<Handle>) {
        let raw = UnsafeMutablePointer<uv_handle_t>(OpaquePointer(handle))
        uv_close(raw) { handle in
            Unmanaged<HTTP1Connection>.fromOpaque(handle!.pointee.data).release()
            UnsafeMutableRawPointer(handle!).deallocate()
        }
    }
}

/// A write libuv finishes later: owns its bytes and its request until the callback.
private final class PendingWrite {
    let connection: HTTP1Connection
    let bytes: [UInt8]
    let final: Bool
    /// Request bytes this write completes (plaintext for TLS, where `bytes` is ciphertext).
    let reported: Int
    private let request: UnsafeMutablePointer<uv_write_t>

    init(connection: HTTP1Connection, bytes: [UInt8], final: Bool, reported: Int) {
        self.connection = connection
        self.bytes = bytes
        self.final = final
        self.reported = reported
        request = .allocate(capacity: 1)
    }

    func start(on stream: UnsafeMutablePointer<uv_stream_t>) -> Int32 {
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        let status = bytes.withUnsafeBytes { raw -> Int32 in
            // libuv copies the uv_buf_t array, not the bytes, which live in `self.bytes` until the
            // callback.
            var buffer = uv_buf_t(base: UnsafeMutablePointer(mutating: raw.baseAddress?.assumingMemoryBound(to: CChar.self)), len: raw.count)
            return uv_write(request, stream, &buffer, 1) { request, status in
                let pending = Unmanaged<PendingWrite>.fromOpaque(request!.pointee.data).takeRetainedValue()
                pending.connection.writeCompleted(pending, status: status)
            }
        }
        if status != 0 { Unmanaged<PendingWrite>.fromOpaque(request.pointee.data).release() }
        return status
    }

    deinit { request.deallocate() }
}

/// Streams a request body from a file in 64 KiB pieces.
final class FileBodyReader {
    @exclusivity(unchecked) private var fd: Int32
    private let path: String
    @exclusivity(unchecked) private(set) var remaining: UInt64

    private init(fd: Int32, path: String, remaining: UInt64) {
        self.fd = fd
        self.path = path
        self.remaining = remaining
    }

    deinit { if fd >= 0 { close(fd) } }

    static func open(path: String, expectedLength: UInt64) -> Result<FileBodyReader, CourierError> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))")) }
        return .success(FileBodyReader(fd: fd, path: path, remaining: expectedLength))
    }

    /// The size of a file, for Content-Length before it is opened for sending.
    static func size(of path: String) -> Result<UInt64, CourierError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))")) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(CourierError(.fileRead, "\(path): not a regular file")) }
        return .success(UInt64(info.st_size))
    }

    func readChunk() -> Result<[UInt8], CourierError> {
        let want = Int(min(remaining, 64 * 1024))
        var chunk = [UInt8](repeating: 0, count: want)
        var filled = 0
        while filled < want {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, want - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))"))
            }
            if n == 0 { return .failure(CourierError(.fileRead, "\(path): file shrank while being sent")) }
            filled += n
        }
        remaining -= UInt64(want)
        return .success(chunk)
    }
}
