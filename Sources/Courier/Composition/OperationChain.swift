import CourierCore

/// Operations that run one after another in the order added (OCNet's chain queue): each starts
/// when the previous one succeeded, through the shared queue. A step is an operation, or a
/// closure that builds the next operation from the previous response (a login's token, a
/// created resource's location); `onNext` sees every step's response before the next starts and
/// may alter that next operation, replace it, or stop the chain.
///
/// The chain stops at the first failure; its outcome says which step failed and keeps every
/// result so far. Cancelling the chain cancels the step running and starts no other. A chain runs
/// once.
public final class OperationChain: CompletionRun, @unchecked Sendable {
    /// What a finished chain reports.
    public struct Outcome: Sendable {
        /// One result per step that ran, in order.
        public let results: [Result<Response, CourierError>]
        /// The step that failed (its index), if one did.
        public let failedStep: Int?
        /// `onNext` (or a builder returning nil) ended the chain before its last step.
        public let stoppedEarly: Bool
        /// Every step that ran succeeded.
        public var succeeded: Bool { failedStep == nil }
        /// The last step's response, when it succeeded.
        public var lastResponse: Response? { try? results.last?.get() }
    }

    private enum Step {
        case operation(HTTPOperation)
        case build(@Sendable (Response) throws(CourierError) -> HTTPOperation?)
    }

    private let lock = Lock()
    private var steps: [Step] = []
    private var next: (@Sendable (Int, Response, HTTPOperation) -> HTTPOperation?)?
    private var current: HTTPOperation?
    private var cancelled = false
    private var started = false

    public init(_ operations: [HTTPOperation] = []) {
        steps = operations.map { .operation($0) }
    }

    /// Adds an operation as the next step.
    @discardableResult
    public func add(_ operation: HTTPOperation) -> OperationChain {
        lock.withLock { steps.append(.operation(operation)) }
        return self
    }

    /// Adds a step built from the previous step's response when it arrives (nil ends the chain
    /// there; a thrown error fails this step). The first step cannot be a builder.
    @discardableResult
    public func add(_ build: @escaping @Sendable (Response) throws(CourierError) -> HTTPOperation?) -> OperationChain {
        lock.withLock { steps.append(.build(build)) }
        return self
    }

    /// Sets the hook run between steps: it gets the index of the step that just succeeded, its
    /// response and the next operation, and returns the operation to run next (that one, changed
    /// or not, or another) or nil to stop the chain.
    @discardableResult
    public func onNext(_ hook: @escaping @Sendable (Int, Response, HTTPOperation) -> HTTPOperation?) -> OperationChain {
        lock.withLock { next = hook }
        return self
    }

    /// Runs the steps and returns the outcome. Cancelling the calling task cancels the chain.
    public func run() async -> Outcome { await awaitOutcome() }

    /// Starts the first step; `completion` runs once, when the chain ends.
    public func start(completion: @escaping @Sendable (Outcome) -> Void) {
        let first = lock.withLock { () -> Bool in
            guard !started else { return false }
            started = true
            return true
        }
        precondition(first, "an OperationChain runs once")
        advance(to: 0, previous: nil, results: [], completion: completion)
    }

    /// Cancels the step running; no later step starts.
    public func cancel() {
        let running = lock.withLock { () -> HTTPOperation? in
            cancelled = true
            return current
        }
        running?.cancel()
    }

    /// Runs step `index` (after `previous` succeeded), or ends the chain.
    private func advance(to index: Int, previous: Response?, results: [Result<Response, CourierError>],
                         completion: @escaping @Sendable (Outcome) -> Void) {
        let (step, hook, stop) = lock.withLock { () -> (Step?, (@Sendable (Int, Response, HTTPOperation) -> HTTPOperation?)?, Bool) in
            (index < steps.count ? steps[index] : nil, next, cancelled)
        }
        guard let step else {
            completion(Outcome(results: results, failedStep: nil, stoppedEarly: false))
            return
        }
        if stop {
            completion(Outcome(results: results + [.failure(CourierError(.cancelled))], failedStep: index, stoppedEarly: false))
            return
        }
        var operation: HTTPOperation
        switch step {
        case .operation(let given):
            operation = given
        case .build(let build):
            guard let previous else {
                completion(Outcome(results: [.failure(CourierError(.invalidArgument, "a chain's first step cannot be built from a previous response"))],
                                   failedStep: index, stoppedEarly: false))
                return
            }
            do {
                guard let built = try build(previous) else {
                    completion(Outcome(results: results, failedStep: nil, stoppedEarly: true))
                    return
                }
                operation = built
            } catch {
                completion(Outcome(results: results + [.failure(error)], failedStep: index, stoppedEarly: false))
                return
            }
        }
        if let previous, let hook {
            guard let chosen = hook(index - 1, previous, operation) else {
                completion(Outcome(results: results, failedStep: nil, stoppedEarly: true))
                return
            }
            operation = chosen
        }
        let cancelledMeanwhile = lock.withLock { () -> Bool in
            current = operation
            return cancelled
        }
        if cancelledMeanwhile { operation.cancel() }
        operation.onFinish { [self] result in
            if case .success(let response) = result, response.isPreview { return }
            let so = results + [result]
            switch result {
            case .success(let response):
                advance(to: index + 1, previous: response, results: so, completion: completion)
            case .failure:
                completion(Outcome(results: so, failedStep: index, stoppedEarly: false))
            }
        }
        operation.start()
    }
}
