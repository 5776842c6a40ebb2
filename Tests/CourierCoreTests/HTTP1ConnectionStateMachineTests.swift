import Testing
@testable import CourierCore

/// The HTTP/1 connection machine, event by event, read like protocol traces.
@Suite("HTTP1ConnectionStateMachine")
struct HTTP1ConnectionStateMachineTests {
    typealias Machine = HTTP1ConnectionStateMachine
    typealias Deadlines = HTTP1ConnectionStateMachine.ExchangeDeadlines

    func connectedMachine() -> Machine {
        var machine = Machine(connectDeadline: 1_000)
        #expect(machine.connected() == .announceReady)
        #expect(machine.isIdle)
        return machine
    }

    /// A machine that served one exchange and is idle again (the next request reuses it).
    func reusedMachine() -> Machine {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.responseComplete(keepAlive: true, trailingBytes: false)
        return m
    }

    @Test func keepAliveExchangeReturnsToIdle() {
        var m = connectedMachine()
        #expect(m.sendRequest(replayable: true) == .writeRequest)
        #expect(m.requestWritten() == .none)
        let first = m.bytesReceived(now: 10)
        #expect(first)
        let second = m.bytesReceived(now: 11)
        #expect(!second, "only the first read starts the response")
        #expect(m.responseComplete(keepAlive: true, trailingBytes: false) == .completeRequest(close: false))
        #expect(m.state == .idle)
        #expect(m.completedExchanges == 1)
    }

    @Test func responseBeforeWriteCompletesClosesTheConnection() {
        // The server answered before reading the whole request (RFC 9112 section 9.5).
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.bytesReceived(now: 5)
        #expect(m.responseComplete(keepAlive: true, trailingBytes: false) == .completeRequest(close: true))
        #expect(m.state == .closed)
        #expect(m.requestWritten() == .none, "the late write report changes nothing")
    }

    @Test func serverConnectionCloseClosesAfterResponse() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        #expect(m.responseComplete(keepAlive: false, trailingBytes: false) == .completeRequest(close: true))
        #expect(m.state == .closed)
    }

    @Test func clientConnectionCloseClosesAfterResponse() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        m.requestAsksToClose()
        _ = m.requestWritten()
        #expect(m.responseComplete(keepAlive: true, trailingBytes: false) == .completeRequest(close: true))
    }

    @Test func trailingBytesPoisonTheConnection() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        #expect(m.responseComplete(keepAlive: true, trailingBytes: true) == .completeRequest(close: true))
    }

    @Test func staleReusedConnectionIsReplayedForIdempotentRequests() {
        var m = reusedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        // The server had closed it: EOF before any byte of the second response.
        let error = CourierError(.emptyReply)
        #expect(m.streamClosed(closeNotify: nil, body: .incomplete(error)) == .failRequest(error, replay: true))
        #expect(m.state == .closed)
    }

    @Test func resetBeforeAnyByteSaysSo() {
        var m = reusedMachine()
        _ = m.sendRequest(replayable: true)
        #expect(m.transportFailed(CourierError(.connectionReset, "ECONNRESET"))
            == .failRequest(CourierError(.connectionReset, "ECONNRESET before any response byte"), replay: true))
    }

    @Test func neverReplayOnAFreshConnection() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        let error = CourierError(.emptyReply)
        #expect(m.transportFailed(error) == .failRequest(error, replay: false))
    }

    @Test func neverReplayNonIdempotentRequests() {
        var m = reusedMachine()
        _ = m.sendRequest(replayable: false)
        let error = CourierError(.emptyReply)
        #expect(m.transportFailed(error) == .failRequest(error, replay: false))
    }

    @Test func neverReplayOnceTheResponseStarted() {
        var m = reusedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.bytesReceived(now: 3)
        let error = CourierError(.truncatedBody)
        #expect(m.transportFailed(error) == .failRequest(error, replay: false))
    }

    @Test func invalidResponseFailsWithoutReplay() {
        var m = reusedMachine()
        _ = m.sendRequest(replayable: true)
        let error = CourierError(.badStatusLine)
        #expect(m.responseInvalid(error) == .failRequest(error, replay: false))
        #expect(m.state == .closed)
    }

    // MARK: End of stream

    @Test func closeDelimitedBodyCompletesAtTheClose() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.bytesReceived(now: 1)
        #expect(m.streamClosed(closeNotify: nil, body: .complete(error: nil)) == .completeRequest(close: true))
    }

    @Test func closeDelimitedBodyOverTLSNeedsCloseNotify() {
        var withAlert = connectedMachine()
        _ = withAlert.sendRequest(replayable: true)
        _ = withAlert.requestWritten()
        _ = withAlert.bytesReceived(now: 1)
        #expect(withAlert.streamClosed(closeNotify: true, body: .complete(error: nil)) == .completeRequest(close: true))

        var cut = connectedMachine()
        _ = cut.sendRequest(replayable: true)
        _ = cut.requestWritten()
        _ = cut.bytesReceived(now: 1)
        guard case .failRequest(let error, let replay) = cut.streamClosed(closeNotify: false, body: .complete(error: nil)) else {
            Issue.record("a cut TLS stream completed a close-delimited body")
            return
        }
        #expect(error.code == .tlsTruncated)
        #expect(!replay)
    }

    @Test func bodyErrorAtTheCloseFailsTheRequest() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.bytesReceived(now: 1)
        let corrupt = CourierError(.corruptEncoding)
        #expect(m.streamClosed(closeNotify: nil, body: .complete(error: corrupt)) == .failRequest(corrupt, replay: false))
    }

    @Test func truncatedBodyAtTheCloseFails() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.bytesReceived(now: 1)
        let truncated = CourierError(.truncatedBody, "after 10 body bytes")
        #expect(m.streamClosed(closeNotify: true, body: .incomplete(truncated)) == .failRequest(truncated, replay: false))
    }

    @Test func idleConnectionEvents() {
        var eof = connectedMachine()
        #expect(eof.streamClosed(closeNotify: nil, body: nil) == .closeIdle)
        var reset = connectedMachine()
        #expect(reset.transportFailed(CourierError(.connectionReset)) == .closeIdle)
        var junk = connectedMachine()
        #expect(junk.unsolicitedBytes() == .closeIdle)
        #expect(junk.state == .closed)
    }

    // MARK: Connecting

    @Test func connectingFailure() {
        var m = Machine(connectDeadline: 100)
        let error = CourierError(.connectFailed, "ECONNREFUSED")
        #expect(m.connectFailed(error) == .failConnect(error))
        #expect(m.state == .closed)
        #expect(m.connectFailed(error) == .none, "a failure after the deadline closed it changes nothing")
    }

    @Test func connectDeadline() {
        var m = Machine(connectDeadline: 100)
        #expect(m.nextDeadline == 100)
        #expect(m.timerFired(now: 99, bodyBytes: 0) == .none)
        #expect(m.timerFired(now: 100, bodyBytes: 0) == .failConnect(CourierError(.connectTimeout)))
        #expect(m.state == .closed)
        #expect(m.nextDeadline == .max)
    }

    // MARK: Deadlines

    @Test func idleInThePoolUntilItsLimit() {
        var m = reusedMachine()
        m.parked(now: 1_000)
        #expect(m.nextDeadline == 1_000 + 60_000, "the default pool idle limit")
        var short = connectedMachine()
        _ = short.sendRequest(replayable: true, poolIdleLimit: 500)
        _ = short.requestWritten()
        _ = short.responseComplete(keepAlive: true, trailingBytes: false)
        short.parked(now: 2_000)
        #expect(short.nextDeadline == 2_500)
        #expect(short.timerFired(now: 2_499, bodyBytes: 0) == .none)
        #expect(short.timerFired(now: 2_500, bodyBytes: 0) == .closeIdle)
    }

    @Test func firstByteThenIdleDeadline() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true, deadlines: Deadlines(total: 10_000, firstByte: 100, idleLimit: 50))
        _ = m.requestWritten()
        #expect(m.nextDeadline == 100)
        #expect(m.timerFired(now: 99, bodyBytes: 0) == .none)
        let first = m.bytesReceived(now: 90)
        #expect(first)
        #expect(m.nextDeadline == 140, "after the first byte, silence is bounded instead")
        _ = m.bytesReceived(now: 130)
        #expect(m.nextDeadline == 180)
        #expect(m.timerFired(now: 150, bodyBytes: 7) == .none, "a read moved the deadline")
        #expect(m.timerFired(now: 180, bodyBytes: 7) == .failRequest(CourierError(.idleTimeout, "after 7 body bytes"), replay: false))
    }

    @Test func firstByteDeadlinePasses() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true, deadlines: Deadlines(firstByte: 100))
        #expect(m.timerFired(now: 100, bodyBytes: 0) == .failRequest(CourierError(.firstByteTimeout), replay: false))
    }

    @Test func totalDeadlineWinsWhenEarlier() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true, deadlines: Deadlines(total: 80, firstByte: 100, idleLimit: 1_000))
        #expect(m.nextDeadline == 80)
        #expect(m.timerFired(now: 80, bodyBytes: 0) == .failRequest(CourierError(.totalTimeout), replay: false))
    }

    @Test func noDeadlinesMeansNone() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        #expect(m.nextDeadline == .max)
        _ = m.bytesReceived(now: 5)
        #expect(m.nextDeadline == .max, "no idle limit never overflows into a deadline")
    }

    @Test func abortMidExchange() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        #expect(m.abort(CourierError(.cancelled)) == .failRequest(CourierError(.cancelled), replay: false))
    }

    @Test func closedMachineIgnoresLateEvents() {
        var m = connectedMachine()
        #expect(m.close() == .close)
        #expect(m.close() == .none)
        #expect(m.requestWritten() == .none)
        #expect(m.transportFailed(CourierError(.connectionReset)) == .none)
        #expect(m.streamClosed(closeNotify: nil, body: nil) == .none)
        #expect(m.abort(CourierError(.cancelled)) == .none)
        #expect(m.timerFired(now: .max, bodyBytes: 0) == .none)
    }
}
