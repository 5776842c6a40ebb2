import CourierCore

/// How a finished transfer ends for the caller: the one completion rule every front end shares
/// (Swift's `HTTPOperation`, the C ABI's requests), so the same exchange succeeds or fails the same
/// way in every language.
///
/// Success is: no transfer error, a response, and a status the caller accepts. A status outside
/// the accepted range is `.httpStatus` with the response kept beside it (a 404's body is still
/// there). A staged download is moved into place only on success and removed otherwise, so a
/// failed, cancelled or unaccepted download never touches the destination.
package struct TransferVerdict {
    /// nil on success; otherwise why not.
    package let error: CourierError?
    /// Whether a response arrived (a failed request may still have one).
    package let hasResponse: Bool

    /// Judges `transfer` (loop thread, in `transferDidComplete`) and settles its download.
    package init(_ transfer: Transfer, accepting acceptable: Range<Int>) {
        self.init(transfer, settling: Self.failure(of: transfer, accepting: acceptable))
    }

    /// The same, with `judge` (an engine's response hook) seeing every response that arrived:
    /// it may turn it into a failure, before a download is moved into place.
    package init(_ transfer: Transfer, accepting acceptable: Range<Int>, judge: (Transfer) -> CourierError?) {
        var error = Self.failure(of: transfer, accepting: acceptable)
        if transfer.status != 0, transfer.error == nil, let rejection = judge(transfer) { error = rejection }
        self.init(transfer, settling: error)
    }

    /// Why `transfer` failed by the completion rule, nil for success.
    @inline(__always)
    private static func failure(of transfer: Transfer, accepting acceptable: Range<Int>) -> CourierError? {
        if let error = transfer.error { return error }
        if transfer.status == 0 { return CourierError(.emptyReply) }
        if !acceptable.contains(transfer.status) { return RequestDraft.unacceptableStatus(of: transfer) }
        return nil
    }

    @inline(__always)
    private init(_ transfer: Transfer, settling error: CourierError?) {
        hasResponse = transfer.status != 0
        var error = error
        if transfer.sinkHasFiles, let failure = transfer.finishSink(succeeded: error == nil) {
            error = failure
        }
        self.error = error
    }
}
