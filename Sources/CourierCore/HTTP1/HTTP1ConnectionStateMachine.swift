/// The life of one HTTP/1.1 connection as a value: events in, one action out, no I/O.
///
/// Modelled on hyper's `proto/h1/conn.rs`: a request/response exchange has a writing half and a
/// reading half, and the connection goes back to the pool only when *both* have finished and both
/// sides agreed to keep it alive. Any other combination closes it. The machine also owns the
/// connection's deadlines (connect, idle in the pool, first byte, silence mid-response, the
/// transfer's total) and decides which one fired, and it decides what an end of stream means.
/// The I/O layer (`HTTP1Connection`) feeds events and carries out the returned action; it makes
/// no decisions.
///
/// Two subtle decisions live here:
/// - The stale keep-alive race (RFC 9112 section 9.3.1): a server may close an idle connection at
///   the moment Courier reuses it. The request then fails before a single response byte arrives.
///   Only in that case, on a reused connection, for a request that may be sent twice, does
///   `failRequest` carry `replay: true`. A request that saw any response byte, or went out on a
///   new connection, is never replayed: the server may have acted on it.
/// - A close-delimited body (no Content-Length, not chunked) ends when the stream does. Over TLS
///   that end counts only with the peer's close_notify; without it an attacker could have cut the
///   stream (RFC 8446 section 6.1), so the response fails as truncated instead.
///
/// Times are readings of the loop's millisecond clock; `.max` means "no deadline".
package struct HTTP1ConnectionStateMachine: Sendable {
    package enum State: Equatable, Sendable {
        /// Resolving, connecting (and, for https, handshaking).
        /// Next: `.idle` (connected) or `.closed` (failed, timed out).
        case connecting
        /// Open with no request. Courier keeps reading so a server-side close is noticed at once.
        /// Next: `.active` (a request is sent) or `.closed` (EOF, idle timeout, unsolicited bytes).
        case idle
        /// One exchange in progress. Next: `.idle` (both halves done, keep-alive) or `.closed`.
        case active(Exchange)
        /// Terminal. Late I/O callbacks (a write completing after close) are ignored here.
        case closed
    }

    /// The two halves of an exchange, what decides reuse and replay, and its deadlines.
    package struct Exchange: Equatable, Sendable {
        package var requestSent = false
        package var responseComplete = false
        /// False once either side asked to close (`Connection: close`, HTTP/1.0, early response).
        package var keepAlive = true
        /// The request may be sent again (idempotent method, body still available).
        package var replayable: Bool
        /// The connection had served a request before this one.
        package var reusedConnection: Bool
        /// Any response byte arrived: from then on the request is never replayed.
        package var responseStarted = false
        package var deadlines: ExchangeDeadlines
        /// When the last response bytes arrived.
        package var lastRead: UInt64 = 0
    }

    /// The request body's and the reader's part of the exchange in progress, kept beside the
    /// exchange rather than in it (every event copies the `Exchange` in and out of the state; a
    /// plain request should not pay for fields it does not use). Reset by `sendRequest`.
    package struct Flow: Equatable, Sendable {
        package init(awaitingContinue: Bool = false, continueDeadline: UInt64 = .max, firstByteLimit: UInt64 = .max,
                     sendLimit: UInt64? = nil) {
            self.awaitingContinue = awaitingContinue
            self.continueDeadline = continueDeadline
            self.firstByteLimit = firstByteLimit
            self.sendLimit = sendLimit
        }

        /// A body follows the head. While it is being sent, silence is measured from the last
        /// write (a slow upload is not a late response); the first-byte deadline starts once the
        /// whole request is out.
        package var hasBody = false
        /// `Expect: 100-continue` was sent and the body waits for the 100 (or `continueDeadline`).
        package var awaitingContinue = false
        /// The consumer stopped reading: no read deadline runs until it resumes (the total does).
        package var readingPaused = false
        /// The body waits for the caller's producer (a stream or read callback with nothing yet):
        /// the caller's pace, not the server's silence, so no silence deadline runs meanwhile.
        package var awaitingProducer = false
        /// When the last request bytes left.
        package var lastWrite: UInt64 = 0
        /// The body goes out by then even without a 100.
        package var continueDeadline: UInt64 = .max
        /// How long the first byte may take once the body is out, in milliseconds.
        package var firstByteLimit: UInt64 = .max
        /// Longest wait between two writes of the body, in milliseconds (nil: the idle limit,
        /// one limit for both directions).
        package var sendLimit: UInt64?
        /// The silence limit while the body runs: the send limit (resolved by `bodyFollows`)
        /// until the whole request is out, then the idle limit (the server's answer).
        package var silenceLimit: UInt64 = .max
    }

    /// The deadlines one exchange runs under.
    package struct ExchangeDeadlines: Equatable, Sendable {
        /// The transfer's total deadline (it runs across redirects, so it comes from the transfer).
        package var total: UInt64 = .max
        /// The first response byte must arrive by then.
        package var firstByte: UInt64 = .max
        /// Longest silence between reads once the response started, in milliseconds.
        package var idleLimit: UInt64 = .max

        package init(total: UInt64 = .max, firstByte: UInt64 = .max, idleLimit: UInt64 = .max) {
            self.total = total
            self.firstByte = firstByte
            self.idleLimit = idleLimit
        }
    }

    /// How the response stood when the stream closed, as the decoder and the transfer saw it.
    package enum BodyAtClose: Equatable, Sendable {
        /// The close completes the response (a close-delimited body); `error` is what finishing
        /// the body found (content decoding), nil when nothing.
        case complete(error: CourierError?)
        /// The response was not complete: this is what it lacked.
        case incomplete(CourierError)
    }

    /// What the I/O layer must do next.
    package enum Action: Equatable, Sendable {
        /// Nothing.
        case none
        /// The connection is open: tell the owner (the pool parks it or hands it a request).
        case announceReady
        /// Write the request (head and body).
        case writeRequest
        /// The body of an `Expect: 100-continue` request may go now (a 100 came, or none in time).
        case sendBody
        /// The server answered before the body was sent: stop sending it (the connection will
        /// close after the response, which is still delivered).
        case stopSendingBody
        /// The exchange succeeded. Return the connection to the pool, or close it if `close`.
        case completeRequest(close: Bool)
        /// The exchange failed; close the connection. `replay` asks for one retry elsewhere.
        case failRequest(CourierError, replay: Bool)
        /// Connecting failed; close and tell the owner.
        case failConnect(CourierError)
        /// An idle connection ended (closed by the server, timed out, poisoned); close and tell
        /// the owner.
        case closeIdle
        /// Close the connection; nobody needs telling (the pool asked).
        case close
    }

    package internal(set) var state: State = .connecting
    /// Requests completed on this connection (1 after the first response).
    package private(set) var completedExchanges = 0
    /// Connecting must finish by then.
    package private(set) var connectDeadline: UInt64
    /// Since when the connection has been idle, and how long it may stay so.
    package private(set) var idleSince: UInt64 = 0
    package private(set) var poolIdleLimit: UInt64 = 60_000
    /// The body and reader side of the exchange in progress (see `Flow`).
    package internal(set) var flow = Flow()

    /// A machine for a connection that starts connecting now and must be up by `connectDeadline`.
    package init(connectDeadline: UInt64 = .max) {
        self.connectDeadline = connectDeadline
    }

    /// Whether a new request may be sent now.
    package var isIdle: Bool { state == .idle }

    // MARK: Connecting

    /// The stream is open (connected, and for TLS handshaken and verified).
    package mutating func connected() -> Action {
        switch state {
        case .connecting:
            state = .idle
            return .announceReady
        case .idle, .active, .closed:
            preconditionFailure("the stream opened twice (state \(state))")
        }
    }

    /// Opening the stream failed.
    package mutating func connectFailed(_ error: CourierError) -> Action {
        switch state {
        case .connecting:
            state = .closed
            return .failConnect(error)
        case .closed:
            // The connect deadline closed it first.
            return .none
        case .idle, .active:
            preconditionFailure("a connect failure reported on an open connection (state \(state))")
        }
    }

    /// The pool parked the connection at `now`.
    package mutating func parked(now: UInt64) {
        switch state {
        case .idle:
            idleSince = now
        case .connecting, .active, .closed:
            preconditionFailure("the pool parked a connection in state \(state)")
        }
    }

    // MARK: Exchange

    /// A request is handed to this connection. Only valid when idle: the pool never leases a
    /// connection that is connecting, busy or closed. `poolIdleLimit` is how long the connection
    /// may wait in the pool after this exchange (the request's setting).
    /// A request with a body follows with `bodyFollows` before the action is carried out.
    @inline(__always) package mutating func sendRequest(replayable: Bool, deadlines: ExchangeDeadlines = ExchangeDeadlines(),
                                      poolIdleLimit: UInt64 = 60_000) -> Action {
        switch state {
        case .idle:
            self.poolIdleLimit = poolIdleLimit
            state = .active(Exchange(replayable: replayable, reusedConnection: completedExchanges > 0, deadlines: deadlines))
            if flow.hasBody || flow.readingPaused { flow = Flow() }
            return .writeRequest
        case .connecting, .active, .closed:
            preconditionFailure("the pool leased a connection in state \(state)")
        }
    }

    /// The request said `Connection: close`.
    package mutating func requestAsksToClose() {
        switch state {
        case .active(var exchange):
            exchange.keepAlive = false
            state = .active(exchange)
        case .connecting, .idle, .closed:
            preconditionFailure("a request head encoded with no exchange (state \(state))")
        }
    }

    /// Response bytes arrived at `now`. Returns true for the first ones, after which the idle
    /// deadline replaces the first-byte one (and may be earlier: re-arm the timer).
    package mutating func bytesReceived(now: UInt64) -> Bool {
        switch state {
        case .active(var exchange):
            let first = !exchange.responseStarted
            exchange.responseStarted = true
            exchange.lastRead = now
            state = .active(exchange)
            return first
        case .connecting, .idle, .closed:
            // Idle bytes are `unsolicitedBytes`; nothing reads while connecting or closed.
            preconditionFailure("response bytes with no exchange (state \(state))")
        }
    }

    /// The response ended. `keepAlive` is the server's verdict; `trailingBytes` means bytes followed
    /// the response, which on a connection without pipelining answer nothing and poison it.
    package mutating func responseComplete(keepAlive: Bool, trailingBytes: Bool) -> Action {
        switch state {
        case .active(var exchange):
            exchange.responseStarted = true
            exchange.responseComplete = true
            if !keepAlive || trailingBytes { exchange.keepAlive = false }
            if !exchange.requestSent {
                // The server answered before reading the whole request (RFC 9112 section 9.5):
                // the response stands, but the connection carries half a request and must go.
                exchange.keepAlive = false
                exchange.requestSent = true
            }
            return finishIfDone(exchange)
        case .connecting, .idle, .closed:
            preconditionFailure("a response completed with no exchange (state \(state))")
        }
    }

    /// The response cannot be parsed, or a limit was hit. Never replayed: the server did answer.
    package mutating func responseInvalid(_ error: CourierError) -> Action {
        switch state {
        case .active:
            state = .closed
            return .failRequest(error, replay: false)
        case .connecting, .idle, .closed:
            preconditionFailure("a response failed with no exchange (state \(state))")
        }
    }

    /// Bytes arrived on an idle connection. Nobody asked for them: the connection can no longer
    /// be trusted to frame responses.
    package mutating func unsolicitedBytes() -> Action {
        switch state {
        case .idle:
            state = .closed
            return .closeIdle
        case .connecting, .active, .closed:
            preconditionFailure("unsolicited bytes outside idle (state \(state))")
        }
    }

    /// The peer closed the stream. `closeNotify` is TLS's word on the close (nil for TCP);
    /// `body` is how the response stood, when there is an exchange (nil otherwise).
    package mutating func streamClosed(closeNotify: Bool?, body: BodyAtClose?) -> Action {
        switch state {
        case .active(let exchange):
            guard let body else { preconditionFailure("a stream end during an exchange without the body's state") }
            switch body {
            case .incomplete(let error):
                return transportFailed(error)
            case .complete where closeNotify == false:
                state = .closed
                return .failRequest(CourierError(.tlsTruncated, "the close-delimited body ended without close_notify"), replay: false)
            case .complete(let error?):
                state = .closed
                return .failRequest(error, replay: false)
            case .complete(nil):
                state = .active(exchange)
                return responseComplete(keepAlive: false, trailingBytes: false)
            }
        case .idle:
            state = .closed
            return .closeIdle
        case .connecting:
            preconditionFailure("a stream end before the stream opened")
        case .closed:
            return .none
        }
    }

    /// The stream broke (reset, failed write, undecryptable record). `error` is what the request
    /// fails with if one is in flight; the connection is finished either way.
    package mutating func transportFailed(_ error: CourierError) -> Action {
        switch state {
        case .active(let exchange):
            state = .closed
            let replay = exchange.reusedConnection && !exchange.responseStarted && exchange.replayable
            if !exchange.responseStarted, error.code == .connectionReset {
                return .failRequest(CourierError(.connectionReset, "\(error.detail ?? "reset") before any response byte"), replay: replay)
            }
            return .failRequest(error, replay: replay)
        case .idle:
            state = .closed
            return .closeIdle
        case .connecting:
            preconditionFailure("a transport failure before the stream opened")
        case .closed:
            return .none
        }
    }

    /// The request in flight is abandoned (cancelled, or its transfer hit a deadline the
    /// connection does not track): it fails, nothing is replayed, the connection goes.
    package mutating func abort(_ error: CourierError) -> Action {
        switch state {
        case .active:
            state = .closed
            return .failRequest(error, replay: false)
        case .closed:
            return .none
        case .connecting, .idle:
            preconditionFailure("abort with no exchange (state \(state))")
        }
    }

    /// The pool wants the connection gone (shutdown, eviction, limit lowered).
    package mutating func close() -> Action {
        switch state {
        case .closed:
            return .none
        case .connecting, .idle, .active:
            state = .closed
            return .close
        }
    }

    mutating func finishIfDone(_ exchange: Exchange) -> Action {
        guard exchange.requestSent, exchange.responseComplete else {
            state = .active(exchange)
            return .none
        }
        completedExchanges += 1
        if exchange.keepAlive {
            state = .idle
            return .completeRequest(close: false)
        }
        state = .closed
        return .completeRequest(close: true)
    }
}
