import CourierCore

/// A composite that starts with a completion callback and can be cancelled (a chain, a group):
/// `awaitOutcome` is the async form both offer as `run()`.
protocol CompletionRun: AnyObject, Sendable {
    associatedtype Outcome: Sendable
    func start(completion: @escaping @Sendable (Outcome) -> Void)
    func cancel()
}

extension CompletionRun {
    /// Starts and waits for the one outcome; cancelling the calling task cancels the composite.
    func awaitOutcome() async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
        } onCancel: {
            cancel()
        }
    }
}
