import Testing
@testable import CourierCore

/// The transfer machine, event by event, without sockets: every end-of-exchange choice a
/// transfer can meet.
@Suite("TransferStateMachine")
struct TransferStateMachineTests {
    typealias Machine = TransferStateMachine

    static let hop = RedirectHop(url: try! CourierURL(parsing: "http://a.example/next"), method: .get,
                                 dropBody: false, crossOrigin: false)

    /// A machine with a running exchange.
    func running() -> Machine {
        var m = Machine()
        #expect(m.accept(refusal: nil, queueDeadline: .max) == .enqueue)
        #expect(m.state == .queued)
        #expect(m.started(totalDeadline: 5_000) == .acquireConnection)
        #expect(m.state == .waitingForConnection)
        m.connectionAssigned()
        #expect(m.state == .running)
        return m
    }

    @Test func plainSuccess() {
        var m = running()
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finish(nil, releasing: .slot))
        #expect(m.state == .finished)
    }

    @Test func failureEndsTheTransfer() {
        var m = running()
        let error = CourierError(.truncatedBody)
        #expect(m.exchangeEnded(.failure(error, replay: false), mayReplay: true, shuttingDown: false) == .finish(error, releasing: .slot))
    }

    @Test func refusedOnArrival() {
        var m = Machine()
        let error = CourierError(.invalidHeader, "X-Bad")
        #expect(m.accept(refusal: error, queueDeadline: .max) == .finish(error, releasing: .nothing))
        #expect(m.state == .finished)
    }

    @Test func cancelledBeforeItWasSubmitted() {
        var m = Machine()
        m.cancelBeforeSubmitting()
        #expect(m.accept(refusal: nil, queueDeadline: .max) == .finish(CourierError(.cancelled), releasing: .nothing))
    }

    @Test func cancelArrivingBeforeTheSubmitWins() {
        // Runtime.cancel may reach the loop before the submit does.
        var m = Machine()
        #expect(m.cancel(CourierError(.cancelled)) == .none)
        #expect(m.accept(refusal: nil, queueDeadline: .max) == .finish(CourierError(.cancelled), releasing: .nothing))
    }

    // MARK: Redirects

    @Test func redirectIsFollowedWhenTheExchangeEnds() {
        var m = running()
        m.redirectChosen(Self.hop)
        #expect(m.followsRedirect)
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .followRedirect(Self.hop))
        #expect(m.state == .waitingForConnection)
        #expect(!m.followsRedirect, "the next hop starts with no redirect pending")
        m.connectionAssigned()
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finish(nil, releasing: .slot))
    }

    @Test func aRedirectWhoseExchangeFailedIsNotFollowed() {
        var m = running()
        m.redirectChosen(Self.hop)
        let error = CourierError(.truncatedBody)
        #expect(m.exchangeEnded(.failure(error, replay: false), mayReplay: true, shuttingDown: false) == .finish(error, releasing: .slot))
    }

    @Test func nothingIsFollowedWhileShuttingDown() {
        var m = running()
        m.redirectChosen(Self.hop)
        #expect(m.exchangeEnded(.success(reusable: false), mayReplay: true, shuttingDown: true) == .finish(nil, releasing: .slot))
    }

    // MARK: Stale connections

    @Test func staleConnectionIsReplayedOnce() {
        var m = running()
        let stale = CourierError(.emptyReply)
        #expect(m.exchangeEnded(.failure(stale, replay: true), mayReplay: true, shuttingDown: false) == .replayOnFreshConnection)
        #expect(m.state == .waitingForConnection)
        #expect(m.replayed)
        m.connectionAssigned()
        #expect(m.exchangeEnded(.failure(stale, replay: true), mayReplay: true, shuttingDown: false) == .finish(stale, releasing: .slot),
                "only one replay per transfer")
    }

    @Test func unprocessedStreamsGoAgainWithoutSpendingTheReplay() {
        var m = running()
        let refused = CourierError(.http2StreamReset, "stream 5 refused by the server")
        for _ in 0..<10 {
            #expect(m.exchangeEnded(.failure(refused, replay: true), mayReplay: true, unprocessed: true, shuttingDown: false)
                    == .replayOnFreshConnection, "a server that answers others and refuses this one: again")
            m.connectionAssigned()
        }
        #expect(!m.replayed)
        #expect(m.exchangeEnded(.failure(refused, replay: true), mayReplay: true, shuttingDown: false) == .replayOnFreshConnection)
        m.connectionAssigned()
        #expect(m.exchangeEnded(.failure(refused, replay: true), mayReplay: true, shuttingDown: false) == .finish(refused, releasing: .slot),
                "refused where nothing was answered: the one replay only")
    }

    @Test func replayNeedsTheRequestsPermission() {
        var m = running()
        let stale = CourierError(.emptyReply)
        #expect(m.exchangeEnded(.failure(stale, replay: true), mayReplay: false, shuttingDown: false) == .finish(stale, releasing: .slot))
    }

    @Test func replayDropsAPendingRedirect() {
        var m = running()
        m.redirectChosen(Self.hop)
        _ = m.exchangeEnded(.failure(CourierError(.emptyReply), replay: true), mayReplay: true, shuttingDown: false)
        #expect(!m.followsRedirect)
    }

    // MARK: Cancellation

    @Test func cancelWhereverItIs() {
        var queued = Machine()
        _ = queued.accept(refusal: nil, queueDeadline: .max)
        #expect(queued.cancel(CourierError(.cancelled)) == .finish(CourierError(.cancelled), releasing: .queuePlace))

        var waiting = Machine()
        _ = waiting.accept(refusal: nil, queueDeadline: .max)
        _ = waiting.started(totalDeadline: .max)
        #expect(waiting.cancel(CourierError(.shutdown)) == .finish(CourierError(.shutdown), releasing: .slotAndPoolWait))

        var active = running()
        #expect(active.cancel(CourierError(.cancelled)) == .abortExchange(CourierError(.cancelled)))
        #expect(active.state == .running, "the connection reports the end")
        #expect(active.cancelRequested)

        var finished = running()
        _ = finished.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false)
        #expect(finished.cancel(CourierError(.cancelled)) == .none)
    }

    @Test func aCancelledExchangeIsNeitherFollowedNorReplayed() {
        var redirected = running()
        redirected.redirectChosen(Self.hop)
        _ = redirected.cancel(CourierError(.cancelled))
        let cancelled = CourierError(.cancelled)
        #expect(redirected.exchangeEnded(.failure(cancelled, replay: false), mayReplay: true, shuttingDown: false) == .finish(cancelled, releasing: .slot))

        var stale = running()
        _ = stale.cancel(CourierError(.cancelled))
        #expect(stale.exchangeEnded(.failure(cancelled, replay: true), mayReplay: true, shuttingDown: false) == .finish(cancelled, releasing: .slot))
    }

    // MARK: Deadlines without a connection

    @Test func queueDeadline() {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: 100)
        #expect(m.waitDeadline == 100)
        #expect(m.waitDeadlinePassed(now: 99) == .none)
        #expect(m.waitDeadlinePassed(now: 100) == .finish(CourierError(.queueTimeout), releasing: .queuePlace))
        #expect(m.waitDeadline == .max)
    }

    @Test func totalDeadlineWhileWaitingForAConnection() {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: 100)
        _ = m.started(totalDeadline: 300)
        #expect(m.waitDeadline == 300, "the queue deadline no longer applies once started")
        #expect(m.waitDeadlinePassed(now: 299) == .none)
        guard case .finish(let error?, releasing: .slotAndPoolWait) = m.waitDeadlinePassed(now: 300) else {
            Issue.record("the total deadline did not end a transfer waiting for a connection")
            return
        }
        #expect(error.code == .totalTimeout)
    }

    @Test func runningTransfersLeaveDeadlinesToTheirConnection() {
        var m = running()
        #expect(m.waitDeadline == .max)
        #expect(m.waitDeadlinePassed(now: .max) == .none)
        #expect(m.totalDeadline == 5_000, "the connection reads it")
    }

    @Test func connectFailureReleasesTheSlot() {
        var m = Machine()
        _ = m.accept(refusal: nil, queueDeadline: .max)
        _ = m.started(totalDeadline: .max)
        let error = CourierError(.connectFailed, "ECONNREFUSED")
        #expect(m.connectFailed(error) == .finish(error, releasing: .slot))
    }

    @Test func finishedByConstruction() {
        #expect(Machine.alreadyFinished.state == .finished)
    }

    // MARK: Validating a stored response (the cache)

    /// A running exchange that validates a stored response.
    func validating(conditional: Bool = true, staleOnError: Bool = false) -> Machine {
        var m = Machine()
        m.validates(conditional: conditional, staleOnError: staleOnError)
        _ = m.accept(refusal: nil, queueDeadline: .max)
        _ = m.started(totalDeadline: .max)
        m.connectionAssigned()
        return m
    }

    @Test func aMatching304IsAnsweredFromStorage() {
        var m = validating()
        #expect(m.finalHeadArrived(status: 304, updateSelectsStored: true) == .discardBody)
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finishFromStore(.notModified, releasing: .slot))
    }

    @Test func a304ForAnotherResponseIsAskedAgainWithoutValidatorsOnce() {
        var m = validating()
        #expect(m.finalHeadArrived(status: 304, updateSelectsStored: false) == .discardBody)
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .refetchWithoutValidators)
        #expect(m.state == .waitingForConnection)
        #expect(m.cacheRole == .validating(conditional: false, staleOnError: false))
        m.connectionAssigned()
        #expect(m.finalHeadArrived(status: 304, updateSelectsStored: false) == .deliver, "an unconditional request's 304 is its answer")
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finish(nil, releasing: .slot))
    }

    @Test func aNewRepresentationIsTheAnswer() {
        var m = validating()
        #expect(m.finalHeadArrived(status: 200, updateSelectsStored: false) == .deliver)
        #expect(m.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finish(nil, releasing: .slot))
    }

    @Test func anOriginErrorStatusIsAnsweredByTheStoredResponseWhenAllowed() {
        var allowed = validating(staleOnError: true)
        #expect(allowed.finalHeadArrived(status: 503, updateSelectsStored: false) == .discardBody)
        #expect(allowed.exchangeEnded(.success(reusable: true), mayReplay: true, shuttingDown: false) == .finishFromStore(.staleOnError, releasing: .slot))
        var forbidden = validating(staleOnError: false)
        #expect(forbidden.finalHeadArrived(status: 503, updateSelectsStored: false) == .deliver, "5xx forwarded (section 4.3.3)")
        var notAnError = validating(staleOnError: true)
        #expect(notAnError.finalHeadArrived(status: 404, updateSelectsStored: false) == .deliver)
    }

    @Test func anUnreachableOriginIsAGatewayTimeoutOrTheStoredResponse() {
        let reset = CourierError(.connectionReset)
        var strict = validating()
        #expect(strict.exchangeEnded(.failure(reset, replay: false), mayReplay: true, shuttingDown: false) == .finishWithGatewayTimeout(releasing: .slot))
        var lenient = validating(staleOnError: true)
        #expect(lenient.exchangeEnded(.failure(reset, replay: false), mayReplay: true, shuttingDown: false) == .finishFromStore(.staleOnError, releasing: .slot))
        var connecting = Machine()
        connecting.validates(conditional: true, staleOnError: false)
        _ = connecting.accept(refusal: nil, queueDeadline: .max)
        _ = connecting.started(totalDeadline: 100)
        #expect(connecting.connectFailed(CourierError(.connectFailed)) == .finishWithGatewayTimeout(releasing: .slot))
        var waiting = Machine()
        waiting.validates(conditional: true, staleOnError: true)
        _ = waiting.accept(refusal: nil, queueDeadline: .max)
        _ = waiting.started(totalDeadline: 100)
        #expect(waiting.waitDeadlinePassed(now: 100) == .finishFromStore(.staleOnError, releasing: .slotAndPoolWait))
    }

    @Test func aCancelledValidationIsCancelledNotAGatewayTimeout() {
        var m = validating(staleOnError: true)
        #expect(m.cancel(CourierError(.cancelled)) == .abortExchange(CourierError(.cancelled)))
        #expect(m.exchangeEnded(.failure(CourierError(.cancelled), replay: false), mayReplay: true, shuttingDown: false)
                == .finish(CourierError(.cancelled), releasing: .slot))
    }

    @Test func aStaleConnectionIsStillReplayedFirst() {
        var m = validating()
        _ = m.finalHeadArrived(status: 304, updateSelectsStored: true)
        #expect(m.exchangeEnded(.failure(CourierError(.emptyReply), replay: true), mayReplay: true, shuttingDown: false) == .replayOnFreshConnection)
        m.connectionAssigned()
        #expect(m.servesStored == nil, "the replay starts over")
        #expect(m.exchangeEnded(.failure(CourierError(.emptyReply), replay: true), mayReplay: true, shuttingDown: false) == .finishWithGatewayTimeout(releasing: .slot))
    }

    @Test func aCacheAnswerEndsTheTransferBeforeItIsQueued() {
        var m = Machine()
        #expect(m.answeredByCache() == .finish(nil, releasing: .nothing))
        #expect(m.state == .finished)
    }

    // MARK: Coalescing

    @Test func aFollowerWaitsForItsLeaderAndTakesItsOutcome() {
        var m = Machine()
        #expect(m.acceptFollowing() == .joinFlight)
        #expect(m.state == .joined)
        #expect(m.waitDeadline == .max)
        let error = CourierError(.truncatedBody)
        #expect(m.flightLanded(error) == .finish(error, releasing: .nothing))
    }

    @Test func aCancelledFollowerLeavesAlone() {
        var m = Machine()
        _ = m.acceptFollowing()
        #expect(m.cancel(CourierError(.cancelled)) == .finish(CourierError(.cancelled), releasing: .flightPlace))
    }

    @Test func aFollowerCancelledBeforeItArrivedEndsCancelled() {
        var m = Machine()
        m.cancelBeforeSubmitting()
        #expect(m.acceptFollowing() == .finish(CourierError(.cancelled), releasing: .nothing))
    }

    @Test func aLeaderCancelledWithFollowersDetachesItsCallerAndGoesOn() {
        var m = running()
        #expect(m.cancel(CourierError(.cancelled), othersFollow: true) == .detachCaller(CourierError(.cancelled)))
        #expect(m.state == .running)
        #expect(!m.cancelRequested)
        #expect(m.cancel(CourierError(.cancelled), othersFollow: false) == .abortExchange(CourierError(.cancelled)))
    }
}
