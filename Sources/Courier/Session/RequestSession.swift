import CourierCore

/// One request's life across its attempts, as a value: what every front end (a Swift `HTTPOperation`,
/// a C request, a CLI job) does when an attempt's transfer ends — send again with new credentials
/// after a 401 or 407, wait in the outbox for the network, or conclude, and what becomes of its
/// journal entry — and what a cancel ends. Decided here once; the front ends carry it out under
/// their own locks and deliver in their own language.
///
/// Pure: no I/O, no locks, no clock. Every event is a method, every answer an action.
package struct RequestSession: Equatable, Sendable {
    package enum Phase: Equatable, Sendable {
        /// Configured, never sent.
        case ready
        /// A transfer is on its way.
        case sending
        /// Refused with a 401 or 407: the engine's authenticator is asked for credentials.
        case awaitingCredentials
        /// Journaled, and the attempt got no answer: waits in the outbox for the network.
        case heldInOutbox
        /// About to send again (new credentials came, the network came back).
        case replaying
        /// Concluded: the outcome was (or is being) delivered.
        case finished
    }

    /// What a front end knows of an attempt that ended.
    package struct Attempt: Equatable, Sendable {
        /// A response head arrived (the server answered, whatever it said).
        package var answered: Bool
        /// How the transfer failed, if it did.
        package var failure: CourierError.Code?
        /// A refusal an authenticator may answer (`Challenge.of`: a 401, a proxy's 407, a body
        /// that can be sent again).
        package var challenged: Bool
        /// The request has an authenticator, and no consumer has taken the refusal's body as it
        /// arrived (a streamed body cannot be taken back).
        package var mayAskForCredentials: Bool
        /// The request's entry is in an outbox's journal.
        package var journaled: Bool

        package init(answered: Bool, failure: CourierError.Code?, challenged: Bool = false, mayAskForCredentials: Bool = false,
                     journaled: Bool = false) {
            self.answered = answered
            self.failure = failure
            self.challenged = challenged
            self.mayAskForCredentials = mayAskForCredentials
            self.journaled = journaled
        }
    }

    /// What becomes of a journaled request's entry when the request concludes.
    package enum Entry: Equatable, Sendable {
        /// Not journaled: nothing.
        case none
        /// It leaves the journal and the outbox's handlers hear of the end (answered, or given up).
        case remove
        /// It stays for a later process (a shutdown; an unanswered request of a front end that
        /// cannot wait).
        case keep
    }

    /// What the front end does after an attempt ended.
    package enum AttemptAction: Equatable, Sendable {
        /// Drop what the attempt staged (a download's file) and wait in the outbox; it calls
        /// `outboxResends` when the network returns.
        case holdInOutbox
        /// Ask the authenticator (the refusal's staged files stay until the answer);
        /// `credentialsAnswered` follows.
        case askForCredentials
        /// Judge the outcome and deliver it (`conclude` says what becomes of the journal entry).
        case conclude
    }

    /// What the front end does after the authenticator answered.
    package enum CredentialsAction: Equatable, Sendable {
        /// Drop the refusal (its staged files with it) and send again with the new credentials.
        case sendAgain
        /// No usable credentials: the refusal is the outcome.
        case conclude
        /// The request was cancelled meanwhile (and concluded then): drop the answer.
        case ignore
    }

    /// What a cancel ends.
    package enum CancelAction: Equatable, Sendable {
        /// Nothing: already concluded.
        case none
        /// Cancel the transfer in flight (one not submitted yet is cancelled as it is).
        case cancelTransfer
        /// It was waiting (for credentials, or in the outbox): it concludes now as cancelled,
        /// leaving the outbox's wait when `leavesOutbox`.
        case concludeWaiting(leavesOutbox: Bool)
    }

    package private(set) var phase: Phase = .ready
    /// A cancel came before a transfer existed to cancel, or while one runs: the next transfer is
    /// cancelled as it is submitted, and nothing more is replayed.
    package private(set) var cancelRequested = false
    /// The one replay after a refusal has been used.
    package private(set) var replayed = false
    /// The front end lives on to send a journaled request later (a library's); the CLI exits
    /// instead, leaving the entry for `--flush`.
    package let waitsInOutbox: Bool

    /// A session for a front end that can wait in an outbox (a library's).
    @inlinable
    package init() {
        waitsInOutbox = true
    }

    /// A session whose front end waits in an outbox (`waitsInOutbox`) or cannot (the CLI).
    @inlinable
    package init(waitsInOutbox: Bool) {
        self.waitsInOutbox = waitsInOutbox
    }

    // MARK: Sending

    /// Whether the request was sent (it is past `.ready`).
    @inlinable
    package var wasSent: Bool {
        if case .ready = phase { return false }
        return true
    }

    /// Whether the request concluded.
    @inlinable
    package var isConcluded: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// The first send: true from `.ready` (false: it was sent already).
    @inlinable
    package mutating func send() -> Bool {
        guard case .ready = phase else { return false }
        phase = .sending
        return true
    }

    /// An attempt goes out: the first (from `.ready`) or a replay (from `.replaying`); false
    /// when one is on its way or the request concluded (a front end that may be started twice).
    @inline(__always)
    package mutating func begin() -> Bool {
        switch phase {
        case .ready, .replaying:
            phase = .sending
            return true
        case .sending, .awaitingCredentials, .heldInOutbox, .finished:
            return false
        }
    }

    /// A replay goes out: true from `.replaying`.
    @inlinable
    package mutating func replay() -> Bool {
        guard phase == .replaying else { return false }
        phase = .sending
        return true
    }

    /// The outbox sends a held request again (the network returned): true when it still waits.
    package mutating func outboxResends() -> Bool {
        guard phase == .heldInOutbox else { return false }
        phase = .replaying
        return true
    }

    // MARK: An attempt's end

    /// The attempt's transfer ended.
    @inlinable
    package mutating func attemptEnded(_ attempt: Attempt) -> AttemptAction {
        switch phase {
        case .sending:
            if attempt.journaled, !attempt.answered, waitsInOutbox, !cancelRequested,
               let failure = attempt.failure, failure != .shutdown, failure != .cancelled {
                phase = .heldInOutbox
                return .holdInOutbox
            }
            if attempt.challenged, attempt.mayAskForCredentials, !replayed, !cancelRequested {
                replayed = true
                phase = .awaitingCredentials
                return .askForCredentials
            }
            return .conclude
        case .ready, .awaitingCredentials, .heldInOutbox, .replaying, .finished:
            preconditionFailure("an attempt ended for a request in phase \(phase)")
        }
    }

    /// The authenticator answered a refusal: `adopted` when the request took new credentials.
    package mutating func credentialsAnswered(adopted: Bool) -> CredentialsAction {
        guard phase == .awaitingCredentials else { return .ignore }
        guard adopted else { return .conclude }
        phase = .replaying
        return .sendAgain
    }

    /// The request concludes (whatever led there: an attempt, a refusal without new credentials,
    /// a failure before any transfer, a cancel, its engine going away): what becomes of its
    /// journal entry. `journaled` is the outcome of a journaled request (nil for any other, which
    /// is all a front end without an outbox pays for): whether a response arrived, how it failed.
    @inlinable @inline(__always)
    package mutating func conclude(journaled outcome: (answered: Bool, failure: CourierError.Code?)?) -> Entry {
        phase = .finished
        guard let outcome else { return .none }
        return entryAtEnd(answered: outcome.answered, failure: outcome.failure)
    }

    // MARK: Cancelling

    @inlinable
    package mutating func cancel() -> CancelAction {
        switch phase {
        case .finished:
            return .none
        case .ready, .sending, .replaying:
            cancelRequested = true
            return .cancelTransfer
        case .awaitingCredentials:
            phase = .finished
            return .concludeWaiting(leavesOutbox: false)
        case .heldInOutbox:
            phase = .finished
            return .concludeWaiting(leavesOutbox: true)
        }
    }

    /// A journaled request's entry: out once answered or given up, kept through a shutdown (the
    /// next process sends it) and, for a front end that cannot wait, while unanswered.
    @inlinable
    package func entryAtEnd(answered: Bool, failure: CourierError.Code?) -> Entry {
        if answered || failure == .cancelled { return .remove }
        if failure == .shutdown || !waitsInOutbox { return .keep }
        return .remove
    }
}
