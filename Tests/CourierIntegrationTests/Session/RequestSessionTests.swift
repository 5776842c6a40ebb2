import Testing
@testable import Courier
import CourierCore

/// The request session, event by event and without sockets: what every front end (Swift, C, the
/// CLI) does when an attempt ends, after an authenticator's answer, and on a cancel.
@Suite("RequestSession")
struct RequestSessionTests {
    typealias Session = RequestSession
    typealias Attempt = RequestSession.Attempt

    func sending(waitsInOutbox: Bool = true) -> Session {
        var session = Session(waitsInOutbox: waitsInOutbox)
        let step1 = session.send()
        #expect(step1)
        let again = session.send()
        #expect(!again, "a request is sent once")
        return session
    }

    @Test func anAnsweredAttemptConcludes() {
        var session = sending()
        #expect(session.attemptEnded(Attempt(answered: true, failure: nil)) == .conclude)
        #expect(session.conclude(journaled: nil) == .none)
        #expect(session.phase == .finished)
        #expect(session.cancel() == .none, "nothing left to cancel")
    }

    @Test func aJournaledRequestWithoutAnswerWaitsInTheOutbox() {
        var session = sending()
        let unanswered = Attempt(answered: false, failure: .connectFailed, journaled: true)
        #expect(session.attemptEnded(unanswered) == .holdInOutbox)
        #expect(session.phase == .heldInOutbox)
        let step2 = session.outboxResends()
        #expect(step2)
        let twice = session.outboxResends()
        #expect(!twice, "resent once")
        let step3 = session.replay()
        #expect(step3)
        #expect(session.attemptEnded(Attempt(answered: true, failure: .httpStatus, journaled: true)) == .conclude)
        #expect(session.conclude(journaled: (true, .httpStatus)) == .remove, "answered: out of the journal")
    }

    @Test func cancelsAndShutdownsAreNotHeld() {
        var cancelled = sending()
        #expect(cancelled.attemptEnded(Attempt(answered: false, failure: .cancelled, journaled: true)) == .conclude)
        #expect(cancelled.conclude(journaled: (false, .cancelled)) == .remove, "given up: out of the journal")
        var shutdown = sending()
        #expect(shutdown.attemptEnded(Attempt(answered: false, failure: .shutdown, journaled: true)) == .conclude)
        #expect(shutdown.conclude(journaled: (false, .shutdown)) == .keep, "the next process sends it")
        var failedBeforeAnyTransfer = Session()
        #expect(failedBeforeAnyTransfer.conclude(journaled: (false, .invalidURL)) == .remove)
    }

    @Test func theCLIKeepsWhatItCannotWaitFor() {
        var session = sending(waitsInOutbox: false)
        #expect(session.attemptEnded(Attempt(answered: false, failure: .connectFailed, journaled: true)) == .conclude,
                "a process that exits cannot wait for the network")
        #expect(session.conclude(journaled: (false, .connectFailed)) == .keep, "left for --flush")
        var answered = sending(waitsInOutbox: false)
        _ = answered.attemptEnded(Attempt(answered: true, failure: nil, journaled: true))
        #expect(answered.conclude(journaled: (true, nil)) == .remove)
    }

    @Test func aRefusalIsReplayedOnceWithNewCredentials() {
        var session = sending()
        let refused = Attempt(answered: true, failure: nil, challenged: true, mayAskForCredentials: true)
        #expect(session.attemptEnded(refused) == .askForCredentials)
        #expect(session.credentialsAnswered(adopted: true) == .sendAgain)
        let step4 = session.replay()
        #expect(step4)
        #expect(session.attemptEnded(refused) == .conclude, "the one replay is used")
        var none = sending()
        _ = none.attemptEnded(refused)
        #expect(none.credentialsAnswered(adopted: false) == .conclude, "no credentials: the refusal is the outcome")
    }

    @Test func aStreamedRefusalIsNotReplayed() {
        var session = sending()
        #expect(session.attemptEnded(Attempt(answered: true, failure: nil, challenged: true, mayAskForCredentials: false)) == .conclude)
    }

    @Test func aCancelEndsWhatTheRequestWaitsFor() {
        var waitingForCredentials = sending()
        _ = waitingForCredentials.attemptEnded(Attempt(answered: true, failure: nil, challenged: true, mayAskForCredentials: true))
        #expect(waitingForCredentials.cancel() == .concludeWaiting(leavesOutbox: false))
        #expect(waitingForCredentials.credentialsAnswered(adopted: true) == .ignore, "the late answer is dropped")
        var held = sending()
        _ = held.attemptEnded(Attempt(answered: false, failure: .connectFailed, journaled: true))
        #expect(held.cancel() == .concludeWaiting(leavesOutbox: true))
        let resent = held.outboxResends()
        #expect(!resent, "a cancelled request is not resent")
        var inFlight = sending()
        #expect(inFlight.cancel() == .cancelTransfer)
        #expect(inFlight.cancelRequested)
        #expect(inFlight.attemptEnded(Attempt(answered: false, failure: .connectFailed, journaled: true)) == .conclude,
                "nothing is held or replayed once cancelled")
        var unsent = Session()
        #expect(unsent.cancel() == .cancelTransfer)
        let sent = unsent.send()
        #expect(sent && unsent.cancelRequested, "the transfer is cancelled as it is submitted")
    }
}
