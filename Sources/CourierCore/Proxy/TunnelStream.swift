/// A CONNECT tunnel through an HTTP proxy, as a filter over the stream to the proxy: it opens
/// only once the proxy agreed (`TunnelHandshake` reads the answer), and from then on passes every
/// byte and call through untouched. TLS to the origin runs on top of it, end to end.
///
/// Before the tunnel is up nothing is the delegate's business: the CONNECT's write completion is
/// the tunnel's, and a failure or close is a failure to open (the proxy's, curl's 56).
package final class TunnelStream: ByteStream, ByteStreamDelegate {
    private let lower: any ByteStream
    private var handshake: TunnelHandshake?
    private unowned(unsafe) var delegate: ByteStreamDelegate?
    private let trace: ConnectionTrace?
    private var closed = false

    /// A tunnel to `target` (`host:port`) over `lower`, a stream to the proxy.
    package init(over lower: any ByteStream, target: String, authorization: String?, trace: ConnectionTrace?) {
        self.lower = lower
        handshake = TunnelHandshake(target: target, authorization: authorization)
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
        guard let handshake else { return }
        trace?.add("Establishing HTTP proxy tunnel to \(handshake.target)")
        handshake.request.withUnsafeBytes { lower.write($0, nil, final: false) }
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
        switch handshake!.receive(bytes) {
        case .needMore:
            break
        case .established:
            handshake = nil
            trace?.add("CONNECT tunnel established")
            delegate?.streamDidOpen()
        case .failed(let error):
            failOpen(error)
        }
    }

    package func streamDidWrite(_ count: Int, final: Bool) {
        // (The CONNECT's own completion is nobody's business above.)
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
            failOpen(CourierError(.proxyTunnelClosed, "during CONNECT: \(error.detail ?? error.message)"))
        }
    }

    private func failOpen(_ error: CourierError) {
        trace?.add(error.message)
        let told = delegate
        close()
        told?.streamDidFailToOpen(error)
    }
}
