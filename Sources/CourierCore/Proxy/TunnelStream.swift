/// A tunnel through a proxy (an HTTP proxy's CONNECT, or SOCKS5), as a filter over the stream
/// to the proxy: it opens only once the proxy agreed (its `ProxyHandshake` reads the answers),
/// and from then on passes every byte and call through untouched. TLS to the origin runs on top
/// of it, end to end.
///
/// Before the tunnel is up nothing is the delegate's business: the handshake's write completions
/// are the tunnel's, and a failure or close is a failure to open (the proxy's: curl's 56 for
/// CONNECT, 97 for SOCKS).
package final class TunnelStream: ByteStream, ByteStreamDelegate {
    /// Looks up a name for the handshake (on the loop thread; the completion may run at once).
    package typealias Resolve = (String, @escaping (Result<[SocketAddress], CourierError>) -> Void) -> Void

    private let lower: any ByteStream
    private var handshake: (any ProxyHandshake)?
    private let resolve: Resolve?
    private unowned(unsafe) var delegate: ByteStreamDelegate?
    private let trace: ConnectionTrace?
    private var closed = false

    /// A tunnel over `lower`, a stream to the proxy, opened by `handshake`; `resolve` answers a
    /// handshake that looks up the origin's name itself.
    package init(over lower: any ByteStream, handshake: any ProxyHandshake, trace: ConnectionTrace?, resolve: Resolve? = nil) {
        self.lower = lower
        self.handshake = handshake
        self.resolve = resolve
        self.trace = trace
    }

    package var hasPendingWrites: Bool { lower.hasPendingWrites }
    package var facts: StreamFacts { lower.facts }
    package var readLanding: ReadLanding? {
        get { lower.readLanding }
        set { lower.readLanding = newValue }
    }

    package func open(delegate: ByteStreamDelegate) {
        self.delegate = delegate
        lower.open(delegate: self)
    }

    package func handOver(to delegate: ByteStreamDelegate) { self.delegate = delegate }

    package func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?, final: Bool) {
        lower.write(first, second, final: final)
    }

    package func pauseReading() { lower.pauseReading() }
    package func resumeReading() { lower.resumeReading() }

    package func close() {
        guard !closed else { return }
        closed = true
        delegate = nil
        lower.close()
    }

    // MARK: - From the stream to the proxy

    package func streamDidOpen() {
        guard handshake != nil else { return }
        trace?.add(handshake!.opening)
        take(handshake!.start())
    }

    package func streamDidFailToOpen(_ error: CourierError) {
        // (The stream below traced its own failure.)
        let told = delegate
        close()
        told?.streamDidFailToOpen(error)
    }

    package func streamDidReceive(_ bytes: UnsafeRawBufferPointer) {
        guard handshake != nil else {
            delegate?.streamDidReceive(bytes)
            return
        }
        take(handshake!.receive(bytes))
    }

    /// Does what the handshake asked for.
    private func take(_ step: TunnelStep) {
        switch step {
        case .needMore:
            break
        case .send(let bytes):
            bytes.withUnsafeBytes { lower.write($0, nil, final: false) }
        case .resolve(let host):
            guard let resolve else { return failOpen(CourierError(.proxy, "no resolver for the proxy handshake")) }
            resolve(host) { [self] addresses in
                guard !closed, handshake != nil else { return }
                take(handshake!.resolved(addresses))
            }
        case .established:
            trace?.add(handshake!.openedNote)
            handshake = nil
            delegate?.streamDidOpen()
        case .failed(let error):
            failOpen(error)
        }
    }

    package func streamDidWrite(_ count: Int, final: Bool) {
        // (The handshake's own completions are nobody's business above.)
        guard handshake == nil else { return }
        delegate?.streamDidWrite(count, final: final)
    }

    package func streamDidEnd(_ end: StreamEnd) {
        guard let handshake else {
            delegate?.streamDidEnd(end)
            return
        }
        switch end {
        case .closed:
            failOpen(handshake.closedEarly)
        case .failed(let error):
            failOpen(handshake.broken(error))
        }
    }

    private func failOpen(_ error: CourierError) {
        trace?.add(error.message)
        let told = delegate
        close()
        told?.streamDidFailToOpen(error)
    }
}
