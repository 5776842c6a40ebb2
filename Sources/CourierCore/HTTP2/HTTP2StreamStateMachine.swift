/// One HTTP/2 stream's exchange as a value: its phase and the transfer's deadlines (first byte,
/// silence, total), which on HTTP/1 the connection's machine keeps. The connection's timer asks
/// every open stream's machine; the one whose deadline passed fails alone.
package struct HTTP2StreamStateMachine: Equatable {
    package enum Phase: Equatable {
        /// The request is being sent (headers, then the body).
        case sending
        /// Sent; no final head yet.
        case awaitingHead
        /// The final head arrived; body bytes (and trailers) follow.
        case receivingBody
        /// Ended (completed, failed or reset).
        case closed
    }

    package private(set) var phase = Phase.sending
    /// Whether any response frame arrived for the stream (a stream without one may be retried
    /// elsewhere when the connection dies, if its method is idempotent).
    package private(set) var responseStarted = false
    private let totalDeadline: UInt64
    private let firstByteLimit: UInt64
    private let idleLimit: UInt64
    private var firstByteDeadline: UInt64
    private var lastReadAt: UInt64
    /// Why the stream's window is held shut (the consumer's pause, the receive rate): no
    /// silence runs meanwhile (the window stops the server).
    package private(set) var pauses: ReceiveFlow.Pauses = []

    /// A stream begun at `now` with the transfer's limits, in milliseconds (`.max`: none).
    package init(now: UInt64, totalDeadline: UInt64, firstByteLimit: UInt64, idleLimit: UInt64) {
        self.totalDeadline = totalDeadline
        self.firstByteLimit = firstByteLimit
        self.idleLimit = idleLimit
        firstByteDeadline = firstByteLimit == .max ? .max : now &+ firstByteLimit
        lastReadAt = now
    }

    /// The earliest deadline of this stream.
    package var nextDeadline: UInt64 {
        switch phase {
        case .closed:
            return .max
        case .sending, .awaitingHead:
            return min(totalDeadline, responseStarted ? idleDeadline : firstByteDeadline)
        case .receivingBody:
            return min(totalDeadline, pauses.isEmpty ? idleDeadline : .max)
        }
    }

    private var idleDeadline: UInt64 { idleLimit == .max ? .max : lastReadAt &+ idleLimit }

    // MARK: - Events

    /// The request's last byte was handed to the connection (END_STREAM sent): the first-byte
    /// clock starts over from here, as it does for an HTTP/1 request with a body.
    package mutating func requestSent(now: UInt64) {
        guard phase == .sending else { return }
        phase = .awaitingHead
        if !responseStarted, firstByteLimit != .max { firstByteDeadline = now &+ firstByteLimit }
    }

    /// A frame of the response arrived (HEADERS, DATA).
    package mutating func responseFrame(now: UInt64) {
        responseStarted = true
        lastReadAt = now
    }

    /// The final head arrived (a server may answer before the request body is done).
    package mutating func headReceived(now: UInt64) {
        responseFrame(now: now)
        if phase != .closed { phase = .receivingBody }
    }

    /// The window was held shut for `reason` (the consumer paused, the bytes are ahead of the
    /// rate), or opened again: the silence clock starts over when nothing holds it any more.
    package mutating func windowHeld(_ held: Bool, by reason: ReceiveFlow.Pauses, now: UInt64) {
        if held {
            pauses.insert(reason)
        } else if pauses.contains(reason) {
            pauses.remove(reason)
            if pauses.isEmpty { lastReadAt = now }
        }
    }

    /// The stream ended.
    package mutating func closed() {
        phase = .closed
    }

    /// The timer fired at `now`: the error a passed deadline ends the stream with, if one did.
    package func deadlinePassed(now: UInt64) -> CourierError? {
        guard phase != .closed, now >= nextDeadline else { return nil }
        if now >= totalDeadline { return CourierError(.totalTimeout) }
        if responseStarted { return CourierError(.idleTimeout) }
        return CourierError(.firstByteTimeout)
    }
}
