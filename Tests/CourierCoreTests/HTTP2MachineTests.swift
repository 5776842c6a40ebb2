import Testing
@testable import CourierCore

/// The HTTP/2 machines and the pool's multiplexing, event by event, without sockets.
@Suite("HTTP/2 machines")
struct HTTP2MachineTests {
    typealias Pool = ConnectionPoolState<Int, Int, String>

    @Test func connectionCapacityGoAwayAndIdle() {
        var m = HTTP2ConnectionStateMachine(now: 0, limits: .init(idle: 1_000))
        #expect(m.acceptsStreams && m.peerStreamLimit == 100)
        let limit = m.settingsReceived(maxConcurrentStreams: 2)
        #expect(limit == .capacityChanged(limit: 2))
        let same = m.settingsReceived(maxConcurrentStreams: 2)
        #expect(same == .none)
        m.streamOpened()
        m.streamOpened()
        #expect(!m.acceptsStreams)
        let first = m.streamClosed(now: 10)
        #expect(first == .none && m.acceptsStreams)
        let away = m.goAwayReceived(lastStreamID: 3, error: 0)
        #expect(away == .drain(lastStreamID: 3) && !m.acceptsStreams)
        let lower = m.goAwayReceived(lastStreamID: 5, error: 0)
        #expect(lower == .drain(lastStreamID: 3), "a second GOAWAY only lowers the last id")
        let last = m.streamClosed(now: 20)
        #expect(last == .closeQuietly && m.state == .closed)
    }

    @Test func idleDeadlineAndSettingsTimeout() {
        var m = HTTP2ConnectionStateMachine(now: 0, limits: .init(idle: 1_000, settingsTimeout: 500))
        let early = m.timerFired(now: 100)
        #expect(early == .none)
        let noSettings = m.timerFired(now: 500)
        guard case .fail(let error) = noSettings else { Issue.record("\(noSettings)"); return }
        #expect(error.code == .http2Protocol)

        var idle = HTTP2ConnectionStateMachine(now: 0, limits: .init(idle: 1_000))
        _ = idle.settingsReceived(maxConcurrentStreams: nil)
        idle.streamOpened()
        let busy = idle.timerFired(now: 5_000)
        #expect(busy == .none, "no idle close while a stream is open")
        _ = idle.streamClosed(now: 5_000)
        #expect(idle.nextDeadline == 6_000)
        let closed = idle.timerFired(now: 6_000)
        #expect(closed == .closeQuietly)
    }

    @Test func pingBeforeReuseAndItsTimeout() {
        var m = HTTP2ConnectionStateMachine(now: 0, limits: .init(idle: 100_000, pingTimeout: 200))
        _ = m.settingsReceived(maxConcurrentStreams: nil)
        let fresh = m.reuseRequested(now: 10, quietLimit: 1_000)
        #expect(fresh == .none)
        let quiet = m.reuseRequested(now: 5_000, quietLimit: 1_000)
        #expect(quiet == .sendPing && m.pingDeadline == 5_200)
        m.pingAcknowledged(now: 5_100)
        #expect(m.pingDeadline == .max)
        _ = m.reuseRequested(now: 9_000, quietLimit: 1_000)
        let dead = m.timerFired(now: 9_200)
        guard case .fail(let error) = dead else { Issue.record("\(dead)"); return }
        #expect(error.code == .idleTimeout)
    }

    @Test func keepAlivePingsRunBusyOrIdle() {
        var m = HTTP2ConnectionStateMachine(now: 0, limits: .init(idle: 100_000, pingTimeout: 200, keepAlivePingInterval: 1_000))
        _ = m.settingsReceived(maxConcurrentStreams: nil)
        m.streamOpened()
        #expect(m.nextDeadline == 1_000)
        #expect(m.timerFired(now: 999) == .none)
        #expect(m.timerFired(now: 1_000) == .sendPing && m.pingDeadline == 1_200)
        m.pingAcknowledged(now: 1_050)
        #expect(m.nextDeadline == 2_000, "the next PING one interval after the last")
        _ = m.streamClosed(now: 1_500)
        #expect(m.timerFired(now: 2_000) == .sendPing, "idle too")
        let dead = m.timerFired(now: 2_200)
        guard case .fail(let error) = dead else { Issue.record("\(dead)"); return }
        #expect(error.code == .idleTimeout)
        let none = HTTP2ConnectionStateMachine(now: 0, limits: .init(idle: 100_000))
        #expect(none.keepAlivePingAt == .max, "no interval, no keep-alive PING")
    }

    @Test func drainOnRequestClosesAfterTheLastStream() {
        var m = HTTP2ConnectionStateMachine(now: 0, limits: .init(idle: 1_000))
        m.streamOpened()
        let drain = m.drainRequested()
        #expect(drain == .none && !m.acceptsStreams)
        let end = m.streamClosed(now: 1)
        #expect(end == .closeQuietly)
        var idle = HTTP2ConnectionStateMachine(now: 0, limits: .init(idle: 1_000))
        let now = idle.drainRequested()
        #expect(now == .closeQuietly)
    }

    @Test func streamDeadlines() {
        var s = HTTP2StreamStateMachine(now: 0, totalDeadline: 10_000, firstByteLimit: 1_000, idleLimit: 500)
        #expect(s.nextDeadline == 500, "while the body goes out, the server must take it: the send limit (the idle one)")
        #expect(s.deadlinePassed(now: 500)?.code == .sendTimeout)
        s.bodyProgress(now: 100)
        #expect(s.nextDeadline == 600)
        s.requestSent(now: 200)
        #expect(s.nextDeadline == 1_200, "the first-byte clock starts when the request is sent")
        #expect(s.deadlinePassed(now: 1_200)?.code == .firstByteTimeout)
        s.headReceived(now: 300)
        #expect(s.nextDeadline == 800)
        s.windowHeld(true, by: .consumer, now: 400)
        #expect(s.nextDeadline == 10_000, "no silence deadline while the consumer holds the window shut")
        s.windowHeld(true, by: .rate, now: 500)
        s.windowHeld(false, by: .consumer, now: 1_000)
        #expect(s.nextDeadline == 10_000, "nor while the receive rate holds it")
        s.windowHeld(false, by: .rate, now: 2_000)
        #expect(s.nextDeadline == 2_500, "the silence clock starts over when the window opens")
        s.windowHeld(false, by: .rate, now: 2_400)
        #expect(s.nextDeadline == 2_500, "opening an open window moves nothing")
        #expect(s.deadlinePassed(now: 2_500)?.code == .idleTimeout)
        #expect(s.deadlinePassed(now: 10_000)?.code == .totalTimeout)
        s.closed()
        #expect(s.deadlinePassed(now: 20_000) == nil)
    }

    /// A send limit apart from the idle limit (httpx's write timeout): the body runs under it,
    /// unless its producer or a 100 holds it; the response under the first-byte and idle limits.
    @Test func streamSendLimit() {
        var s = HTTP2StreamStateMachine(now: 0, totalDeadline: 10_000, firstByteLimit: 1_000, idleLimit: 3_000, sendLimit: 200)
        #expect(s.nextDeadline == 200, "the body must start going within the send limit")
        s.bodyProgress(now: 150)
        #expect(s.nextDeadline == 350)
        #expect(s.deadlinePassed(now: 349) == nil)
        #expect(s.deadlinePassed(now: 350) == CourierError(.sendTimeout, "the server stopped reading the request body"))
        s.bodyHeld(.producer)
        #expect(s.nextDeadline == 10_000, "the producer's pace: the total only")
        s.bodyProgress(now: 5_000)
        #expect(s.nextDeadline == 5_200)
        s.requestSent(now: 5_100)
        #expect(s.nextDeadline == 6_100, "then the first byte")
        s.headReceived(now: 5_500)
        #expect(s.nextDeadline == 8_500, "then the idle limit")
        #expect(s.deadlinePassed(now: 8_500)?.code == .idleTimeout)
        var c = HTTP2StreamStateMachine(now: 0, totalDeadline: 10_000, firstByteLimit: 1_000, idleLimit: 3_000, sendLimit: 200)
        c.bodyHeld(.continueWait)
        #expect(c.nextDeadline == 1_000, "waiting for a 100 is waiting for the server's answer")
        #expect(c.deadlinePassed(now: 1_000)?.code == .firstByteTimeout)
        c.responseFrame(now: 400)
        #expect(c.nextDeadline == 10_000, "after the 100, until the body is released")
        c.bodyProgress(now: 500)
        #expect(c.nextDeadline == 700)
        var done = HTTP2StreamStateMachine(now: 0, totalDeadline: 10_000, firstByteLimit: 1_000, idleLimit: 3_000)
        done.requestSent(now: 0)
        done.bodyHeld(.producer)
        #expect(done.bodyHold == nil, "a sent request holds nothing")
    }

    @Test func requestHeadersFollowRFC9113() {
        let headers: HTTPHeaders = ["Host": "api.example:8443", "Connection": "keep-alive", "Keep-Alive": "5",
                                    "Transfer-Encoding": "chunked", "Upgrade": "h2c", "TE": "gzip", "X-Token": "a"]
        let block = HTTP2RequestHeaders(method: .post, scheme: "https", authority: "ignored", path: "/p", query: "q=1",
                                        headers: headers, contentLength: 5, acceptEncoding: true)
        #expect(block.pairs.map(\.name) == [":method", ":scheme", ":authority", ":path", "x-token", "accept-encoding", "content-length"])
        #expect(block.pairs[2].value == "api.example:8443" && block.pairs[3].value == "/p?q=1")
        let trailers = HTTP2RequestHeaders(method: .get, scheme: "http", authority: "h", path: "/", query: nil,
                                           headers: ["te": "trailers"], contentLength: nil, acceptEncoding: false)
        #expect(trailers.pairs.last! == ("te", "trailers"))
    }

    @Test func poolWaitsForTheFirstConnectionsProtocol() {
        var pool = Pool(defaultLimit: 6)
        pool.setMayMultiplex(true, for: 0)
        let first = pool.acquire("a", key: 0)
        let second = pool.acquire("b", key: 0)
        let third = pool.acquire("c", key: 0)
        #expect(first == .wait(connect: 1) && second == .wait(connect: 0) && third == .wait(connect: 0),
                "one connection until its ALPN answer (PIPEWAIT)")
        let (served, more) = pool.connectedMultiplexed(7, key: 0, limit: 2)
        #expect(served == ["a", "b"] && more == 1, "two fit; a second connection opens for the third")
        #expect(pool.acquire("d", key: 0) == .wait(connect: 0))
        #expect(pool.streamEnded(on: 7, key: 0) == .serve("c"))
        let raised = pool.streamLimitChanged(7, key: 0, limit: 3)
        #expect(raised == ["d"])
        let (none, _) = pool.connectedMultiplexed(8, key: 0, limit: 100)
        #expect(none.isEmpty)
        #expect(pool.acquireStream(key: 0) == 8)
        #expect(pool.multiplexedGone(8, key: 0) == 0)
        #expect(pool.streamEnded(on: 8, key: 0) == .none, "a gone connection's streams are not counted")
    }

    @Test func aServerAllowingNoStreamsIsWaitedFor() {
        var pool = Pool(defaultLimit: 6)
        pool.setMayMultiplex(true, for: 0)
        #expect(pool.acquire("a", key: 0) == .wait(connect: 1))
        let (served, _) = pool.connectedMultiplexed(7, key: 0, limit: 100)
        #expect(served == ["a"])
        #expect(pool.streamLimitChanged(7, key: 0, limit: 0).isEmpty)
        #expect(pool.acquire("b", key: 0) == .wait(connect: 0), "no second connection to get around the server's 0")
        #expect(pool.streamEnded(on: 7, key: 0) == .none)
        #expect(pool.streamLimitChanged(7, key: 0, limit: 5) == ["b"], "served once the server allows streams")
    }

    @Test func aKeyThatLearnsHTTP1OpensTheRest() {
        var pool = Pool(defaultLimit: 6)
        pool.setMayMultiplex(true, for: 0)
        #expect(pool.acquire("a", key: 0) == .wait(connect: 1))
        #expect(pool.acquire("b", key: 0) == .wait(connect: 0))
        #expect(pool.acquire("c", key: 0) == .wait(connect: 0))
        #expect(pool.learnedHTTP1(key: 0) == 2, "the other waiters get connections of their own")
        #expect(pool.connected(1, key: 0) == .serve("a"))
    }
}
