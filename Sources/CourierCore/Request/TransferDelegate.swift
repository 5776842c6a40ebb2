/// Hears how a transfer goes, on the loop thread.
///
/// Implementations must return quickly and never block: they run on the one thread that moves every
/// byte for the process. The facade (`Courier.HTTPOperation`) forwards to user code on a queue of the
/// user's choosing; the C ABI forwards to C callbacks that carry the same rule in the header.
package protocol TransferDelegate: AnyObject {
    /// A response head arrived: a redirect's being followed (`transfer.machine.followsRedirect`)
    /// or the final one. Only called when `Transfer.reportsHead` is set.
    func transferDidReceiveHead(_ transfer: Transfer)
    /// Bytes went out or came in. Only called when `Transfer.reportsProgress` is set, and at most
    /// every `progressIntervalMillis`, plus once at the end of each direction.
    func transferDidProgress(_ transfer: Transfer)
    /// The transfer ended: `transfer.error` is nil on success, and the response is in `head`,
    /// `responseBody` and `metrics`. Called exactly once per submitted transfer.
    func transferDidComplete(_ transfer: Transfer)
    /// cached-then-fresh: the stored response, delivered before the network's answer (on the
    /// submitting thread, before the transfer is queued). `preview` is a finished transfer of its
    /// own; `transfer` goes on to the network.
    func transferDidDeliverPreview(_ transfer: Transfer, preview: Transfer)
    /// The retry policy would send the request again (`retry` is the retry's number, 1 for the
    /// first); false stops here and the failure (or the response) is the result. On the loop
    /// thread.
    func transferShouldRetry(_ transfer: Transfer, reason: RetryReason, retry: Int) -> Bool
    /// A redirect would be followed to `hop` (which may be changed: another URL); false refuses
    /// it (`.redirectRefused`). Only asked when `Transfer.observesRedirects` is set; on the loop
    /// thread.
    func transferWillRedirect(_ transfer: Transfer, status: Int, to hop: inout RedirectHop) -> Bool
}

extension TransferDelegate {
    package func transferDidDeliverPreview(_ transfer: Transfer, preview: Transfer) {}
    package func transferShouldRetry(_ transfer: Transfer, reason: RetryReason, retry: Int) -> Bool { true }
    package func transferWillRedirect(_ transfer: Transfer, status: Int, to hop: inout RedirectHop) -> Bool { true }
}

/// Who agrees to retrying a response's status when its head arrives (the executor: the host's
/// retry budget, then the delegate).
package protocol RetryApproval: AnyObject {
    func approveStatusRetry(_ transfer: Transfer, status: Int) -> Bool
}
