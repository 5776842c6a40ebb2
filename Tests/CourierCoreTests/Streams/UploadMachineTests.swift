import Testing
@testable import CourierCore

/// The connection machine's body events: `Expect: 100-continue`, an early answer, write progress
/// as liveness, and paused reads.
@Suite("HTTP1ConnectionStateMachine bodies")
struct UploadMachineTests {
    typealias Machine = HTTP1ConnectionStateMachine
    typealias Deadlines = HTTP1ConnectionStateMachine.ExchangeDeadlines

    func connected() -> Machine {
        var machine = Machine(connectDeadline: 1_000)
        _ = machine.connected()
        return machine
    }

    func exchange(_ m: Machine) -> Machine.Exchange? {
        if case .active(let exchange) = m.state { return exchange }
        return nil
    }

    /// The upload's own silence: our writes stopped going out.
    static let stoppedReading = Machine.Action.failRequest(CourierError(.sendTimeout, "the server stopped reading the request body"), replay: false)

    /// Records `what` unless `action` fails the request with an idle timeout.
    func expectIdleTimeout(_ action: Machine.Action, _ what: Comment) {
        guard case .failRequest(let error, _) = action else {
            Issue.record(what)
            return
        }
        #expect(error.code == .idleTimeout)
    }

    @Test func aHundredReleasesTheHeldBody() {
        var m = connected()
        #expect(m.sendRequest(replayable: false, deadlines: Deadlines(firstByte: 60_000)) == .writeRequest)
        m.bodyFollows(Machine.Flow(awaitingContinue: true, continueDeadline: 1_000), now: 0)
        #expect(m.nextDeadline == 1_000, "the continue wait is the next deadline")
        #expect(m.informationalReceived(status: 103) == .none, "only a 100 releases the body")
        #expect(m.informationalReceived(status: 100) == .sendBody)
        #expect(m.informationalReceived(status: 100) == .none, "released once")
        #expect(!m.flow.awaitingContinue)
    }

    @Test func aSilentServerGetsTheBodyAfterTheWait() {
        var m = connected()
        _ = m.sendRequest(replayable: false, deadlines: Deadlines(firstByte: 60_000))
        m.bodyFollows(Machine.Flow(awaitingContinue: true, continueDeadline: 1_000), now: 0)
        #expect(m.timerFired(now: 999, bodyBytes: 0) == .none)
        #expect(m.timerFired(now: 1_000, bodyBytes: 0) == .sendBody)
        #expect(exchange(m) != nil, "the exchange goes on")
    }

    @Test func anEarlyAnswerStopsTheBodyAndClosesAfterTheResponse() {
        var m = connected()
        _ = m.sendRequest(replayable: false)
        m.bodyFollows(Machine.Flow(awaitingContinue: true, continueDeadline: 1_000), now: 0)
        _ = m.bytesReceived(now: 5)
        #expect(m.finalHeadBeforeBodySent() == .stopSendingBody)
        #expect(m.timerFired(now: 2_000, bodyBytes: 0) == .none, "no body goes out after the answer")
        #expect(m.responseComplete(keepAlive: true, trailingBytes: false) == .completeRequest(close: true),
                "half a request was sent: the connection cannot be reused")
    }

    @Test func aFinalHeadAfterTheWholeBodyChangesNothing() {
        var m = connected()
        _ = m.sendRequest(replayable: false)
        m.bodyFollows(Machine.Flow(), now: 0)
        _ = m.requestWritten()
        #expect(m.finalHeadBeforeBodySent() == .none)
        #expect(m.responseComplete(keepAlive: true, trailingBytes: false) == .completeRequest(close: false))
    }

    @Test func anUploadInProgressIsNotSilence() {
        var m = connected()
        _ = m.sendRequest(replayable: false, deadlines: Deadlines(firstByte: 500, idleLimit: 1_000))
        m.bodyFollows(Machine.Flow(firstByteLimit: 500), now: 0)
        m.bodyBytesWritten(now: 900)
        #expect(m.nextDeadline == 1_900, "silence counts from the last write while the body goes out")
        #expect(m.timerFired(now: 1_000, bodyBytes: 0) == .none, "the first-byte deadline does not run during the upload")
        m.bodyBytesWritten(now: 2_000)
        #expect(m.requestWritten() == .none)
        #expect(m.nextDeadline == 2_500, "the first byte is due a first-byte limit after the last request byte")
        #expect(m.timerFired(now: 2_500, bodyBytes: 0) == .failRequest(CourierError(.firstByteTimeout), replay: false))
    }

    /// A 100 Continue is the first response byte, but the server then waits for the body: an
    /// upload that outlasts the idle limit is not silence, nor is the server's think time after it.
    @Test func anUploadAfterAHundredIsNotSilence() {
        var m = connected()
        _ = m.sendRequest(replayable: false, deadlines: Deadlines(firstByte: 500, idleLimit: 1_000))
        m.bodyFollows(Machine.Flow(awaitingContinue: true, continueDeadline: 1_000, firstByteLimit: 500), now: 0)
        let first = m.bytesReceived(now: 100)
        #expect(first, "the 100 is the response's first byte")
        #expect(m.informationalReceived(status: 100) == .sendBody)
        for now in stride(from: UInt64(600), through: 3_000, by: 600) {
            m.bodyBytesWritten(now: now)
            #expect(m.timerFired(now: now + 999, bodyBytes: 0) == .none, "writing at \(now) ms")
        }
        #expect(m.nextDeadline == 4_000)
        // The body is out at 3,000 ms: the server's answer may take the idle limit from there.
        #expect(m.requestWritten() == .none)
        #expect(m.timerFired(now: 3_999, bodyBytes: 0) == .none)
        expectIdleTimeout(m.timerFired(now: 4_000, bodyBytes: 0), "silence after the body did not fail")
    }

    /// Our writes stop after a 100 (the server stopped reading): the upload's own failure.
    @Test func aStalledUploadAfterAHundredTimesOutAsAnUpload() {
        var m = connected()
        _ = m.sendRequest(replayable: false, deadlines: Deadlines(firstByte: 500, idleLimit: 1_000))
        m.bodyFollows(Machine.Flow(awaitingContinue: true, continueDeadline: 1_000), now: 0)
        _ = m.bytesReceived(now: 100)
        _ = m.informationalReceived(status: 100)
        m.bodyBytesWritten(now: 200)
        #expect(m.timerFired(now: 1_200, bodyBytes: 0) == Self.stoppedReading)
    }

    /// A producer with nothing yet is the caller's pace: no silence deadline runs while it waits
    /// (before or after the response started), the total does, and silence counts from its return.
    @Test func waitingForTheProducerIsNotSilence() {
        for afterHundred in [false, true] {
            var m = connected()
            _ = m.sendRequest(replayable: false, deadlines: Deadlines(total: 60_000, firstByte: 500, idleLimit: 1_000))
            m.bodyFollows(Machine.Flow(awaitingContinue: afterHundred, continueDeadline: 1_000), now: 0)
            if afterHundred {
                _ = m.bytesReceived(now: 100)
                _ = m.informationalReceived(status: 100)
            }
            m.bodyBytesWritten(now: 200)
            m.producerWaits(true, now: 200)
            #expect(m.nextDeadline == 60_000, "after a 100: \(afterHundred)")
            #expect(m.timerFired(now: 30_000, bodyBytes: 0) == .none, "after a 100: \(afterHundred)")
            m.producerWaits(false, now: 30_000)
            #expect(m.nextDeadline == 31_000, "after a 100: \(afterHundred)")
            #expect(m.timerFired(now: 30_999, bodyBytes: 0) == .none)
            #expect(m.timerFired(now: 31_000, bodyBytes: 0) == Self.stoppedReading)
        }
        var m = connected()
        _ = m.sendRequest(replayable: false, deadlines: Deadlines(total: 5_000, firstByte: 500, idleLimit: 1_000))
        m.bodyFollows(Machine.Flow(), now: 0)
        m.producerWaits(true, now: 10)
        #expect(m.timerFired(now: 5_000, bodyBytes: 0) == .failRequest(CourierError(.totalTimeout), replay: false))
    }

    @Test func aStalledUploadTimesOut() {
        var m = connected()
        _ = m.sendRequest(replayable: false, deadlines: Deadlines(firstByte: 500, idleLimit: 1_000))
        m.bodyFollows(Machine.Flow(), now: 0)
        #expect(m.timerFired(now: 1_000, bodyBytes: 0) == Self.stoppedReading, "a stalled upload fails as one")
    }

    /// A send limit apart from the idle limit (httpx's write timeout): the body runs under it,
    /// before and after a 100; the response under the idle limit.
    @Test func theSendLimitIsTheUploadsAndTheIdleLimitTheResponses() {
        let deadlines = Deadlines(firstByte: 5_000, idleLimit: 3_000)
        var m = connected()
        _ = m.sendRequest(replayable: false, deadlines: deadlines)
        m.bodyFollows(Machine.Flow(sendLimit: 200), now: 0)
        m.bodyBytesWritten(now: 100)
        #expect(m.nextDeadline == 300)
        #expect(m.timerFired(now: 299, bodyBytes: 0) == .none)
        #expect(m.timerFired(now: 300, bodyBytes: 0) == Self.stoppedReading)
        var after = connected()
        _ = after.sendRequest(replayable: false, deadlines: deadlines)
        after.bodyFollows(Machine.Flow(awaitingContinue: true, continueDeadline: 1_000, sendLimit: 200), now: 0)
        _ = after.bytesReceived(now: 100)
        #expect(after.informationalReceived(status: 100) == .sendBody)
        after.bodyBytesWritten(now: 150)
        #expect(after.nextDeadline == 350, "after a 100 too")
        #expect(after.timerFired(now: 350, bodyBytes: 0) == Self.stoppedReading)
        var sent = connected()
        _ = sent.sendRequest(replayable: false, deadlines: deadlines)
        sent.bodyFollows(Machine.Flow(sendLimit: 200), now: 0)
        sent.bodyBytesWritten(now: 100)
        _ = sent.requestWritten()
        _ = sent.bytesReceived(now: 400)
        #expect(sent.nextDeadline == 3_400, "the response: the idle limit")
        expectIdleTimeout(sent.timerFired(now: 3_400, bodyBytes: 10), "silence mid-response did not fail")
    }

    @Test func pausedReadingSuspendsReadDeadlinesButNotTheTotal() {
        var m = connected()
        _ = m.sendRequest(replayable: true, deadlines: Deadlines(total: 10_000, firstByte: 1_000, idleLimit: 1_000))
        _ = m.requestWritten()
        _ = m.bytesReceived(now: 100)
        m.readingPaused(true, now: 200)
        #expect(m.nextDeadline == 10_000, "a consumer that paused is not the server going silent")
        #expect(m.timerFired(now: 5_000, bodyBytes: 10) == .none)
        m.readingPaused(false, now: 6_000)
        #expect(m.nextDeadline == 7_000, "silence counts from the resumption")
        m.readingPaused(true, now: 6_500)
        #expect(m.timerFired(now: 10_000, bodyBytes: 10) == .failRequest(CourierError(.totalTimeout), replay: false))
    }

    @Test func pauseAfterTheExchangeEndedIsIgnored() {
        var m = connected()
        _ = m.sendRequest(replayable: true)
        _ = m.requestWritten()
        _ = m.responseComplete(keepAlive: true, trailingBytes: false)
        m.readingPaused(true, now: 1)
        #expect(m.state == .idle)
        _ = m.sendRequest(replayable: true)
        #expect(!m.flow.readingPaused, "a new exchange starts reading")
    }

    @Test func expectationApplies() {
        #expect(ExpectContinue.automatic.applies(toLength: 1 << 20))
        #expect(!ExpectContinue.automatic.applies(toLength: (1 << 20) - 1))
        #expect(ExpectContinue.automatic.applies(toLength: nil), "unknown lengths wait")
        #expect(ExpectContinue.always.applies(toLength: 1))
        #expect(!ExpectContinue.always.applies(toLength: 0))
        #expect(!ExpectContinue.never.applies(toLength: nil))
    }

    @Test func chunkLines() {
        var buffer = RawBuffer(capacity: 32)
        defer { buffer.free() }
        RequestEncoder.encodeChunkLine(size: 0x1f40, first: true, into: &buffer)
        #expect(Array(buffer.bytes) == Array("1f40\r\n".utf8))
        RequestEncoder.encodeChunkLine(size: 1, first: false, into: &buffer)
        #expect(Array(buffer.bytes) == Array("\r\n1\r\n".utf8))
        RequestEncoder.encodeChunkLine(size: 0, first: false, into: &buffer)
        #expect(Array(buffer.bytes) == Array("\r\n0\r\n\r\n".utf8))
        RequestEncoder.encodeChunkLine(size: 0, first: true, into: &buffer)
        #expect(Array(buffer.bytes) == Array("0\r\n\r\n".utf8), "an empty chunked body is the last chunk alone")
        RequestEncoder.encodeChunkLine(size: Int(Int32.max), first: true, into: &buffer)
        #expect(Array(buffer.bytes) == Array("7fffffff\r\n".utf8))
    }

    @Test func chunkedHeadCarriesNoLength() {
        var head: [UInt8] = []
        RequestEncoder.encodeHead(method: .put, path: "/u", query: nil, hostHeader: "h", headers: HTTPHeaders(),
                                  framing: .init(contentLength: 5, chunked: true, expectContinue: true), into: &head)
        let text = String(decoding: head, as: UTF8.self)
        #expect(text == "PUT /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
    }
}

/// The transfer machine's download events: continuing after a break, starting over.
@Suite("TransferStateMachine downloads")
struct DownloadMachineTests {
    typealias Machine = TransferStateMachine

    func running() -> Machine {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: .max)
        _ = m.started(totalDeadline: .max)
        m.connectionAssigned()
        return m
    }

    @Test func aBrokenDownloadContinuesWithinItsBudget() {
        var m = running()
        let reset = ExchangeOutcome.failure(CourierError(.connectionReset, "mid-body"), replay: false)
        #expect(m.exchangeEnded(reset, mayReplay: true, shuttingDown: false, resumeLimit: 2, canResume: true) == .resumeDownload)
        #expect(m.state == .waitingForConnection)
        m.connectionAssigned()
        #expect(m.exchangeEnded(reset, mayReplay: true, shuttingDown: false, resumeLimit: 2, canResume: true) == .resumeDownload)
        m.connectionAssigned()
        #expect(m.exchangeEnded(reset, mayReplay: true, shuttingDown: false, resumeLimit: 2, canResume: true)
                    == .finish(CourierError(.connectionReset, "mid-body"), releasing: .slot), "the budget is spent")
        #expect(m.resumesUsed == 2)
    }

    @Test func nothingToContinueFromFails() {
        var m = running()
        let reset = ExchangeOutcome.failure(CourierError(.connectionReset), replay: false)
        #expect(m.exchangeEnded(reset, mayReplay: true, shuttingDown: false, resumeLimit: 3, canResume: false)
                    == .finish(CourierError(.connectionReset), releasing: .slot))
    }

    @Test func localFailuresAndCancellationDoNotContinue() {
        var m = running()
        let full = ExchangeOutcome.failure(CourierError(.fileWrite, "disk full"), replay: false)
        #expect(m.exchangeEnded(full, mayReplay: true, shuttingDown: false, resumeLimit: 3, canResume: true)
                    == .finish(CourierError(.fileWrite, "disk full"), releasing: .slot))
        var c = running()
        _ = c.cancel(CourierError(.cancelled))
        let reset = ExchangeOutcome.failure(CourierError(.cancelled), replay: false)
        #expect(c.exchangeEnded(reset, mayReplay: true, shuttingDown: false, resumeLimit: 3, canResume: true)
                    == .finish(CourierError(.cancelled), releasing: .slot))
    }

    @Test func aRestartHappensOnce() {
        var m = running()
        m.restartChosen()
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .restartDownload)
        m.connectionAssigned()
        m.restartChosen()
        guard case .finish(let error?, .slot) = m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) else {
            Issue.record("a second restart did not fail")
            return
        }
        #expect(error.code == .rangeError)
    }
}
