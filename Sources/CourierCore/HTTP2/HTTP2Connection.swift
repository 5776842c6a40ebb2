import CUV

/// One connection speaking HTTP/2 over a byte stream that another connection opened (TCP, TLS
/// after ALPN chose h2, a proxy's tunnel): the I/O half of `HTTP2ConnectionStateMachine`, with
/// libnghttp2 (`HTTP2Session`) framing in memory on the loop thread.
///
/// Each request is a stream (`HTTP2Stream`, the transfer's carrier). Bytes read go to nghttp2,
/// whose callbacks land in `HTTP2Connection+Events.swift`; frames it produces are written in
/// one write per turn, and no more are produced while a write waits for the socket (so a body
/// being uploaded holds at most one batch in memory).
package final class HTTP2Connection: ByteStreamDelegate {
    package let id: UInt64
    package let poolKey: Int
    package let origin: Origin
    unowned(unsafe) let owner: HTTP2ConnectionDelegate
    let stream: any ByteStream
    let uvLoop: UnsafeMutablePointer<uv_loop_t>
    /// The `:authority` of requests that set no Host.
    let authority: String
    var session: HTTP2Session!
    @exclusivity(unchecked) package internal(set) var machine: HTTP2ConnectionStateMachine
    /// Open streams by id.
    @exclusivity(unchecked) var streams = IntTable<HTTP2Stream>()
    /// The header block of the request being submitted, reused (nghttp2 copies it).
    let requestBlock = HTTP2RequestHeaders()
    /// The header block being received (one at a time on a connection).
    let headerBlock = HTTP2HeaderBlock()
    /// The stream the last callback was about (see `stream(_:)`): a cache into `streams`, which
    /// owns the streams, so it holds no reference of its own (`removeStream` clears it).
    @exclusivity(unchecked) var lastStream: Unmanaged<HTTP2Stream>?
    /// Streams whose end waits for a paused consumer to take the last bytes.
    @exclusivity(unchecked) var heldEnds: [HTTP2Stream] = []
    private let timer: UnsafeMutablePointer<uv_timer_t>
    /// Runs once just before the loop waits for I/O when requests were begun this turn: their
    /// HEADERS go out in one write, not one each (a hundred streams started by a hundred
    /// completions in one turn). Holds no retain (closed with the connection).
    private let prepare: UnsafeMutablePointer<uv_prepare_t>
    @exclusivity(unchecked) private var flushScheduled = false
    @exclusivity(unchecked) private var timerDeadline: UInt64 = 0
    @exclusivity(unchecked) private var outgoing = RawBuffer(capacity: 16 << 10)
    @exclusivity(unchecked) private var flushing = false
    @exclusivity(unchecked) private var flushAgain = false
    /// Inside nghttp2's reading: nothing may be produced until it returns (the read flushes).
    @exclusivity(unchecked) private var receiving = false
    @exclusivity(unchecked) private(set) var closeRequested = false
    /// The frames of one header block so far (the CONTINUATION bound).
    @exclusivity(unchecked) var headerBlockFrames = 0
    @exclusivity(unchecked) var headerBlockBytes = 0
    /// The error code of a GOAWAY the server sent with an error (its streams in flight fail with it).
    @exclusivity(unchecked) var goAwayError: UInt32?
    /// The error code of a GOAWAY nghttp2 sent because the server broke the protocol.
    @exclusivity(unchecked) var sentGoAwayError: UInt32?
    /// What connecting did (`-v`), for the transfer it serves first.
    package var trace: ConnectionTrace?
    /// What connecting took and found, from the stream.
    package let timings: ConnectTimings
    package let remoteEndpoint: RemoteEndpoint
    /// Streams begun on this connection so far (a stream after the first was multiplexed).
    @exclusivity(unchecked) package private(set) var streamsBegun = 0
    /// Streams that ended with their response: the server made progress here (a stream it
    /// refused afterwards, or left above a GOAWAY, may go again without counting as a replay).
    @exclusivity(unchecked) package internal(set) var streamsCompleted = 0
    /// The limit on header bytes every response head on this connection is held to.
    let maxHeaderBytes: Int
    /// A stream's first window and the one it grows to (`HTTP2Session.Settings`).
    let firstStreamWindow: Int32
    let grownStreamWindow: Int32

    /// Takes over `stream`, already open, and starts speaking HTTP/2 on it (the preface and
    /// SETTINGS go out at once).
    package init(id: UInt64, poolKey: Int, origin: Origin, stream: any ByteStream, owner: HTTP2ConnectionDelegate,
                 uvLoop: UnsafeMutablePointer<uv_loop_t>, limits: HTTP2ConnectionStateMachine.Limits,
                 settings: HTTP2Session.Settings = HTTP2Session.Settings()) {
        self.id = id
        self.poolKey = poolKey
        self.origin = origin
        self.stream = stream
        self.owner = owner
        self.uvLoop = uvLoop
        authority = origin.authorityField
        machine = HTTP2ConnectionStateMachine(now: uv_now(uvLoop), limits: limits)
        maxHeaderBytes = Int(settings.maxHeaderListSize)
        firstStreamWindow = settings.streamWindow
        grownStreamWindow = settings.grownStreamWindow
        let facts = stream.facts
        timings = facts.timings
        remoteEndpoint = facts.timings.remoteEndpoint
        timer = .allocate(capacity: 1)
        prepare = .allocate(capacity: 1)
        uv_timer_init(uvLoop, timer)
        timer.pointee.data = Unmanaged.passRetained(self).toOpaque()
        uv_prepare_init(uvLoop, prepare)
        prepare.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        session = HTTP2Session(events: self, settings: settings)
        stream.handOver(to: self)
        flush()
        arm(machine.nextDeadline)
    }

    var nowMillis: UInt64 { uv_now(uvLoop) }

    /// How long a connection with no stream stays open (the HTTP/1 pool's default idle limit).
    package static let idleLimitMillis: UInt64 = 60_000
    /// Silence after which reusing the connection sends a PING along (milliseconds).
    static let quietBeforePing: UInt64 = 30_000

    /// Whether a new stream may start here now.
    package var acceptsStreams: Bool { !closeRequested && machine.acceptsStreams }

    // MARK: - Commands from the owner

    /// Starts `transfer`'s request as a new stream.
    package func begin(_ transfer: Transfer, at nowNanos: UInt64 = monotonicNanos()) {
        precondition(!closeRequested, "a stream begun on a closed HTTP/2 connection")
        let carrier = HTTP2Stream(connection: self, transfer: transfer, now: nowMillis)
        transfer.carrier = carrier
        transfer.metrics.requestStart = nowNanos
        transfer.metrics.multiplexed = streamsBegun > 0 || !streams.isEmpty
        streamsBegun += 1
        // A connection silent for a while may be dead without a word (a NAT dropped it): a PING
        // goes with the stream, and no answer in time fails the connection (an unanswered
        // idempotent request is then retried on a new one).
        if case .sendPing = machine.reuseRequested(now: nowMillis, quietLimit: Self.quietBeforePing) { session.ping() }
        machine.streamOpened()
        guard let streamID = carrier.submit() else {
            _ = machine.streamClosed(now: nowMillis)
            transfer.carrier = nil
            if let error = carrier.submitFailure {
                // The body could not be opened (a missing file): the request's own error.
                owner.http2StreamFinished(self, transfer, outcome: .failure(error, replay: false))
                return
            }
            // nghttp2 has no stream ids left: the request goes elsewhere, unprocessed, and this
            // connection takes no new streams (it closes once the open ones are done).
            owner.http2ConnectionDraining(self)
            owner.http2StreamFinished(self, transfer, outcome: .failure(CourierError(.http2Protocol, "no stream ids left"), replay: true))
            perform(machine.drainRequested())
            return
        }
        streams.insert(carrier, for: Int(streamID))
        transfer.metrics.streamID = streamID
        scheduleFlush()
        arm(min(carrier.nextWake, machine.nextDeadline))
    }

    /// Serves no new stream and closes once the open ones are done (a request forbade reuse).
    package func closeAfterStreams() {
        perform(machine.drainRequested())
    }

    /// Closes the connection at the pool's request (shutdown, eviction).
    package func closeFromPool() {
        perform(machine.close())
    }

    // MARK: - Writing

    /// Writes what nghttp2 has to send, one batch per write, while the stream takes it.
    func flush() {
        guard !closeRequested else { return }
        if flushing || receiving {
            flushAgain = true
            return
        }
        flushing = true
        defer { flushing = false }
        repeat {
            flushAgain = false
            while !stream.hasPendingWrites, !closeRequested {
                outgoing.clear()
                if let error = session.produce(into: &outgoing, limit: 256 << 10) {
                    perform(machine.connectionLost(error))
                    return
                }
                guard outgoing.count > 0 else { break }
                stream.write(outgoing.bytes, nil, final: false)
            }
        } while flushAgain
        if session.isFinished, !closeRequested {
            // nghttp2 ended the session (it sent a GOAWAY: the server broke the protocol).
            let reason = sentGoAwayError.map { HTTP2Session.errorName($0) } ?? "session ended"
            perform(machine.connectionLost(CourierError(.http2Protocol, reason)))
        }
    }

    /// Flushes before the loop next waits for I/O (see `prepare`); inside nghttp2's reading,
    /// the read schedules it when it returns.
    private func scheduleFlush() {
        guard !receiving, !flushScheduled, !closeRequested else { return }
        flushScheduled = true
        uv_prepare_start(prepare) { handle in
            uv_prepare_stop(handle)
            let connection = Unmanaged<HTTP2Connection>.fromOpaque(handle!.pointee.data).takeUnretainedValue()
            connection.flushScheduled = false
            connection.flush()
        }
    }

    package func streamDidWrite(_ count: Int, final: Bool) {
        if !flushing, session.wantsWrite { flush() }
    }

    // MARK: - Reading

    package func streamDidOpen() {}
    package func streamDidFailToOpen(_ error: CourierError) {}

    package func streamDidReceive(_ bytes: UnsafeRawBufferPointer) {
        guard !closeRequested else { return }
        machine.frameReceived(now: nowMillis)
        receiving = true
        let failure = session.receive(bytes)
        receiving = false
        if let error = failure {
            perform(machine.connectionLost(error))
            return
        }
        // Before the loop waits again, once: TLS hands over each record of a read on its own, and
        // a server that writes one record per response would otherwise get one write per answer.
        scheduleFlush()
        // (Reads only move deadlines later, except the connection's own: a timer armed for an
        // earlier one fires, finds nothing due and re-arms, as HTTP/1's does.)
        arm(machine.nextDeadline)
    }

    package func streamDidEnd(_ end: StreamEnd) {
        switch end {
        case .failed(let error):
            perform(machine.connectionLost(error))
        case .closed:
            perform(machine.connectionLost(CourierError(.connectionReset, "the server closed the HTTP/2 connection")))
        }
    }

    // MARK: - Actions

    func perform(_ action: HTTP2ConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .capacityChanged(let limit):
            owner.http2CapacityChanged(self, limit: limit)
        case .drain(let lastStreamID):
            owner.http2ConnectionDraining(self)
            // (nghttp2 closes the streams above the last id itself, as REFUSED_STREAM.)
            _ = lastStreamID
        case .sendPing:
            session.ping()
            flush()
        case .closeQuietly:
            session.goAway()
            flush()
            owner.http2ConnectionDraining(self)
            closeConnection()
        case .fail(let error):
            owner.http2ConnectionDraining(self)
            let open = streams.allValues + heldEnds
            streams.removeAll()
            lastStream = nil
            heldEnds.removeAll()
            closeConnection()
            for carrier in open.sorted(by: { $0.id < $1.id }) {
                carrier.connectionFailed(error)
            }
        }
    }

    // MARK: - Deadlines

    /// Arms the timer for every deadline (the connection's and each stream's): after it fired.
    func rearmTimer() {
        var deadline = machine.nextDeadline
        streams.forEach { deadline = min(deadline, $0.nextWake) }
        for carrier in heldEnds { deadline = min(deadline, carrier.nextWake) }
        arm(deadline)
    }

    /// Makes sure the timer fires by `deadline` (an earlier one already armed stays).
    func arm(_ deadline: UInt64) {
        guard deadline != .max, !closeRequested else { return }
        if timerDeadline == 0 || deadline < timerDeadline {
            let now = nowMillis
            uv_timer_start(timer, Self.onTimer, deadline > now ? deadline - now : 0, 0)
            timerDeadline = deadline
        }
    }

    private static let onTimer: uv_timer_cb = { timer in
        let connection = Unmanaged<HTTP2Connection>.fromOpaque(timer!.pointee.data).takeUnretainedValue()
        connection.timerDeadline = 0
        connection.timerFired(now: connection.nowMillis)
    }

    private func timerFired(now: UInt64) {
        for carrier in streams.allValues.sorted(by: { $0.id < $1.id }) {
            carrier.paceTimerFired(now: now)
            carrier.continueTimerFired(now: now)
            if let error = carrier.machine.deadlinePassed(now: now) { carrier.abort(error) }
        }
        // (Closed streams whose last bytes wait for the consumer or the receive rate: their total
        // deadline still holds.)
        for carrier in heldEnds {
            carrier.paceTimerFired(now: now)
            if let error = carrier.machine.deadlinePassed(now: now) { carrier.abort(error) }
        }
        flush()
        perform(machine.timerFired(now: now))
        rearmTimer()
    }

    // MARK: - Closing

    private func closeConnection() {
        guard !closeRequested else { return }
        closeRequested = true
        stream.close()
        outgoing.free()
        uv_prepare_stop(prepare)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(prepare))) { handle in
            UnsafeMutableRawPointer(handle!).deallocate()
        }
        uv_timer_stop(timer)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { handle in
            Unmanaged<HTTP2Connection>.fromOpaque(handle!.pointee.data).release()
            UnsafeMutableRawPointer(handle!).deallocate()
        }
        owner.http2ConnectionClosed(self)
    }
}
