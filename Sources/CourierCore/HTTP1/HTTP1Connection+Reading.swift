import CUV

/// How an HTTP/1 connection holds its reading back: it carries out what its `ReceiveFlow`
/// decides for the consumer's pauses, the receive rate and lent reads.
extension HTTP1Connection {
    /// The exchange's body consumer keeps pieces in memory of its own: later reads may land there
    /// (see `ReadLanding`) until the exchange ends. Called with every piece; the first one counts.
    /// `leaseTaker`, when the transfer allows it, may take the reads themselves (see `ReadLease`).
    package func offerReadLanding(_ landing: ReadLanding, leaseTaker taker: ReadLeaseTaker?) {
        if receive.landingOffered() { stream.readLanding = landing }
        if let taker, lease == nil, receive.leaseOffered() { leaseTaker = taker }
    }

    /// After a read whose body pieces went to a consumer that offered to take the reads: lends
    /// them when the flow says so (see `ReceiveFlow.lendingDecision`) and the socket can be lent.
    @inline(never)
    func decideLending(_ transfer: Transfer) {
        let taker = leaseTaker!
        leaseTaker = nil
        let lendable = resources.post != nil && stream.facts.plainSocket != nil
        guard receive.lendingDecision(requestSent: !bodyPending, bodyLeft: decoder.lengthBodyLeft, socketLendable: lendable),
              let post = resources.post, let socket = stream.facts.plainSocket?.leasableDescriptor,
              let left = decoder.lengthBodyLeft else { return }
        let connection = UncheckedSendable(self)
        let idleLimit = transfer._options.timeouts.idle?.millisecondsRoundedUp ?? .max
        guard let lease = ReadLease(socket: socket, budget: left - 1, idleLimitMillis: idleLimit, returned: { lease in
            post { connection.value.leaseReturned(lease) }
        }) else { return }
        guard taker.take(lease) else {
            lease.revoke()
            return
        }
        self.lease = lease
        apply(receive.leaseStarted())
    }

    /// The lease ended by itself (loop thread): what it read counts as received, and the loop
    /// reads again, for the body's last byte or the end the reader met; silence or a broken
    /// socket fails the exchange as they would have on the loop.
    private func leaseReturned(_ returned: ReadLease) {
        // (A lease revoked at the exchange's end never comes back; one that raced it is stale.)
        guard let lease, lease === returned, let transfer, case .active = machine.state else { return }
        self.lease = nil
        let taken = lease.taken
        decoder.bodyReadElsewhere(taken)
        transfer.bodyReadElsewhere(taken)
        switch lease.end {
        case .budgetUsed?, .closed?:
            apply(receive.leaseReturned())
        case .failed(let failure)?:
            streamDidEnd(.failed(CourierError(.connectionReset, String(cString: uv_err_name(-failure)))))
        case .silent?:
            perform(machine.lentReadsFellSilent(bodyBytes: transfer.metrics.bodyBytesReceived))
        case .revoked?, nil:
            break
        }
    }

    /// The transfer's consumer cannot take more: stop reading the socket.
    package func pauseReadingForConsumer() {
        apply(receive.consumerPaused())
    }

    /// The consumer can take more (on the loop thread): deliver what was held, then finish a
    /// response that completed meanwhile, or read again.
    package func resumeReadingForConsumer() {
        // (A resume may arrive after the exchange ended: nothing is held any more.)
        guard let transfer, case .active = machine.state else { return }
        if let error = transfer.deliverHeldBody() {
            perform(machine.responseInvalid(error))
            return
        }
        guard !transfer.isHoldingBody else { return }
        switch receive.takeHeldEnd() {
        case .complete(let keepAlive, let trailingBytes)?:
            completeResponse(transfer, keepAlive: keepAlive, trailingBytes: trailingBytes)
        case .streamClosed(let closeNotify)?:
            streamDidEnd(.closed(closeNotify: closeNotify))
        case nil:
            apply(receive.consumerResumed())
        }
    }

    /// Counts received bytes against the receive rate; over it, reading pauses until the window
    /// allows more.
    func countForRate(_ count: Int) {
        let action = receive.bytesReceived(count, now: nowMillis)
        if receive.resumeAt != .max { pacingChanged() }
        apply(action)
    }

    /// A rate limit's time came: read again, or send the held piece.
    func paceTimerFired(now: UInt64) {
        let action = receive.rateTimerFired(now: now)
        // (The timer's callback re-arms once the machine had its say.)
        pacingChanged(rearming: false)
        apply(action)
        bodyWriter?.rateTimerFired(now: now)
    }

    /// What the exchange set on the reading goes before the connection returns to the pool:
    /// reads land in the loop's buffer again (the next exchange's consumer is another), lent reads
    /// come back, and a connection that paused reads again (an idle connection must notice the
    /// server closing it).
    func endReceiveFlow() {
        let cleanup = receive.exchangeEnded()
        if cleanup.contains(.clearLanding) {
            stream.readLanding = nil
            leaseTaker = nil
        }
        if cleanup.contains(.revokeLease), let lease {
            self.lease = nil
            lease.revoke()
        }
        if cleanup.contains(.resumeReading) { stream.resumeReading() }
        // (Idle now: the pool's parking arms the timer.)
        pacingChanged(rearming: false)
    }

    /// Pauses or resumes the stream's reads as the flow says; no silence deadline runs while they
    /// are paused.
    func apply(_ action: ReceiveFlow.Action) {
        switch action {
        case .none:
            break
        case .pauseReading:
            stream.pauseReading()
            machine.readingPaused(true, now: nowMillis)
        case .resumeReading:
            stream.resumeReading()
            machine.readingPaused(false, now: nowMillis)
            rearmTimer()
        }
    }
}
