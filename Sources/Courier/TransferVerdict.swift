import CourierCore

/// How a finished transfer ends for the caller: the one completion rule every front end shares
/// (Swift's `Operation`, the C ABI's requests), so the same exchange succeeds or fails the same
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
    /// `judge` (an engine's response hook) sees every response that arrived and may turn it into
    /// a failure, before a download is moved into place.
    package init(_ transfer: Transfer, accepting acceptable: Range<Int>, judge: ((Transfer) -> CourierError?)? = nil) {
        hasResponse = transfer.status != 0
        var error = transfer.error
        if error == nil {
            if !hasResponse {
                error = CourierError(.emptyReply)
            } else if !acceptable.contains(transfer.status) {
                error = RequestDraft.unacceptableStatus(of: transfer)
            }
        }
        if let judge, hasResponse, transfer.error == nil, let rejection = judge(transfer) { error = rejection }
        if transfer.sinkHasFiles, let failure = transfer.finishSink(succeeded: error == nil) {
            error = failure
        }
        self.error = error
    }
}
