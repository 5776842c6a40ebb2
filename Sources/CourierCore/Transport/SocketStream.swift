import CUV
import Glibc

/// A TCP socket on the loop, or a Unix domain one: the bottom filter of every connection's stack.
/// It opens by having an `AddressRacer` dial, by connecting to a Unix socket, or by adopting a
/// connected descriptor, then reads into the loop's
/// shared buffer (`LoopReadBuffers`, or a consumer's landing zone: `SocketStream+Reads`) and
/// writes trying the kernel first.
///
/// Writes go out with `uv_try_write`, head and body as two iovecs: on a keep-alive connection a
/// small request leaves in that one `writev`, with nothing allocated or copied. Only what the
/// kernel did not take is copied into a `PendingWrite` that libuv finishes when the socket drains;
/// later writes queue behind it, so bytes never overtake each other.
///
/// The handle holds a retain on the stream that only its close callback gives back: the object
/// outlives every callback libuv may still deliver, and the handle's memory is freed only after
/// `uv_close` completes (libuv's rule, and the bug FoundationNetworking had with DispatchSource,
/// swift-corelibs-foundation #4791).
package final class SocketStream: ByteStream {
    let uvLoop: UnsafeMutablePointer<uv_loop_t>
    /// Who dials, until the socket is connected (nil for an adopted descriptor, and afterwards).
    private var racer: AddressRacer?
    /// A connected descriptor to adopt instead of dialling (tests over a socketpair).
    private let adoptedDescriptor: Int32?
    /// The Unix domain socket to connect to instead of dialling.
    private let unixSocket: ConnectRoute.UnixSocket?
    @exclusivity(unchecked) unowned(unsafe) var delegate: ByteStreamDelegate?
    /// The libuv stream: a `uv_tcp_t`, or a `uv_pipe_t` for a Unix socket.
    @exclusivity(unchecked) var handle: UnsafeMutablePointer<uv_stream_t>?
    @exclusivity(unchecked) var closed = false
    @exclusivity(unchecked) private var connected = false
    @exclusivity(unchecked) private var writesInFlight = 0
    @exclusivity(unchecked) var readingPaused = false
    @exclusivity(unchecked) private var timings = ConnectTimings()
    /// Where reads may land (see `ReadLanding`), and the one whose zone the read in progress got.
    @exclusivity(unchecked) package var readLanding: ReadLanding?
    @exclusivity(unchecked) var landingInUse: ReadLanding?
    /// The read in progress takes one byte into the loop's buffer, then the rest into an array
    /// (`readIntoArray`).
    @exclusivity(unchecked) var arrayRead = false

    /// A socket that `racer` dials when it opens.
    package init(dialing racer: AddressRacer, uvLoop: UnsafeMutablePointer<uv_loop_t>) {
        self.racer = racer
        self.uvLoop = uvLoop
        adoptedDescriptor = nil
        unixSocket = nil
    }

    /// A socket that connects to the Unix domain socket `socket` when it opens.
    package init(connectingTo socket: ConnectRoute.UnixSocket, uvLoop: UnsafeMutablePointer<uv_loop_t>) {
        self.uvLoop = uvLoop
        adoptedDescriptor = nil
        unixSocket = socket
    }

    /// A socket over a descriptor that is already connected (one end of a socketpair in tests);
    /// the stream owns it from `open` on.
    package init(adopting descriptor: Int32, uvLoop: UnsafeMutablePointer<uv_loop_t>) {
        self.uvLoop = uvLoop
        adoptedDescriptor = descriptor
        unixSocket = nil
    }

    package var hasPendingWrites: Bool { writesInFlight > 0 }

    package var facts: StreamFacts {
        var facts = StreamFacts()
        facts.timings = racer?.timings ?? timings
        facts.socket = self
        return facts
    }

    // MARK: - Opening

    package func handOver(to delegate: ByteStreamDelegate) { self.delegate = delegate }

    package func open(delegate: ByteStreamDelegate) {
        self.delegate = delegate
        if let descriptor = adoptedDescriptor {
            open(descriptor: descriptor, pipe: false)
            return
        }
        if let unixSocket {
            // (A local connect is decided at once: no racer, no callback.)
            switch UnixSocketConnect.connect(unixSocket) {
            case .failure(let error): failOpen(error)
            case .success(let descriptor): open(descriptor: descriptor, pipe: true)
            }
            return
        }
        racer?.start { [unowned(unsafe) self] result in
            guard !closed else { return }
            timings = racer?.timings ?? timings
            racer = nil
            switch result {
            case .success(let tcp):
                adopt(Self.stream(tcp))
                uv_tcp_nodelay(tcp, 1)
                startReading()
            case .failure(let error):
                failOpen(error)
            }
        }
    }

    /// Takes a connected descriptor as this stream's handle (a TCP socket, or a Unix socket
    /// through a pipe handle) and starts reading. The descriptor is this stream's from here:
    /// closed when libuv will not take it.
    private func open(descriptor: Int32, pipe: Bool) {
        let status: Int32
        if pipe {
            let handle = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
            uv_pipe_init(uvLoop, handle, 0)
            adopt(UnsafeMutablePointer<uv_stream_t>(OpaquePointer(handle)))
            status = uv_pipe_open(handle, uv_file(descriptor))
        } else {
            let tcp = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
            uv_tcp_init(uvLoop, tcp)
            adopt(Self.stream(tcp))
            status = uv_tcp_open(tcp, uv_os_sock_t(descriptor))
        }
        if status != 0 {
            Glibc.close(descriptor)
            failOpen(CourierError(.connectFailed, "open descriptor: \(String(cString: uv_err_name(status)))"))
            return
        }
        startReading()
    }

    private static func stream(_ tcp: UnsafeMutablePointer<uv_tcp_t>) -> UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutablePointer<uv_stream_t>(OpaquePointer(tcp))
    }

    /// Takes `stream` as this stream's handle (its `data` retains the stream until the close callback).
    private func adopt(_ stream: UnsafeMutablePointer<uv_stream_t>) {
        stream.pointee.data = Unmanaged.passRetained(self).toOpaque()
        handle = stream
    }

    private func startReading() {
        guard let handle else { return }
        let status = uv_read_start(handle, Self.onAlloc, Self.onRead)
        if status != 0 {
            failOpen(CourierError(.connectFailed, "read start: \(String(cString: uv_err_name(status)))"))
            return
        }
        connected = true
        delegate?.streamDidOpen()
    }

    private func failOpen(_ error: CourierError) {
        let told = delegate
        close()
        told?.streamDidFailToOpen(error)
    }

    package func pauseReading() {
        guard !readingPaused, !closed, connected, let handle else { return }
        readingPaused = true
        uv_read_stop(handle)
    }

    package func resumeReading() {
        guard readingPaused, !closed, connected, let handle else { return }
        readingPaused = false
        let status = uv_read_start(handle, Self.onAlloc, Self.onRead)
        if status != 0 {
            delegate?.streamDidEnd(.failed(CourierError(.connectionReset, "read start: \(String(cString: uv_err_name(status)))")))
        }
    }

    // MARK: - The socket itself

    /// This end's address, asked of the socket (getsockname) when someone wants it (nil for a
    /// Unix socket).
    package var localAddress: SocketAddress? {
        guard let descriptor = socketDescriptor else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { raw in
            raw.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                getsockname(descriptor, address, &length) == 0 ? SocketAddress(address) : nil
            }
        }
    }

    /// The socket's descriptor, nil once the handle is gone.
    var socketDescriptor: Int32? {
        guard let handle else { return nil }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(handle)), &fd) == 0 else { return nil }
        return fd
    }

    /// The descriptor, for lending the socket's reads to a body's consumer (see `ReadLease`):
    /// nil unless it is open and reading, and nothing waits to be written.
    package var leasableDescriptor: Int32? {
        guard !closed, connected, writesInFlight == 0, !readingPaused else { return nil }
        return socketDescriptor
    }

    /// Up to `count` bytes of the regular file `file`, from its offset, sent straight from the page
    /// cache (sendfile: no copy through memory of ours). Not reported to the delegate: the caller
    /// counts them and reports them as a write. Only between writes (nothing queued).
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
                delegate?.streamDidEnd(.failed(CourierError(.sendFailed, String(cString: strerror(errno)))))
                return .failed
            }
        }
    }

    // MARK: - Writing

    package func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?, final: Bool) {
        guard !closed, connected, let stream = handle else { return }
        let total = first.count + (second?.count ?? 0)
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
            if total > 0 || final { delegate?.streamDidWrite(total, final: final) }
            return
        }
        if written < 0 && written != UV_EAGAIN.rawValue {
            delegate?.streamDidEnd(.failed(CourierError(.sendFailed, String(cString: uv_err_name(written)))))
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
        let pending = PendingWrite(stream: self, bytes: rest, final: final, reported: total)
        let status = pending.start(on: stream)
        if status != 0 {
            delegate?.streamDidEnd(.failed(CourierError(.sendFailed, String(cString: uv_err_name(status)))))
            return
        }
        writesInFlight += 1
    }

    fileprivate func writeCompleted(_ pending: PendingWrite, status: Int32) {
        writesInFlight -= 1
        guard !closed, let delegate else { return }
        if status < 0 {
            delegate.streamDidEnd(.failed(CourierError(.sendFailed, String(cString: uv_err_name(status)))))
            return
        }
        if pending.reported > 0 || pending.final { delegate.streamDidWrite(pending.reported, final: pending.final) }
    }

    // MARK: - Closing

    package func close() {
        guard !closed else { return }
        closed = true
        delegate = nil
        readLanding = nil
        racer?.cancel()
        racer = nil
        if let handle {
            Self.closeHandle(handle)
            self.handle = nil
        }
    }

    /// Closes a handle whose `data` holds a retained stream; the retain and the memory are
    /// released in the close callback, when libuv is done with both.
    private static func closeHandle(_ handle: UnsafeMutablePointer<uv_stream_t>) {
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(handle))) { handle in
            if let data = handle!.pointee.data { Unmanaged<SocketStream>.fromOpaque(data).release() }
            UnsafeMutableRawPointer(handle!).deallocate()
        }
    }
}

/// A write libuv finishes later: owns its bytes and its request until the callback.
private final class PendingWrite {
    let stream: SocketStream
    let bytes: [UInt8]
    let final: Bool
    /// Bytes this write completes for the delegate.
    let reported: Int
    private let request: UnsafeMutablePointer<uv_write_t>

    init(stream: SocketStream, bytes: [UInt8], final: Bool, reported: Int) {
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
