/// One HTTP/2 stream's exchange as a value: its phase and the transfer's deadlines (first byte,
/// silence each way, total), which on HTTP/1 the connection's machine keeps. The connection's
/// timer asks every open stream's machine; the one whose deadline passed fails alone.
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
    private let sendLimit: UInt64
    private var firstByteDeadline: UInt64
    private var lastReadAt: UInt64
    /// When the server last took body bytes (the stream's start before the first).
    private var lastWriteAt: UInt64
    /// Why no body byte goes while `.sending`, when it is not the server's doing.
    package private(set) var bodyHold: BodyHold?

    package enum BodyHold: Equatable {
        /// The body waits for a 100 (or the continue timeout): the server's answer is awaited.
        case continueWait
        /// The body's producer has nothing yet: the caller's pace, no silence runs.
        case producer
    }
    /// Why the stream's window is held shut (the consumer's pause, the receive rate): no
    /// silence runs meanwhile (the window stops the server).
    package private(set) var pauses: ReceiveFlow.Pauses = []

    /// A stream begun at `now` with the transfer's limits, in milliseconds (`.max`: none);
    /// `sendLimit` nil: the idle limit.
    package init(now: UInt64, totalDeadline: UInt64, firstByteLimit: UInt64, idleLimit: UInt64, sendLimit: UInt64? = nil) {
        self.totalDeadline = totalDeadline
        self.firstByteLimit = firstByteLimit
        self.idleLimit = idleLimit
        self.sendLimit = sendLimit ?? idleLimit
        firstByteDeadline = firstByteLimit == .max ? .max : now &+ firstByteLimit
        lastReadAt = now
        lastWriteAt = now
    }

    /// The earliest deadline of this stream.
    package var nextDeadline: UInt64 {
        switch phase {
        case .closed:
            return .max
        case .sending:
            // The body goes out: the server must keep taking it (after a 100 too).
            switch bodyHold {
            case nil: return min(totalDeadline, sendLimit == .max ? .max : lastWriteAt &+ sendLimit)
            case .continueWait?: return min(totalDeadline, responseStarted ? .max : firstByteDeadline)
            case .producer?: return totalDeadline
            }
        case .awaitingHead:
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

    /// Body bytes went to the server (or the body was released to go): the send silence starts
    /// over, and nothing holds the body any more.
    package mutating func bodyProgress(now: UInt64) {
        lastWriteAt = now
        bodyHold = nil
    }

    /// The body is held for `reason` until the next `bodyProgress`.
    package mutating func bodyHeld(_ reason: BodyHold) {
        if phase == .sending { bodyHold = reason }
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
        if phase == .sending, bodyHold == nil { return CourierError(.sendTimeout, "the server stopped reading the request body") }
        if responseStarted { return CourierError(.idleTimeout) }
        return CourierError(.firstByteTimeout)
    }
}
