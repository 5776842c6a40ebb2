/// Carrying out retries the transfer machine decided: asking the delegate and the origin's
/// budget, rewinding the sink, waiting, joining the queue again.
extension Executor {
    // MARK: - Retries

    /// The retry goes ahead: the slot goes to the next transfer and the wait timer watches the
    /// interval.
    @inline(never)
    func retryLater(_ transfer: Transfer) {
        transfer.metrics.retries += 1
        waitingRetries += 1
        if let next = scheduler.finished(host: transfer.hostKey, priority: transfer._options.priority)?.transfer { start(next) }
        waitTimer.arm(transfer.machine.waitDeadline)
        activityChanged()
    }

    /// A retry's interval passed: the transfer (still live) joins the queue again.
    @inline(never)
    func requeue(_ transfer: Transfer) {
        waitingRetries -= 1
        transfer.resetResponse()
        if scheduler.enqueue(TransferRef(transfer), host: transfer.hostKey, priority: transfer._options.priority) {
            start(transfer)
        } else {
            waitTimer.arm(transfer.machine.waitDeadline)
        }
        activityChanged()
    }

    /// `RetryApproval`: a response status the policy retries (asked when its head arrives).
    func approveStatusRetry(_ transfer: Transfer, status: Int) -> Bool {
        approveRetry(transfer, .status(status), retry: transfer.machine.retriesUsed + 1)
    }

    /// The machine asks about the retry of a failure it just decided (the last of its reasons).
    func approveRetry(_ transfer: Transfer) -> Bool {
        guard let reason = transfer.machine.retryReasons.last else { preconditionFailure("a retry to approve without a reason") }
        return approveRetry(transfer, reason, retry: transfer.machine.retriesUsed)
    }

    /// Takes back what the failed attempt wrote to its file sink (other sinks have nothing of
    /// the attempt's to take back, or started over by themselves).
    func rewindSink(of transfer: Transfer) -> Bool {
        guard case .file(let file) = transfer._sink else { return true }
        return file.rewind() == nil
    }

    /// What the machine needs to decide a retry after a failure; nil without a retry policy.
    func retryInput(for transfer: Transfer, responseStarted: Bool) -> TransferStateMachine.RetryInput? {
        transfer.retryInput(now: loop.nowMillis, responseStarted: responseStarted)
    }

    /// The delegate's hook, then the origin's budget, agree to a retry (`retry` is its number, 1
    /// for the first). A retry the hook stops costs no token; one it allows takes a token whether
    /// or not the budget has enough left. A failure for want of a route takes none: nothing
    /// reached the origin, so it says nothing about the origin (a link going down would
    /// otherwise spend the budget of every caller at once).
    func approveRetry(_ transfer: Transfer, _ reason: RetryReason, retry: Int) -> Bool {
        guard transfer.delegate?.transferShouldRetry(transfer, reason: reason, retry: retry) ?? true else { return false }
        if case .failure(let error) = reason, error.code == .noRoute { return true }
        guard transfer._options.retry.usesBudget else { return true }
        return budgets.attemptFailed(host: transfer.poolKey)
    }
}
