import CourierCore

/// What every front end's session does with its draft: gathers an attempt's facts, asks the
/// authenticator, settles a journal entry. The decisions are
/// `RequestSession`'s; these carry them out the same way for Swift, C and the CLI.
extension RequestDraft {
    /// What the session weighs about the attempt `transfer` was. `bodyStreamed`: a consumer took
    /// the body as it arrived (a refusal's body cannot be taken back, so no replay).
    package func attempt(_ transfer: Transfer, bodyStreamed: Bool) -> RequestSession.Attempt {
        let challenged = challenge != nil && Challenge.of(transfer) != nil
        return RequestSession.Attempt(answered: transfer.head != nil, failure: transfer.error?.code, challenged: challenged,
                                      mayAskForCredentials: challenge != nil && !bodyStreamed, journaled: isJournaled)
    }

    /// Whether the request's entry is in an outbox's journal.
    package var isJournaled: Bool { freezing?.journaled ?? false }

    /// The next attempt's transfer, made the one way every front end makes it: the engine's parts
    /// prepared (the credentials' generation, a frozen request's Idempotency-Key), the transfer
    /// built, a frozen request journaled before anything is sent. A failure ends the request.
    @inline(__always)
    package mutating func makeAttempt() -> Result<Transfer, CourierError> {
        let engineParts = hasEngineParts
        if engineParts { prepareEngineParts() }
        let made = makeTransfer()
        guard engineParts, case .success(let transfer) = made else { return made }
        if let failure = journalIfFrozen(transfer) { return .failure(failure) }
        return made
    }

    /// Asks the engine's authenticator about the refusal `transfer` ended with (the session said
    /// `askForCredentials`); `answer` gets its credentials (nil: none) and whether they are for
    /// the proxy, on whatever thread the authenticator answers.
    package func askForCredentials(after transfer: Transfer, answer: @escaping @Sendable (Authorization?, _ forProxy: Bool) -> Void) {
        guard let challenge, let refused = Challenge.of(transfer) else { preconditionFailure("credentials asked for without a challenge") }
        let sent = refused.isProxy ? challenge.sent.1 : challenge.sent.0
        challenge.authenticator.challenged(refused, sentGeneration: sent) { credentials in answer(credentials, refused.isProxy) }
    }

    /// The journal entry of a concluding request goes as the session said: out of the journal
    /// (then `notify` runs the outbox's handlers, on the front end's thread of choice), or kept.
    package func settle(_ entry: RequestSession.Entry, result: @autoclosure () -> Result<Response, CourierError>,
                        notify: (@escaping @Sendable () -> Void) -> Void) {
        guard case .remove = entry, let freezing, let outbox else { return }
        outbox.forget(id: freezing.id)
        let outcome = result()
        notify { outbox.notify(id: freezing.id, kind: freezing.kind, result: outcome) }
    }

}
