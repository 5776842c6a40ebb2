/// Which deadline an HTTP/1 connection runs under next, and which one fired: connect, idle in
/// the pool, the first byte, silence mid-response or mid-upload, the continue wait, the total.
extension HTTP1ConnectionStateMachine {
    /// The earliest deadline in the current state; the I/O layer arms its timer for it.
    @inline(__always) package var nextDeadline: UInt64 {
        switch state {
        case .connecting:
            return connectDeadline
        case .idle:
            let (sum, overflow) = idleSince.addingReportingOverflow(poolIdleLimit)
            return overflow ? .max : sum
        case .active(let exchange):
            guard flow.hasBody || flow.readingPaused else {
                // A plain exchange (no body, reading): the first byte, then silence.
                guard exchange.responseStarted else { return min(exchange.deadlines.total, exchange.deadlines.firstByte) }
                let (sum, overflow) = exchange.lastRead.addingReportingOverflow(exchange.deadlines.idleLimit)
                return min(exchange.deadlines.total, overflow ? .max : sum)
            }
            let deadline = min(exchange.deadlines.total, Self.responseDeadline(exchange, flow))
            return flow.awaitingContinue ? min(deadline, flow.continueDeadline) : deadline
        case .closed:
            return .max
        }
    }

    /// The timer fired at `now`: which deadline, if any, passed. `bodyBytes` only words the
    /// error ("after N body bytes").
    package mutating func timerFired(now: UInt64, bodyBytes: UInt64) -> Action {
        switch state {
        case .connecting:
            guard now >= connectDeadline else { return .none }
            state = .closed
            return .failConnect(CourierError(.connectTimeout))
        case .idle:
            guard now >= nextDeadline else { return .none }
            state = .closed
            return .closeIdle
        case .active(let exchange):
            let error: CourierError
            if now >= exchange.deadlines.total {
                error = CourierError(.totalTimeout)
            } else if now >= Self.responseDeadline(exchange, flow) {
                if flow.hasBody, !exchange.requestSent, bodyBytes == 0 {
                    // (After a 100 Continue, too: the server waits for what we no longer send.)
                    error = CourierError(.sendTimeout, "the server stopped reading the request body")
                } else if exchange.responseStarted {
                    error = CourierError(.idleTimeout, "after \(bodyBytes) body bytes")
                } else {
                    error = CourierError(.firstByteTimeout)
                }
            } else if flow.awaitingContinue, now >= flow.continueDeadline {
                // A silent server (many never send 100): send the body anyway.
                flow.awaitingContinue = false
                return .sendBody
            } else {
                return .none
            }
            state = .closed
            return .failRequest(error, replay: false)
        case .closed:
            return .none
        }
    }

    /// Before the first byte, the first-byte deadline (or, while a body goes out, the last write
    /// plus the send limit); after it, the later of the last read and (for a request with a body)
    /// the last write, plus the idle limit (the send limit while that body still goes out); none
    /// while the consumer has paused reading or the body waits for its producer. Inlined where
    /// the timer is armed, as the rest of `nextDeadline` (a call makes the caller copy the
    /// exchange out of the machine on every rearm, for the plain path too: +140 instructions per
    /// request).
    @inline(__always)
    private static func responseDeadline(_ exchange: Exchange, _ flow: Flow) -> UInt64 {
        if flow.awaitingProducer { return .max }
        guard exchange.responseStarted else {
            guard flow.hasBody, !exchange.requestSent, !flow.awaitingContinue else {
                return flow.readingPaused ? .max : exchange.deadlines.firstByte
            }
            let (sum, overflow) = flow.lastWrite.addingReportingOverflow(flow.silenceLimit)
            return overflow ? .max : sum
        }
        if flow.readingPaused { return .max }
        // A 100 Continue starts the response before the body goes out: the server is then silent
        // because it waits for the body, so an upload longer than the idle limit is not silence,
        // and the server's think time starts once the body is out.
        // (While the body still goes out after a 100, the server waits for us: the send limit.)
        let (since, limit) = flow.hasBody ? (max(exchange.lastRead, flow.lastWrite), flow.silenceLimit)
                                          : (exchange.lastRead, exchange.deadlines.idleLimit)
        let (sum, overflow) = since.addingReportingOverflow(limit)
        return overflow ? .max : sum
    }
}
