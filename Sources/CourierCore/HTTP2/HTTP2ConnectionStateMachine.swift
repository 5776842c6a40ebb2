/// One HTTP/2 connection's life as a value: how many streams it may carry, whether it still
/// takes new ones, when it is idle long enough to close, and the liveness PING. The I/O half
/// (`HTTP2Connection`) feeds it what nghttp2 and the clock report and carries out its actions;
/// what happens inside one stream is `HTTP2StreamStateMachine`'s.
///
/// States: `open` (takes new streams up to the peer's `SETTINGS_MAX_CONCURRENT_STREAMS`),
/// `draining` (a GOAWAY came or was sent: the streams at or below its last stream id finish,
/// nothing new starts) and `closed`.
package struct HTTP2ConnectionStateMachine: Equatable {
    package enum State: Equatable {
        case open
        case draining(lastStreamID: Int32)
        case closed
    }

    package enum Action: Equatable {
        case none
        /// The connection can carry `limit` streams at once now (the pool hands it more).
        case capacityChanged(limit: Int)
        /// No new streams: streams above `lastStreamID` were not processed (retry them
        /// elsewhere); the rest finish.
        case drain(lastStreamID: Int32)
        /// Send a PING and expect its ACK by the machine's deadline.
        case sendPing
        /// Close the connection: it is idle past its limit, or drained.
        case closeQuietly
        /// The connection is unusable: fail every stream still on it with `error`.
        case fail(CourierError)
    }

    package private(set) var state = State.open
    /// Streams open now.
    package private(set) var openStreams = 0
    /// The peer's concurrency limit; 100 until its SETTINGS say (RFC 9113 section 6.5.2 leaves
    /// it unlimited, curl and nghttp2's own client assume 100).
    package private(set) var peerStreamLimit = 100
    /// Whether the peer's first SETTINGS arrived (its absence past the connect time fails the
    /// connection: a server that never sends SETTINGS is not speaking HTTP/2).
    package private(set) var settingsReceived = false
    /// When the connection, idle, closes; `.max` while streams are open.
    package private(set) var idleDeadline: UInt64 = .max
    /// When an outstanding PING must have been answered; `.max` when none is.
    package private(set) var pingDeadline: UInt64 = .max
    /// When the next keep-alive PING goes out (`.max`: none configured).
    package private(set) var keepAlivePingAt: UInt64 = .max
    /// The last time a frame arrived (a PING before reuse is due after `pingAfterIdle` of silence).
    package private(set) var lastFrameAt: UInt64
    /// The first SETTINGS must have arrived by then.
    private var settingsDeadline: UInt64

    /// The configured limits, in milliseconds (`.max`: none).
    package struct Limits: Equatable {
        package var idle: UInt64
        package var pingTimeout: UInt64 = 5_000
        package var keepAlivePingInterval: UInt64 = .max
        package var settingsTimeout: UInt64 = 10_000
        package init(idle: UInt64, pingTimeout: UInt64 = 5_000, keepAlivePingInterval: UInt64 = .max, settingsTimeout: UInt64 = 10_000) {
            self.idle = idle
            self.pingTimeout = pingTimeout
            self.keepAlivePingInterval = keepAlivePingInterval
            self.settingsTimeout = settingsTimeout
        }
    }
    package var limits: Limits

    package init(now: UInt64, limits: Limits) {
        self.limits = limits
        lastFrameAt = now
        settingsDeadline = limits.settingsTimeout == .max ? .max : now &+ limits.settingsTimeout
        idleDeadline = limits.idle == .max ? .max : now &+ limits.idle
        if limits.keepAlivePingInterval != .max { keepAlivePingAt = now &+ limits.keepAlivePingInterval }
    }

    /// Whether a new stream may start now.
    package var acceptsStreams: Bool { state == .open && openStreams < peerStreamLimit }

    /// The earliest deadline the timer must watch.
    package var nextDeadline: UInt64 {
        guard state != .closed else { return .max }
        return min(idleDeadline, pingDeadline, keepAlivePingAt, settingsReceived ? .max : settingsDeadline)
    }

    // MARK: - Events

    /// A frame arrived (any frame: the connection is alive).
    package mutating func frameReceived(now: UInt64) {
        lastFrameAt = now
    }

    /// The peer's SETTINGS arrived with its concurrency limit (nil: it did not say).
    package mutating func settingsReceived(maxConcurrentStreams: UInt32?) -> Action {
        settingsReceived = true
        guard let limit = maxConcurrentStreams else { return .none }
        let clamped = Int(min(limit, UInt32(Int32.max)))
        guard clamped != peerStreamLimit else { return .none }
        peerStreamLimit = clamped
        return state == .open ? .capacityChanged(limit: clamped) : .none
    }

    /// A stream started.
    package mutating func streamOpened() {
        openStreams += 1
        idleDeadline = .max
    }

    /// A stream ended.
    package mutating func streamClosed(now: UInt64) -> Action {
        precondition(openStreams > 0, "a stream closed on a connection with none open")
        openStreams -= 1
        guard openStreams == 0 else { return .none }
        switch state {
        case .open:
            idleDeadline = limits.idle == .max ? .max : now &+ limits.idle
            return .none
        case .draining:
            state = .closed
            return .closeQuietly
        case .closed:
            return .none
        }
    }

    /// A GOAWAY arrived.
    package mutating func goAwayReceived(lastStreamID: Int32, error: UInt32) -> Action {
        switch state {
        case .closed:
            return .none
        case .draining(let earlier):
            // A second GOAWAY may only lower the last stream id.
            let last = min(earlier, lastStreamID)
            state = .draining(lastStreamID: last)
            return .drain(lastStreamID: last)
        case .open:
            state = .draining(lastStreamID: lastStreamID)
            idleDeadline = .max
            return .drain(lastStreamID: lastStreamID)
        }
    }

    /// The pool is about to reuse a connection that was idle: a PING first when it was silent
    /// longer than `quietLimit` (the request then waits for the ACK, or for a new connection).
    package mutating func reuseRequested(now: UInt64, quietLimit: UInt64) -> Action {
        guard state == .open, pingDeadline == .max, now &- lastFrameAt > quietLimit else { return .none }
        pingDeadline = now &+ limits.pingTimeout
        return .sendPing
    }

    /// A PING ACK arrived.
    package mutating func pingAcknowledged(now: UInt64) {
        pingDeadline = .max
        lastFrameAt = now
    }

    /// The timer fired at `now`.
    package mutating func timerFired(now: UInt64) -> Action {
        guard state != .closed else { return .none }
        if !settingsReceived, now >= settingsDeadline {
            state = .closed
            return .fail(CourierError(.http2Protocol, "the server sent no SETTINGS frame"))
        }
        if now >= pingDeadline {
            state = .closed
            return .fail(CourierError(.idleTimeout, "no answer to an HTTP/2 PING within \(limits.pingTimeout) ms"))
        }
        if openStreams == 0, now >= idleDeadline {
            state = .closed
            return .closeQuietly
        }
        if now >= keepAlivePingAt {
            keepAlivePingAt = now &+ limits.keepAlivePingInterval
            if pingDeadline == .max {
                pingDeadline = now &+ limits.pingTimeout
                return .sendPing
            }
        }
        return .none
    }

    /// The transport ended or broke, or nghttp2 found the peer in violation.
    package mutating func connectionLost(_ error: CourierError) -> Action {
        guard state != .closed else { return .none }
        state = .closed
        return .fail(error)
    }

    /// The connection is not to serve new streams (a request that forbade reuse): it closes once
    /// its streams are done.
    package mutating func drainRequested() -> Action {
        switch state {
        case .open:
            idleDeadline = .max
            if openStreams == 0 {
                state = .closed
                return .closeQuietly
            }
            state = .draining(lastStreamID: .max)
            return .none
        case .draining, .closed:
            return .none
        }
    }

    /// The pool closes the connection (shutdown, eviction).
    package mutating func close() -> Action {
        guard state != .closed else { return .none }
        state = .closed
        return openStreams == 0 ? .closeQuietly : .fail(CourierError(.shutdown))
    }
}
