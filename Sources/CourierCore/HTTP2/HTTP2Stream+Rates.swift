/// The rate limits on an HTTP/2 stream (curl's `--limit-rate`; `TransferOptions`'
/// `receiveRateLimit` and `sendRateLimit`).
///
/// HTTP/1 holds a download back by not reading its socket; an HTTP/2 stream shares its socket,
/// so a rate-limited stream keeps the bytes that came ahead of its schedule (at most its window:
/// it never grows, and the server may not send more until the bytes are delivered) and hands
/// them to the transfer as the schedule allows. The consumer therefore sees the rate, the
/// server is held to it within one window, and the other streams run at full speed.
/// Upload pieces wait in `pullBody` for their turn the same way.
extension HTTP2Stream {
    /// Whether bytes wait for the receive rate.
    var holdsPacedBytes: Bool { pacedOffset < paced.count }

    /// Body bytes of a rate-limited stream: delivered now when on schedule, kept otherwise.
    func paceReceived(_ bytes: UnsafeRawBufferPointer, now: UInt64) {
        if pacedOffset == paced.count {
            paced.removeAll(keepingCapacity: true)
            pacedOffset = 0
        }
        paced.append(contentsOf: bytes)
        if !transfer.pausedByConsumer { deliverPaced(now: now) }
    }

    /// Delivers the kept bytes in pieces, each when the bytes before it and its own are on the
    /// receive rate's schedule; arms the timer for the next piece.
    func deliverPaced(now: UInt64) {
        guard var pacer = receivePacer else { return }
        while pacedOffset < paced.count, !reported, !transfer.pausedByConsumer {
            let piece = min(pacer.pieceSize, paced.count - pacedOffset)
            guard pacer.mayGo(size: piece, handed: pacedDelivered, now: now) else {
                receivePacer = pacer
                machine.windowHeld(true, by: .rate, now: now)
                connection.arm(pacer.resumeAt)
                return
            }
            pacedDelivered += UInt64(piece)
            let start = pacedOffset
            pacedOffset += piece
            paced.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[start..<start + piece]), now: now) }
        }
        receivePacer = pacer
        machine.windowHeld(false, by: .rate, now: now)
    }

    /// The connection's timer fired: a piece that waited for a rate may go.
    func paceTimerFired(now: UInt64) {
        guard !reported else { return }
        if receivePacer?.timerFired(now: now) == true {
            deliverPaced(now: now)
            finishHeldEnd()
        }
        if sendPacer?.timerFired(now: now) == true, id > 0 {
            connection.session.resumeBody(streamID: id)
        }
    }
}
