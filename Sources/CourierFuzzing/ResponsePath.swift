import CourierCore
import CUV

/// Fuzz target: bytes a server sends, through the whole response path of one connection — the
/// HTTP/1 connection and its machine, llhttp and the C head recorder, chunked decoding and
/// trailers, content decoding, redirect decisions — split into reads at input-chosen points, with
/// the stream ending as TCP or TLS would end it.
///
/// Input: byte 0 chooses options (bit 0 decompress, 1 follow redirects, 2 HEAD, 3 tight limits,
/// 4-5 how the stream ends: TCP, TLS with close_notify, TLS cut), 6 a second exchange on the
/// same connection with whatever follows the first response), bytes 1-2 seed the read splits,
/// the rest is the wire.
///
/// Checked: every exchange ends exactly once (never a hang after the end of stream), a success
/// has a final status unless it is a redirect to follow, and a second exchange only happens on a
/// connection the machine kept.
package enum ResponsePath {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 3 else { return }
        let flags = input[0]
        var random = SplitRandom(seed: UInt64(input[1]) | UInt64(input[2]) << 8)
        let wire = UnsafeRawBufferPointer(rebasing: input[3...])
        var options = TransferOptions()
        options.decompress = flags & 1 != 0
        options.redirects = RedirectPolicy(follow: flags & 2 != 0)
        if flags & 8 != 0 {
            var limits = ResponseLimits()
            limits.maxHeaderBytes = 512
            limits.maxHeaderCount = 8
            limits.maxBodyBytes = 2_000
            limits.maxDecodedBytes = 4_000
            options.limits = limits
        }
        let end: StreamEnd
        switch (flags >> 4) & 3 {
        case 1: end = .closed(closeNotify: true)
        case 2: end = .closed(closeNotify: false)
        default: end = .closed(closeNotify: nil)
        }
        let exchanges = flags & 64 != 0 ? 2 : 1

        let loop = Rig.loop
        let owner = Owner()
        let stream = MemoryStream()
        let connection = HTTP1Connection(id: 1, poolKey: 0, origin: Origin(scheme: .http, host: "fuzz.example", port: 80),
                                         stream: stream, owner: owner, resources: Rig.resources, uvLoop: loop,
                                         connectTimeout: nil)
        connection.connect()
        precondition(owner.established == 1, "the stream opened but the owner was not told")

        var offset = 0
        for exchange in 0..<exchanges {
            guard connection.machine.isIdle else { break }
            let transfer = Transfer(url: try! CourierURL(parsing: "http://fuzz.example/r\(exchange)"),
                                    method: flags & 4 != 0 ? .head : .get, options: options)
            precondition(Admission.check(transfer) == nil)
            // The transfer's own machine goes where the executor would take it.
            _ = transfer.machine.accept(refusal: nil, queueDeadline: .max)
            _ = transfer.machine.started(totalDeadline: .max)
            transfer.machine.connectionAssigned()
            let before = owner.finished
            connection.begin(transfer)
            // Reads of input-chosen sizes until the exchange ends or the wire runs out.
            while offset < wire.count, owner.finished == before {
                let size = 1 + Int(random.next() % UInt64(min(wire.count - offset, 300)))
                stream.receive(UnsafeRawBufferPointer(rebasing: wire[offset..<(offset + size)]))
                offset += size
            }
            if owner.finished == before { stream.end(end) }
            precondition(owner.finished == before + 1, "an exchange did not end at the end of the stream")
            if owner.lastSucceeded, !transfer.machine.followsRedirect {
                // (A redirect to follow has no final status yet: the next hop brings it.)
                precondition(transfer.status >= 200 && transfer.status <= 999, "success without a status")
            }
        }
        connection.closeFromPool()
        // Close callbacks (the connection's timer) run here, so nothing outlives the input.
        uv_run(loop, UV_RUN_NOWAIT)
    }

    /// The loop the connections' timers live on (never run but for close callbacks) and the
    /// memory every connection borrows.
    private enum Rig {
        nonisolated(unsafe) static let loop: UnsafeMutablePointer<uv_loop_t> = {
            let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
            precondition(uv_loop_init(loop) == 0)
            return loop
        }()
        nonisolated(unsafe) static let resources = HTTP1Resources()
    }

    private final class Owner: HTTP1ConnectionDelegate {
        var established = 0
        var finished = 0
        var lastSucceeded = false

        func connectionEstablished(_ connection: HTTP1Connection) { established += 1 }
        func connectionFailed(_ connection: HTTP1Connection, error: CourierError) {}
        func idleConnectionClosed(_ connection: HTTP1Connection) {}
        func approveStatusRetry(_ transfer: Transfer, status: Int) -> Bool { true }
        func exchangeFinished(_ connection: HTTP1Connection, _ transfer: Transfer, outcome: ExchangeOutcome) {
            finished += 1
            if case .success = outcome { lastSucceeded = true } else { lastSucceeded = false }
            if case .success(reusable: true) = outcome { connection.becameIdle() }
        }
    }
}

/// A byte stream in memory: the fuzzer (or a test) plays the server, and sees what was written.
package final class MemoryStream: ByteStream {
    private unowned(unsafe) var delegate: ByteStreamDelegate?
    package private(set) var closed = false
    /// Everything written so far, when `keepsWrites` (the fuzzer does not keep it).
    package private(set) var written: [UInt8] = []
    private let keepsWrites: Bool

    package init(keepsWrites: Bool = false) {
        self.keepsWrites = keepsWrites
    }

    package func open(delegate: ByteStreamDelegate) {
        self.delegate = delegate
        delegate.streamDidOpen()
    }

    package func handOver(to delegate: ByteStreamDelegate) { self.delegate = delegate }

    package func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer?, final: Bool) {
        guard !closed else { return }
        if keepsWrites {
            written += first
            if let second { written += second }
        }
        delegate?.streamDidWrite(first.count + (second?.count ?? 0), final: final)
    }

    package var hasPendingWrites: Bool { false }
    package var facts: StreamFacts { StreamFacts() }
    package var readLanding: ReadLanding?
    /// Pausing is the caller's to honour: the fuzzer keeps feeding, as a read in progress does.
    package private(set) var paused = false
    package func pauseReading() { paused = true }
    package func resumeReading() { paused = false }

    package func close() {
        closed = true
        delegate = nil
    }

    /// The server sends `bytes` (one read).
    package func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !closed else { return }
        delegate?.streamDidReceive(bytes)
    }

    /// The stream ends as `end` says.
    package func end(_ end: StreamEnd) {
        guard !closed else { return }
        delegate?.streamDidEnd(end)
    }
}

/// A small deterministic generator (SplitMix64), so a fuzz input always splits the same way
/// (and a failing seed of a randomized test can be replayed).
package struct SplitRandom {
    private var state: UInt64
    package init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
