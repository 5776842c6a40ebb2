/// The life of one HTTP/1.1 connection as a value: events in, one action out, no I/O.
///
/// Modelled on hyper's `proto/h1/conn.rs`: a request/response exchange has a writing half and a
/// reading half, and the connection goes back to the pool only when *both* have finished and both
/// sides agreed to keep it alive. Any other combination closes it. The I/O layer
/// (`HTTP1Connection`) feeds events and carries out the returned action; it makes no decisions.
///
/// The one subtle decision is the stale keep-alive race (RFC 9112 section 9.3.1): a server may close
/// an idle connection at the moment Courier reuses it. The request then fails before a single
/// response byte arrives. Only in that case, on a reused connection, for a request that may be sent
/// twice, does `failRequest` carry `replay: true`, and the request is retried once on a fresh
/// connection. A request that saw any response byte, or went out on a new connection, is never
/// replayed: the server may have acted on it.
package struct HTTP1ConnectionStateMachine: Sendable {
    package enum State: Equatable, Sendable {
        /// Resolving, connecting (and, for https, handshaking).
        /// Next: `.idle` (connected) or `.closed` (failed).
        case connecting
        /// Open with no request. Courier keeps reading so a server-side close is noticed at once.
        /// Next: `.active` (a request is sent) or `.closed` (EOF, idle timeout, unsolicited bytes).
        case idle
        /// One exchange in progress. Next: `.idle` (both halves done, keep-alive) or `.closed`.
        case active(Exchange)
        /// Terminal. Late I/O callbacks (a write completing after close) are ignored here.
        case closed
    }

    /// The two halves of an exchange and what decides reuse and replay.
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
    }

    /// What the I/O layer must do next.
    package enum Action: Equatable, Sendable {
        /// Nothing.
        case none
        /// Write the request (head and body).
        case writeRequest
        /// The exchange succeeded. Return the connection to the pool, or close it if `close`.
        case completeRequest(close: Bool)
        /// The exchange failed; close the connection. `replay` asks for one retry elsewhere.
        case failRequest(CourierError, replay: Bool)
        /// Close the connection; there is no request to tell.
        case close
    }

    package private(set) var state: State = .connecting
    /// Requests completed on this connection (1 after the first response).
    package private(set) var completedExchanges = 0

    package init() {}

    /// Whether a new request may be sent now.
    package var isIdle: Bool { state == .idle }

    // MARK: Connecting

    /// The transport is ready.
    package mutating func connected() -> Action {
        switch state {
        case .connecting:
            state = .idle
            return .none
        case .idle, .active, .closed:
            return .none
        }
    }

    /// Connecting failed or timed out; the pool hears of it through the connection, not a request.
    package mutating func connectFailed() -> Action {
        switch state {
        case .connecting:
            state = .closed
            return .close
        case .idle, .active, .closed:
            return .none
        }
    }

    // MARK: Exchange

    /// A request is handed to this connection. Only valid when idle: the pool never leases a
    /// connection that is connecting, busy or closed.
    package mutating func sendRequest(replayable: Bool) -> Action {
        switch state {
        case .idle:
            state = .active(Exchange(replayable: replayable, reusedConnection: completedExchanges > 0))
            return .writeRequest
        case .connecting, .active, .closed:
            preconditionFailure("the pool leased a connection in state \(state)")
        }
    }

    /// The last request byte left (was accepted by the kernel, or by TLS and then the kernel).
    package mutating func requestWritten() -> Action {
        guard case .active(var exchange) = state else { return .none }
        exchange.requestSent = true
        return finishIfDone(exchange)
    }

    /// The request said `Connection: close`.
    package mutating func requestAsksToClose() {
        guard case .active(var exchange) = state else { return }
        exchange.keepAlive = false
        state = .active(exchange)
    }

    /// Response bytes arrived (any part of the head or body).
    package mutating func responseBytesReceived() {
        guard case .active(var exchange) = state, !exchange.responseStarted else { return }
        exchange.responseStarted = true
        state = .active(exchange)
    }

    /// The response ended. `keepAlive` is the server's verdict; `trailingBytes` means bytes followed
    /// the response, which on a connection without pipelining answer nothing and poison it.
    package mutating func responseComplete(keepAlive: Bool, trailingBytes: Bool) -> Action {
        guard case .active(var exchange) = state else { return .none }
        exchange.responseStarted = true
        exchange.responseComplete = true
        if !keepAlive || trailingBytes { exchange.keepAlive = false }
        if !exchange.requestSent {
            // The server answered before reading the whole request (RFC 9112 section 9.5): the
            // response stands, but the connection carries half a request and must go.
            exchange.keepAlive = false
            exchange.requestSent = true
        }
        return finishIfDone(exchange)
    }

    /// The response cannot be parsed, or a limit was hit. Never replayed: the server did answer.
    package mutating func responseInvalid(_ error: CourierError) -> Action {
        switch state {
        case .active:
            state = .closed
            return .failRequest(error, replay: false)
        case .idle:
            state = .closed
            return .close
        case .connecting, .closed:
            return .none
        }
    }

    /// The stream ended (EOF), failed (reset) or could not be written. `error` is what the request
    /// fails with if it was in flight; the connection is finished either way.
    package mutating func transportFailed(_ error: CourierError) -> Action {
        switch state {
        case .active(let exchange):
            state = .closed
            let replay = exchange.reusedConnection && !exchange.responseStarted && exchange.replayable
            return .failRequest(error, replay: replay)
        case .idle:
            state = .closed
            return .close
        case .connecting:
            state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// A deadline passed (the caller decides which and builds the error).
    package mutating func timedOut(_ error: CourierError) -> Action {
        switch state {
        case .active:
            state = .closed
            return .failRequest(error, replay: false)
        case .idle, .connecting:
            state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// The request in flight is abandoned (cancelled, or its transfer hit a deadline the connection
    /// does not track). Like a timeout: the request fails, nothing is replayed, the connection goes.
    package mutating func abort(_ error: CourierError) -> Action {
        timedOut(error)
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

    private mutating func finishIfDone(_ exchange: Exchange) -> Action {
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
