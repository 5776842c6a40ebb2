import CUV
import Glibc

/// A TCP connection on the loop: resolution, connect racing the host's addresses (Happy
/// Eyeballs, RFC 8305: IPv6 and IPv4 interleaved, the next attempt 250 ms after the previous one
/// started or at once when it fails, the first to connect wins and the others are closed), reads
/// into the loop's shared buffer (`LoopReadBuffers`), and writes that try the kernel first.
///
/// Writes go out with `uv_try_write`, head and body as two iovecs: on a keep-alive connection a
/// small request leaves in that one `writev`, with nothing allocated or copied. Only what the
/// kernel did not take is copied into a `PendingWrite` that libuv finishes when the socket drains;
/// later writes queue behind it, so bytes never overtake each other.
///
/// Each libuv handle and request holds a retain on the stream that only its callback gives back:
/// the object outlives every callback libuv may still deliver, and a handle's memory is freed only
/// after `uv_close` completes (libuv's rule, and the bug FoundationNetworking had with
/// DispatchSource, swift-corelibs-foundation #4791).
package final class TCPStream: ByteStream {
    private let uvLoop: UnsafeMutablePointer<uv_loop_t>
    private let host: String
    private let port: UInt16
    private unowned(unsafe) let resolver: Resolver?
    /// A connected descriptor to adopt instead of connecting (tests over a socketpair).
    private let adoptedDescriptor: Int32?
    @exclusivity(unchecked) private unowned(unsafe) var delegate: ByteStreamDelegate?
    @exclusivity(unchecked) private var handle: UnsafeMutablePointer<uv_tcp_t>?
    @exclusivity(unchecked) private var closed = false
    @exclusivity(unchecked) private var connected = false
    @exclusivity(unchecked) private var addresses: [SocketAddress] = []
    @exclusivity(unchecked) private var addressIndex = 0
    /// Connects in flight and the address each tries (the race; `handle` is set once one wins).
    @exclusivity(unchecked) private var attempts: [(tcp: UnsafeMutablePointer<uv_tcp_t>, address: SocketAddress)] = []
    /// Starts the next attempt when the latest has not connected in time (made only for a host
    /// with several addresses).
    @exclusivity(unchecked) private var raceTimer: UnsafeMutablePointer<uv_timer_t>?
    /// RFC 8305 section 5's Connection Attempt Delay, curl's default too.
    package static let defaultAttemptDelayMillis: UInt64 = 250
    /// The delay this stream uses (curl's `--happy-eyeballs-timeout-ms`).
    private let attemptDelayMillis: UInt64
    /// What connecting does, for people (`-v`), when the request asked for it.
    @exclusivity(unchecked) package var trace: ConnectionTrace?
    @exclusivity(unchecked) private var lastConnectError: Int32 = 0
    @exclusivity(unchecked) private var writesInFlight = 0
    @exclusivity(unchecked) private var readingPaused = false
    @exclusivity(unchecked) package private(set) var timings = ConnectTimings()
    /// Whether `host:port` is a proxy: its failures to resolve or connect are the proxy's.
    private let toProxy: Bool
    /// Addresses given instead of a name lookup (curl's --resolve), and the family kept.
    private let givenAddresses: [SocketAddress]?
    private let family: ConnectRoute.Family
    /// The CONNECT exchange still to finish before the stream counts as open (a tunnel through
    /// a proxy); nil for a direct stream and once the tunnel is up.
    @exclusivity(unchecked) private var tunnel: TunnelHandshake?
    /// Where reads may land (see `ReadLanding`), and the one whose zone the read in progress got.
    @exclusivity(unchecked) package var readLanding: ReadLanding?
    @exclusivity(unchecked) private var landingInUse: ReadLanding?
    /// The read in progress takes one byte into the loop's buffer, then the rest into an array
    /// (`readIntoArray`).
    @exclusivity(unchecked) private var arrayRead = false

    /// A stream to `host:port`, resolved with `resolver` when it is not an IP literal. With
    /// `proxy`, `host:port` is an HTTP proxy; with `tunnel` too, the stream opens only once the
    /// proxy has answered its CONNECT.
    package init(host: String, port: UInt16, resolver: Resolver, uvLoop: UnsafeMutablePointer<uv_loop_t>,
                 proxy: Bool = false, tunnel: TunnelHandshake? = nil, addresses: [SocketAddress]? = nil,
                 family: ConnectRoute.Family = .any, attemptDelayMillis: UInt64 = TCPStream.defaultAttemptDelayMillis) {
        self.uvLoop = uvLoop
        self.attemptDelayMillis = attemptDelayMillis
        self.host = host
        self.port = port
        self.resolver = resolver
        adoptedDescriptor = nil
        toProxy = proxy || tunnel != nil
        self.tunnel = tunnel
        givenAddresses = addresses
        self.family = family
    }

    /// A stream over a descriptor that is already connected (one end of a socketpair in tests);
    /// the stream owns it from `open` on.
    package init(adopting descriptor: Int32, uvLoop: UnsafeMutablePointer<uv_loop_t>) {
        self.uvLoop = uvLoop
        host = "adopted"
        port = 0
        resolver = nil
        adoptedDescriptor = descriptor
        toProxy = false
        givenAddresses = nil
        family = .any
        attemptDelayMillis = Self.defaultAttemptDelayMillis
    }

    package var hasPendingWrites: Bool { writesInFlight > 0 }

    /// Where a TLS stream over this one decrypts (its loop's plaintext buffer).
    var plaintextBuffer: UnsafeMutableRawBufferPointer { LoopReadBuffers.plaintext(of: uvLoop) }

    // MARK: - Opening

    package func open(delegate: ByteStreamDelegate) {
        self.delegate = delegate
        if let descriptor = adoptedDescriptor {
            let tcp = makeHandle()
            handle = tcp
            let status = uv_tcp_open(tcp, uv_os_sock_t(descriptor))
            if status != 0 {
                failOpen(CourierError(.connectFailed, "adopt descriptor: \(String(cString: uv_err_name(status)))"))
                return
            }
            startReading(tcp)
            return
        }
        timings.dnsStart = monotonicNanos()
        if let givenAddresses {
            timings.dnsEnd = timings.dnsStart
            connect(to: givenAddresses)
            return
        }
        resolver!.resolve(host) { [self] result in
            guard !closed else { return }
            timings.dnsEnd = monotonicNanos()
            switch result {
            case .failure(let error):
                failOpen(error)
            case .success(let found):
                connect(to: found)
            }
        }
    }

    /// Tries `found` (of the family asked for) one after the other.
    private func connect(to found: [SocketAddress]) {
        let kept = family == .any ? found : found.filter { $0.isIPv6 == (family == .ipv6) }
        guard !kept.isEmpty else {
            // curl's codes: a name without an address of the family does not resolve (6); an
            // address literal of the other family cannot be connected to (7).
            let literal = SocketAddress(ipLiteral: host, port: 0) != nil
            failOpen(CourierError(literal ? .connectFailed : .dnsFailure, "\(host) has no \(family == .ipv6 ? "IPv6" : "IPv4") address"))
            return
        }
        addresses = Self.interleaved(kept).map { var a = $0; a.port = port; return a }
        timings.connectStart = monotonicNanos()
        tryNextAddress()
    }

    private func makeHandle() -> UnsafeMutablePointer<uv_tcp_t> {
        let tcp = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
        uv_tcp_init(uvLoop, tcp)
        tcp.pointee.data = Unmanaged.passRetained(self).toOpaque()
        return tcp
    }

    /// RFC 8305 section 4: the families alternate, starting with the resolver's first choice.
    static func interleaved(_ found: [SocketAddress]) -> [SocketAddress] {
        guard let first = found.first else { return found }
        let preferred = found.filter { $0.isIPv6 == first.isIPv6 }
        let other = found.filter { $0.isIPv6 != first.isIPv6 }
        guard !other.isEmpty else { return found }
        var out: [SocketAddress] = []
        for index in 0..<max(preferred.count, other.count) {
            if index < preferred.count { out.append(preferred[index]) }
            if index < other.count { out.append(other[index]) }
        }
        return out
    }

    /// Starts the next address's attempt (a fresh handle: one whose connect failed cannot be
    /// reused); with none left, fails once no attempt is in flight.
    private func tryNextAddress() {
        while addressIndex < addresses.count {
            let address = addresses[addressIndex]
            addressIndex += 1
            trace?.add("  Trying \(address)...")
            let tcp = makeHandle()
            let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
            request.pointee.data = Unmanaged.passRetained(self).toOpaque()
            let status = address.withSockaddr { uv_tcp_connect(request, tcp, $0, Self.onConnect) }
            if status != 0 {
                Unmanaged<TCPStream>.fromOpaque(request.pointee.data).release()
                request.deallocate()
                Self.closeHandle(tcp)
                lastConnectError = status
                traceFailedAttempt(address, status)
                continue
            }
            attempts.append((tcp, address))
            if addressIndex < addresses.count { armRace() }
            return
        }
        guard attempts.isEmpty else { return }
        let reason = lastConnectError == 0 ? "no address" : String(cString: uv_err_name(lastConnectError))
        let last = addresses.last.map { " \($0)" } ?? ""
        failOpen(CourierError(.connectFailed, "connect \(reason)\(last) (\(host))"))
    }

    /// The next attempt starts if this one has not connected within the attempt delay.
    private func armRace() {
        if raceTimer == nil {
            let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
            uv_timer_init(uvLoop, timer)
            timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
            raceTimer = timer
        }
        uv_timer_start(raceTimer, { timer in
            let stream = Unmanaged<TCPStream>.fromOpaque(timer!.pointee.data).takeUnretainedValue()
            guard !stream.closed, stream.handle == nil else { return }
            stream.tryNextAddress()
        }, attemptDelayMillis, 0)
    }

    private func endRace() {
        guard let timer = raceTimer else { return }
        raceTimer = nil
        uv_timer_stop(timer)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { $0?.deallocate() }
    }

    private static let onConnect: uv_connect_cb = { request, status in
        let stream = Unmanaged<TCPStream>.fromOpaque(request!.pointee.data).takeRetainedValue()
        let handle = request!.pointee.handle
        request!.deallocate()
        stream.connectFinished(status: status, handle: handle)
    }

    private func connectFinished(status: Int32, handle finished: UnsafeMutablePointer<uv_stream_t>?) {
        // A callback for an attempt given up on (closed, or lost the race) changes nothing.
        guard !closed, handle == nil,
              let index = attempts.firstIndex(where: { UnsafeMutableRawPointer($0.tcp) == finished.map({ UnsafeMutableRawPointer($0) }) })
        else { return }
        let (tcp, address) = attempts.remove(at: index)
        if status != 0 {
            Self.closeHandle(tcp)
            lastConnectError = status
            traceFailedAttempt(address, status)
            // A failure starts the next attempt at once (RFC 8305 section 5).
            if let timer = raceTimer { uv_timer_stop(timer) }
            tryNextAddress()
            return
        }
        // The winner: every other attempt is closed.
        for loser in attempts { Self.closeHandle(loser.tcp) }
        attempts = []
        endRace()
        handle = tcp
        timings.connectEnd = monotonicNanos()
        timings.remoteEndpoint = RemoteEndpoint(address)
        trace?.connected("Connected to \(toProxy ? "proxy " : "")\(host) (\(address.ipDescription)) port \(port)")
        // A pooled connection should hold nothing it no longer needs.
        addresses = []
        uv_tcp_nodelay(tcp, 1)
        startReading(tcp)
    }

    private func startReading(_ tcp: UnsafeMutablePointer<uv_tcp_t>) {
        let status = uv_read_start(UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp)), Self.onAlloc, Self.onRead)
        if status != 0 {
            failOpen(CourierError(.connectFailed, "read start: \(String(cString: uv_err_name(status)))"))
            return
        }
        connected = true
        if let tunnel {
            trace?.add("Establishing HTTP proxy tunnel to \(tunnel.target)")
            // Not open yet: the proxy must agree first. (The CONNECT's write completion is
            // nobody's business above.)
            tunnel.request.withUnsafeBytes { write($0, nil, final: false, reporting: 0) }
            return
        }
        delegate?.streamDidOpen()
    }

    /// Bytes of the proxy's answer to CONNECT (`nread` as libuv reported it).
    @inline(never)
    private func tunnelRead(_ nread: Int) {
        guard nread > 0 else {
            failOpen(nread == Int(UV_EOF.rawValue) ? tunnel!.closedEarly
                     : CourierError(.proxyTunnelClosed, String(cString: uv_err_name(Int32(nread)))))
            return
        }
        switch tunnel!.receive(UnsafeRawBufferPointer(start: LoopReadBuffers.socket(of: uvLoop), count: nread)) {
        case .needMore:
            break
        case .established:
            tunnel = nil
            trace?.add("CONNECT tunnel established")
            delegate?.streamDidOpen()
        case .failed(let error):
            failOpen(error)
        }
    }

    package func pauseReading() {
        guard !readingPaused, !closed, connected, let tcp = handle else { return }
        readingPaused = true
        uv_read_stop(UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp)))
    }

    package func resumeReading() {
        guard readingPaused, !closed, connected, let tcp = handle else { return }
        readingPaused = false
        let status = uv_read_start(UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp)), Self.onAlloc, Self.onRead)
        if status != 0 {
            delegate?.streamDidEnd(.failed(CourierError(.connectionReset, "read start: \(String(cString: uv_err_name(status)))")))
        }
    }

    private func failOpen(_ error: CourierError) {
        var error = error
        if toProxy {
            // The proxy's failures are not the origin's (curl's 5, not 6).
            if error.code == .dnsFailure {
                error = CourierError(.proxyResolve, "proxy " + (error.detail ?? host))
            } else if error.code == .connectFailed {
                error = CourierError(.proxyConnect, "proxy " + (error.detail ?? host))
            }
        }
        trace?.add(error.message)
        let told = delegate
        close()
        told?.streamDidFailToOpen(error)
    }

    @inline(never)
    private func traceFailedAttempt(_ address: SocketAddress, _ status: Int32) {
        trace?.add("connect to \(address.ipDescription) port \(port) failed: \(String(cString: uv_strerror(status)))")
    }

    /// This end's address, asked of the socket (getsockname) when someone wants it.
    package var localAddress: SocketAddress? {
        guard let handle else { return nil }
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { raw in
            raw.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                uv_tcp_getsockname(handle, address, &length) == 0 ? SocketAddress(address) : nil
            }
        }
    }

    /// The socket's descriptor, nil once the handle is gone.
    private var socketDescriptor: Int32? {
        guard let handle else { return nil }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(handle)), &fd) == 0 else { return nil }
        return fd
    }

    package var leasableSocket: Int32? {
        guard !closed, connected, tunnel == nil, writesInFlight == 0, !readingPaused else { return nil }
        return socketDescriptor
    }

    package func sendFile(_ file: Int32, count: Int) -> FileSend {
        guard !closed, connected, writesInFlight == 0, let fd = socketDescriptor else { return .unavailable }
        while true {
            let n = Glibc.sendfile(fd, file, nil, count)
            if n > 0 { return .sent(n) }
            if n == 0 { return .endOfFile }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .full
            case EINVAL, ENOSYS, EOPNOTSUPP: return .unavailable
            default:
                broke(CourierError(.sendFailed, String(cString: strerror(errno))))
                return .failed
            }
        }
    }

    // MARK: - Reading

    // The callbacks borrow the stream (`_withUnsafeGuaranteedRef`: no retain and release per
    // read; libuv's handle holds a retain until its close callback).
    private static let onAlloc: uv_alloc_cb = { handle, _, buffer in
        Unmanaged<TCPStream>.fromOpaque(handle!.pointee.data)._withUnsafeGuaranteedRef { $0.giveReadBuffer(buffer!) }
    }

    private static let onRead: uv_read_cb = { stream, nread, buffer in
        Unmanaged<TCPStream>.fromOpaque(stream!.pointee.data)._withUnsafeGuaranteedRef {
            $0.didRead(nread, into: buffer!.pointee.base)
        }
    }

    /// Where the next read goes: the loop's buffer, or a landing zone once an exchange's
    /// consumer offered one.
    @inline(__always)
    private func giveReadBuffer(_ buffer: UnsafeMutablePointer<uv_buf_t>) {
        if _slowPath(readLanding != nil), let landing = readLanding {
            if landing.readArrayCapacity > 0 {
                // One byte for libuv (which reads only into memory it is given up front); the
                // rest goes straight into an array made for it.
                landingInUse = landing
                arrayRead = true
                buffer.pointee = uv_buf_init(LoopReadBuffers.socket(of: uvLoop).assumingMemoryBound(to: CChar.self), 1)
                return
            }
            if let zone = landing.landingZone() {
                landingInUse = landing
                buffer.pointee = uv_buf_init(zone.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(zone.count))
                return
            }
        }
        buffer.pointee = uv_buf_init(LoopReadBuffers.socket(of: uvLoop).assumingMemoryBound(to: CChar.self),
                                     UInt32(LoopReadBuffers.socketSize))
    }

    /// A read into a landing zone: processed like any other, then the zone goes back, whatever
    /// the read brought (bytes, the end, an error).
    @inline(never)
    private func didReadIntoZone(_ nread: Int, into base: UnsafeMutablePointer<CChar>?) {
        let landing = landingInUse!
        landingInUse = nil
        if arrayRead {
            arrayRead = false
            if nread > 0, let base { readIntoArray(first: base, landing: landing) } else { receive(nread, at: base) }
        } else {
            receive(nread, at: base)
        }
        landing.landed()
    }

    /// After libuv's one byte: an array sized to what the socket holds (FIONREAD, up to the
    /// consumer's bound) takes the byte and the rest, and goes up whole. A failure of this `recv`
    /// (a reset that came between the two reads: the socket tells it once) is reported after the
    /// bytes, as libuv reports its own; an end it met is libuv's to find at its next read. (No
    /// descriptor: the byte goes up alone.)
    @inline(never)
    private func readIntoArray(first: UnsafeMutablePointer<CChar>, landing: ReadLanding) {
        guard let fd = socketDescriptor else { return receive(1, at: first) }
        var queued: Int32 = 0
        if ioctl(fd, UInt(FIONREAD), &queued) != 0 { queued = 0 }
        let capacity = max(1, min(landing.readArrayCapacity, 1 + Int(queued)))
        var failure: Int32 = 0
        let array = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            buffer[0] = UInt8(bitPattern: first.pointee)
            count = 1
            guard capacity > 1 else { return }
            let more = recv(fd, buffer.baseAddress! + 1, capacity - 1, Int32(MSG_DONTWAIT))
            if more > 0 {
                count += more
            } else if more < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                failure = errno
            }
        }
        landing.arrayArrived(array)
        array.withUnsafeBufferPointer { bytes in
            receive(bytes.count, at: UnsafeMutableRawPointer(mutating: bytes.baseAddress!).assumingMemoryBound(to: CChar.self))
        }
        // (libuv's codes are negative errnos.)
        if failure != 0 { receive(-Int(failure), at: nil) }
    }

    @inline(__always)
    private func didRead(_ nread: Int, into base: UnsafeMutablePointer<CChar>?) {
        if _slowPath(landingInUse != nil) { return didReadIntoZone(nread, into: base) }
        receive(nread, at: base)
    }

    /// `nread` bytes (or the end, or an error) arrived at `base`: the loop's buffer or a landing zone.
    @inline(__always)
    private func receive(_ nread: Int, at base: UnsafeMutablePointer<CChar>?) {
        guard !closed, let delegate else { return }
        if tunnel != nil { return tunnelRead(nread) }
        if nread > 0 {
            delegate.streamDidReceive(UnsafeRawBufferPointer(start: base, count: nread))
        } else if nread == Int(UV_EOF.rawValue) {
            delegate.streamDidEnd(resetInsteadOfEOF().map { .failed($0) } ?? .closed(closeNotify: nil))
        } else if nread < 0 {
            delegate.streamDidEnd(.failed(CourierError(.connectionReset, String(cString: uv_err_name(Int32(nread))))))
        }
    }

    /// libuv reports EOF, without reading again, when a partial read coincides with a hang-up;
    /// an RST that arrived with the data is then still pending in SO_ERROR. A reset is not a
    /// clean end (curl's 56, not 18), so ask the socket.
    private func resetInsteadOfEOF() -> CourierError? {
        guard let handle else { return nil }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(handle)), &fd) == 0 else { return nil }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == ECONNRESET else { return nil }
        return CourierError(.connectionReset, "ECONNRESET")
    }

    // MARK: - Writing

    package func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?, final: Bool) {
        write(first, second, final: final, reporting: first.count + (second?.count ?? 0))
    }

    /// `write`, reporting `reporting` bytes when done: a TLS stream above reports the plaintext
    /// its ciphertext carries.
    func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?, final: Bool, reporting: Int) {
        guard !closed, connected, let tcp = handle else { return }
        let total = first.count + (second?.count ?? 0)
        let stream = UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp))
        var written: Int32 = UV_EAGAIN.rawValue
        if writesInFlight == 0, total > 0 {
            var buffers = (uv_buf_t(base: UnsafeMutablePointer(mutating: first.baseAddress?.assumingMemoryBound(to: CChar.self)), len: first.count),
                           uv_buf_t(base: UnsafeMutablePointer(mutating: second?.baseAddress?.assumingMemoryBound(to: CChar.self)), len: second?.count ?? 0))
            let count: UInt32 = (second?.count ?? 0) > 0 ? 2 : 1
            written = withUnsafeMutablePointer(to: &buffers) { pointer in
                pointer.withMemoryRebound(to: uv_buf_t.self, capacity: 2) { uv_try_write(stream, $0, count) }
            }
        } else if total == 0 {
            written = 0
        }
        if written == Int32(total) {
            if reporting > 0 || final { delegate?.streamDidWrite(reporting, final: final) }
            return
        }
        if written < 0 && written != UV_EAGAIN.rawValue {
            broke(CourierError(.sendFailed, String(cString: uv_err_name(written))))
            return
        }
        // The kernel took part or none: copy the rest and let libuv finish it as the socket drains.
        let done = max(0, Int(written))
        var rest: [UInt8] = []
        rest.reserveCapacity(total - done)
        if done < first.count {
            rest.append(contentsOf: UnsafeRawBufferPointer(rebasing: first[done...]))
            if let second { rest.append(contentsOf: second) }
        } else if let second {
            rest.append(contentsOf: UnsafeRawBufferPointer(rebasing: second[(done - first.count)...]))
        }
        let pending = PendingWrite(stream: self, bytes: rest, final: final, reported: reporting)
        let status = pending.start(on: stream)
        if status != 0 {
            broke(CourierError(.sendFailed, String(cString: uv_err_name(status))))
            return
        }
        writesInFlight += 1
    }

    /// The stream broke: before a CONNECT tunnel is up the stream has not opened, so it failed
    /// to open (its owner has no open stream to end); afterwards it ended.
    private func broke(_ error: CourierError) {
        if tunnel != nil {
            failOpen(CourierError(.proxyTunnelClosed, "sending CONNECT: \(error.detail ?? error.message)"))
        } else {
            delegate?.streamDidEnd(.failed(error))
        }
    }

    fileprivate func writeCompleted(_ pending: PendingWrite, status: Int32) {
        writesInFlight -= 1
        guard !closed, let delegate else { return }
        if status < 0 {
            broke(CourierError(.sendFailed, String(cString: uv_err_name(status))))
            return
        }
        if pending.reported > 0 || pending.final { delegate.streamDidWrite(pending.reported, final: pending.final) }
    }

    /// Sends `bytes` now if the kernel takes them, without queueing or reporting: a TLS
    /// close_notify on the way out.
    func writeLastWords(_ bytes: UnsafeRawBufferPointer) {
        guard !closed, connected, writesInFlight == 0, bytes.count > 0, let tcp = handle else { return }
        var buffer = uv_buf_t(base: UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: CChar.self)), len: bytes.count)
        _ = uv_try_write(UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp)), &buffer, 1)
    }

    // MARK: - Closing

    package func close() {
        guard !closed else { return }
        closed = true
        delegate = nil
        readLanding = nil
        addresses = []
        for attempt in attempts { Self.closeHandle(attempt.tcp) }
        attempts = []
        endRace()
        if let handle {
            Self.closeHandle(handle)
            self.handle = nil
        }
    }

    /// Closes a handle whose `data` holds a retained stream; the retain and the memory are
    /// released in the close callback, when libuv is done with both.
    private static func closeHandle(_ handle: UnsafeMutablePointer<uv_tcp_t>) {
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(handle))) { handle in
            Unmanaged<TCPStream>.fromOpaque(handle!.pointee.data).release()
            UnsafeMutableRawPointer(handle!).deallocate()
        }
    }
}

/// A write libuv finishes later: owns its bytes and its request until the callback.
private final class PendingWrite {
    let stream: TCPStream
    let bytes: [UInt8]
    let final: Bool
    /// Bytes this write completes for the delegate (plaintext for TLS, where `bytes` is ciphertext).
    let reported: Int
    private let request: UnsafeMutablePointer<uv_write_t>

    init(stream: TCPStream, bytes: [UInt8], final: Bool, reported: Int) {
        self.stream = stream
        self.bytes = bytes
        self.final = final
        self.reported = reported
        request = .allocate(capacity: 1)
    }

    func start(on handle: UnsafeMutablePointer<uv_stream_t>) -> Int32 {
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
        let status = bytes.withUnsafeBytes { raw -> Int32 in
            // libuv copies the uv_buf_t array, not the bytes, which live in `self.bytes` until the
            // callback.
            var buffer = uv_buf_t(base: UnsafeMutablePointer(mutating: raw.baseAddress?.assumingMemoryBound(to: CChar.self)), len: raw.count)
            return uv_write(request, handle, &buffer, 1) { request, status in
                let pending = Unmanaged<PendingWrite>.fromOpaque(request!.pointee.data).takeRetainedValue()
                pending.stream.writeCompleted(pending, status: status)
            }
        }
        if status != 0 { Unmanaged<PendingWrite>.fromOpaque(request.pointee.data).release() }
        return status
    }

    deinit { request.deallocate() }
}
