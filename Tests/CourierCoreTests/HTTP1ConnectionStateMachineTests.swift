import Testing
@testable import CourierCore

/// The HTTP/1 connection machine, event by event, read like protocol traces.
@Suite("HTTP1ConnectionStateMachine")
struct HTTP1ConnectionStateMachineTests {
    typealias Machine = HTTP1ConnectionStateMachine

    func connectedMachine() -> Machine {
        var machine = Machine()
        #expect(machine.connected() == .none)
        #expect(machine.isIdle)
        return machine
    }

    @Test func keepAliveExchangeReturnsToIdle() {
        var m = connectedMachine()
        #expect(m.sendRequest(replayable: true) == .writeRequest)
        #expect(m.requestWritten() == .none)
        m.responseBytesReceived()
        #expect(m.responseComplete(keepAlive: true, trailingBytes: false) == .completeRequest(close: false))
        #expect(m.state == .idle)
        #expect(m.completedExchanges == 1)
    }

    @Test func responseBeforeWriteCompletesStillWaitsForTheWrite() {
        // A tiny response can be parsed before libuv reports the write callback.
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        m.responseBytesReceived()
        // Request still being written when the response completes: the server answered early.
        #expect(m.responseComplete(keepAlive: true, trailingBytes: false) == .completeRequest(close: true))
        #expect(m.state == .closed)
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
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.responseComplete(keepAlive: true, trailingBytes: false)
        // Second request on the reused connection: the server had closed it.
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        let error = CourierError(.emptyReply)
        #expect(m.transportFailed(error) == .failRequest(error, replay: true))
        #expect(m.state == .closed)
    }

    @Test func neverReplayOnAFreshConnection() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        let error = CourierError(.emptyReply)
        #expect(m.transportFailed(error) == .failRequest(error, replay: false))
    }

    @Test func neverReplayNonIdempotentRequests() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.responseComplete(keepAlive: true, trailingBytes: false)
        _ = m.sendRequest(replayable: false)
        let error = CourierError(.connectionReset)
        #expect(m.transportFailed(error) == .failRequest(error, replay: false))
    }

    @Test func neverReplayOnceTheResponseStarted() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.responseComplete(keepAlive: true, trailingBytes: false)
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        m.responseBytesReceived()
        let error = CourierError(.truncatedBody)
        #expect(m.transportFailed(error) == .failRequest(error, replay: false))
    }

    @Test func invalidResponseFailsWithoutReplay() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        let error = CourierError(.badStatusLine)
        #expect(m.responseInvalid(error) == .failRequest(error, replay: false))
        #expect(m.state == .closed)
    }

    @Test func idleConnectionEvents() {
        var eof = connectedMachine()
        #expect(eof.transportFailed(CourierError(.connectionReset)) == .close)
        var junk = connectedMachine()
        #expect(junk.responseInvalid(CourierError(.unsolicitedData)) == .close)
        var timeout = connectedMachine()
        #expect(timeout.timedOut(CourierError(.idleTimeout)) == .close)
    }

    @Test func connectingFailure() {
        var m = Machine()
        #expect(m.connectFailed() == .close)
        #expect(m.state == .closed)
        #expect(m.connected() == .none, "late connect callback after failure is ignored")
        #expect(m.state == .closed)
    }

    @Test func timeoutAndAbortMidExchange() {
        var m = connectedMachine()
        _ = m.sendRequest(replayable: true)
        let error = CourierError(.firstByteTimeout)
        #expect(m.timedOut(error) == .failRequest(error, replay: false))
        var n = connectedMachine()
        _ = n.sendRequest(replayable: true)
        #expect(n.abort(CourierError(.cancelled)) == .failRequest(CourierError(.cancelled), replay: false))
    }

    @Test func closedMachineIgnoresLateEvents() {
        var m = connectedMachine()
        #expect(m.close() == .close)
        #expect(m.close() == .none)
        #expect(m.requestWritten() == .none)
        #expect(m.responseComplete(keepAlive: true, trailingBytes: false) == .none)
        #expect(m.transportFailed(CourierError(.connectionReset)) == .none)
        #expect(m.timedOut(CourierError(.idleTimeout)) == .none)
    }
}
