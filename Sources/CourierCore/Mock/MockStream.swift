import CUV

/// The byte stream of a connection to a `MockServer`: what Courier writes is read back as
/// requests (`MockRequestReader`), each answered by the server's handler, and the replies come
/// back as bytes Courier's HTTP/1.1 parser reads. Events are reported on a later loop turn, as a
/// socket's would be, and held while reading is paused.
final class MockStream: ByteStream {
    private let server: MockServer
    private let uvLoop: UnsafeMutablePointer<uv_loop_t>
    private var reader = MockRequestReader()
    private weak var delegate: ByteStreamDelegate?
    private var paused = false
    private var closed = false
    /// Replies not yet handed to the delegate (reading paused, or their turn not come).
    private var pending: [[UInt8]] = []

    init(server: MockServer, uvLoop: UnsafeMutablePointer<uv_loop_t>) {
        self.server = server
        self.uvLoop = uvLoop
    }

    var hasPendingWrites: Bool { false }
    var readLanding: ReadLanding? {
        get { nil }
        set {}
    }
    var facts: StreamFacts {
        var facts = StreamFacts()
        facts.bytesAreOnSocket = false
        return facts
    }

    func open(delegate: ByteStreamDelegate) {
        self.delegate = delegate
        later { [self] in delegate.streamDidOpen() }
    }

    func handOver(to delegate: ByteStreamDelegate) { self.delegate = delegate }

    func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?, final: Bool) {
        guard !closed else { return }
        var events = reader.take(first)
        if let second { events += reader.take(second) }
        let count = first.count + (second?.count ?? 0)
        later { [self] in delegate?.streamDidWrite(count, final: final) }
        for event in events {
            switch event {
            case .expectsContinue:
                pending.append(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            case .request(let request):
                pending.append(MockServer.encode(server.answer(request), forHead: request.method == "HEAD"))
            case .malformed(let problem):
                later { [self] in delegate?.streamDidEnd(.failed(CourierError(.malformedResponse, "the mock server: \(problem)"))) }
                return
            }
        }
        deliverLater()
    }

    func pauseReading() { paused = true }

    func resumeReading() {
        paused = false
        deliverLater()
    }

    func close() {
        closed = true
        delegate = nil
        pending = []
    }

    /// Hands the pending replies over on a later turn, unless paused.
    private func deliverLater() {
        guard !pending.isEmpty else { return }
        later { [self] in
            while !paused, !closed, !pending.isEmpty {
                let reply = pending.removeFirst()
                reply.withUnsafeBytes { delegate?.streamDidReceive($0) }
            }
        }
    }

    private func later(_ body: @escaping () -> Void) {
        OneShotTimer.start(on: uvLoop, after: 0) { [weak self] in
            guard let self, !self.closed else { return }
            body()
        }
    }
}
