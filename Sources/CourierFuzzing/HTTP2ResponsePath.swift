import CourierCore
import CUV

/// Fuzz target: bytes an HTTP/2 server sends, through the whole h2 response path — nghttp2's
/// frame and HPACK decoding, `HTTP2Connection` and its machine, the streams, the transfers'
/// heads, bodies, trailers and content decoding — split into reads at input-chosen points.
///
/// Input: byte 0 chooses options (bits 0-1: how many requests are open at once, 1 to 3; bit 2
/// decompress; bit 3 tight limits; bit 4 a HEAD request; bit 5 the stream ends in a reset
/// rather than a close), bytes 1-2 seed the read splits, the rest is the wire (frames after the
/// connection preface, which a server does not send).
///
/// Checked: every stream ends exactly once, whatever the bytes (never a hang at the end of the
/// stream, never a second report), and the connection is closed with nothing left.
package enum HTTP2ResponsePath {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 3 else { return }
        let flags = input[0]
        var random = SplitRandom(seed: UInt64(input[1]) | UInt64(input[2]) << 8)
        let wire = UnsafeRawBufferPointer(rebasing: input[3...])
        var options = TransferOptions()
        options.decompress = flags & 4 != 0
        options.httpVersion = .http2Only
        if flags & 8 != 0 {
            var limits = ResponseLimits()
            limits.maxHeaderBytes = 512
            limits.maxHeaderCount = 8
            limits.maxBodyBytes = 2_000
            limits.maxDecodedBytes = 4_000
            options.limits = limits
        }
        let owner = Owner()
        let stream = MemoryStream()
        stream.open(delegate: Opened())
        let connection = HTTP2Connection(id: 1, poolKey: 0, origin: Origin(scheme: .http, host: "fuzz.example", port: 80),
                                         stream: stream, owner: owner, uvLoop: Rig.loop,
                                         limits: HTTP2ConnectionStateMachine.Limits(idle: .max))
        let requests = 1 + Int(flags & 3) % 3
        var transfers: [Transfer] = []
        for index in 0..<requests {
            let transfer = Transfer(url: try! CourierURL(parsing: "http://fuzz.example/r\(index)"),
                                    method: flags & 16 != 0 ? .head : .get, options: options)
            precondition(Admission.check(transfer) == nil)
            _ = transfer.machine.accept(refusal: nil, queueDeadline: .max)
            _ = transfer.machine.started(totalDeadline: .max)
            transfer.machine.connectionAssigned()
            transfers.append(transfer)
            connection.begin(transfer)
        }
        var offset = 0
        while offset < wire.count, owner.finished.count < requests, !stream.closed {
            let size = 1 + Int(random.next() % UInt64(min(wire.count - offset, 400)))
            stream.receive(UnsafeRawBufferPointer(rebasing: wire[offset..<(offset + size)]))
            offset += size
        }
        if owner.finished.count < requests {
            stream.end(flags & 32 != 0 ? .failed(CourierError(.connectionReset)) : .closed(closeNotify: nil))
        }
        for transfer in transfers {
            let ends = owner.finished.filter { $0 === transfer }.count
            precondition(ends == 1, "a stream ended \(ends) times")
        }
        connection.closeFromPool()
        precondition(owner.closed, "the connection did not close")
        uv_run(Rig.loop, UV_RUN_NOWAIT)
    }

    private enum Rig {
        nonisolated(unsafe) static let loop: UnsafeMutablePointer<uv_loop_t> = {
            let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
            precondition(uv_loop_init(loop) == 0)
            return loop
        }()
    }

    /// Stands in for the connection that opened the stream before handing it over.
    private final class Opened: ByteStreamDelegate {
        func streamDidOpen() {}
        func streamDidFailToOpen(_ error: CourierError) {}
        func streamDidReceive(_ bytes: UnsafeRawBufferPointer) {}
        func streamDidWrite(_ count: Int, final: Bool) {}
        func streamDidEnd(_ end: StreamEnd) {}
    }

    private final class Owner: HTTP2ConnectionDelegate {
        var finished: [Transfer] = []
        var closed = false
        func approveStatusRetry(_ transfer: Transfer, status: Int) -> Bool { true }
        func http2CapacityChanged(_ connection: HTTP2Connection, limit: Int) {}
        func http2ConnectionDraining(_ connection: HTTP2Connection) {}
        func http2ConnectionClosed(_ connection: HTTP2Connection) { closed = true }
        func http2StreamFinished(_ connection: HTTP2Connection, _ transfer: Transfer, outcome: ExchangeOutcome) {
            finished.append(transfer)
        }
    }
}
