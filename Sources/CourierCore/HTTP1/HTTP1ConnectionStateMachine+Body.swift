/// The request body's and the reader's events of an exchange: the body going out (as liveness),
/// `Expect: 100-continue`, an answer before the body was sent, paused and lent reads.
extension HTTP1ConnectionStateMachine {
    /// The last request byte left (was accepted by the kernel, or by TLS and then the kernel).
    package mutating func requestWritten() -> Action {
        switch state {
        case .active(var exchange):
            exchange.requestSent = true
            if flow.hasBody {
                // The server's think time starts when it has the whole request: its silence is
                // the idle limit's from here.
                flow.silenceLimit = exchange.deadlines.idleLimit
                if !exchange.responseStarted {
                    let (sum, overflow) = flow.lastWrite.addingReportingOverflow(flow.firstByteLimit)
                    exchange.deadlines.firstByte = overflow ? .max : sum
                }
            }
            return finishIfDone(exchange)
        case .closed:
            // A write completing after the exchange failed.
            return .none
        case .connecting, .idle:
            preconditionFailure("request bytes written with no exchange (state \(state))")
        }
    }

    /// The request just handed over has a body, starting to go out at `now`: whether it waits for
    /// a 100 and until when, and the first-byte limit that starts once it is out.
    package mutating func bodyFollows(_ body: Flow, now: UInt64) {
        switch state {
        case .active(let exchange):
            flow = body
            flow.hasBody = true
            flow.lastWrite = now
            flow.silenceLimit = body.sendLimit ?? exchange.deadlines.idleLimit
            if flow.continueDeadline == .max { flow.awaitingContinue = false }
        case .connecting, .idle, .closed:
            preconditionFailure("a body for no exchange (state \(state))")
        }
    }

    /// Body bytes left at `now` (an upload in progress is not silence).
    package mutating func bodyBytesWritten(now: UInt64) {
        switch state {
        case .active:
            flow.lastWrite = now
        case .closed:
            break
        case .connecting, .idle:
            preconditionFailure("body bytes written with no exchange (state \(state))")
        }
    }

    /// The body's producer has nothing yet (`waiting`), or produced again at `now`: silence is
    /// measured from then, as after a consumer's pause.
    package mutating func producerWaits(_ waiting: Bool, now: UInt64) {
        switch state {
        case .active:
            flow.awaitingProducer = waiting
            if !waiting { flow.lastWrite = now }
        case .closed:
            break
        case .connecting, .idle:
            preconditionFailure("a body producer with no exchange (state \(state))")
        }
    }

    /// An interim response arrived (RFC 9110 section 15.2). A 100 releases a held body.
    package mutating func informationalReceived(status: Int) -> Action {
        switch state {
        case .active:
            guard flow.awaitingContinue, status == 100 else { return .none }
            flow.awaitingContinue = false
            return .sendBody
        case .connecting, .idle, .closed:
            preconditionFailure("an interim response with no exchange (state \(state))")
        }
    }

    /// The final response head arrived while the body was still to be sent (held for a 100, or
    /// part-way through): the server decided without it (a 413, a 401, a redirect). The rest is
    /// not sent; the response is delivered; the connection closes after it, since the server may
    /// still be reading what part of a body it got (RFC 9110 section 10.1.1).
    package mutating func finalHeadBeforeBodySent() -> Action {
        switch state {
        case .active(var exchange):
            guard flow.hasBody, !exchange.requestSent else { return .none }
            flow.awaitingContinue = false
            exchange.keepAlive = false
            state = .active(exchange)
            return .stopSendingBody
        case .connecting, .idle, .closed:
            preconditionFailure("a response head with no exchange (state \(state))")
        }
    }

    /// The consumer stopped reading (`paused`), or resumed at `now`.
    package mutating func readingPaused(_ paused: Bool, now: UInt64) {
        switch state {
        case .active(var exchange):
            flow.readingPaused = paused
            // Silence is measured from the resumption: the server did nothing wrong meanwhile.
            if !paused {
                exchange.lastRead = now
                state = .active(exchange)
            }
        case .idle, .closed:
            // The exchange already ended (its last bytes came in the read that paused).
            break
        case .connecting:
            preconditionFailure("reading paused while connecting")
        }
    }

    /// The socket's reads were lent to the consumer's thread (see `ReadLease`, reading is paused
    /// for the loop meanwhile), and that thread waited the idle limit without a byte: the same
    /// failure as silence seen by the loop.
    package mutating func lentReadsFellSilent(bodyBytes: UInt64) -> Action {
        switch state {
        case .active:
            state = .closed
            return .failRequest(CourierError(.idleTimeout, "after \(bodyBytes) body bytes"), replay: false)
        case .idle, .closed:
            // The exchange ended meanwhile (the lease is revoked then, and never comes back).
            return .none
        case .connecting:
            preconditionFailure("reads lent while connecting")
        }
    }
}
