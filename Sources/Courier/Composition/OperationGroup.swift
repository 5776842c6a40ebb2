import CourierCore

/// Operations that run together through the shared queue (OCNet's group queue), with one
/// completion when every member has finished. The queue's width still bounds them: a group of a
/// hundred runs as the width allows, beside everything else in the process.
///
/// `.allSettled` waits for every member whatever happens; `.failFast` cancels the members still
/// running (or queued) at the first failure, which then end as `.cancelled`. Cancelling the group
/// cancels every member. A group runs once.
public final class OperationGroup: CompletionRun, @unchecked Sendable {
    public enum Mode: Sendable {
        /// Every member runs to its end.
        case allSettled
        /// The first failure cancels the others.
        case failFast
    }

    /// What a finished group reports: each member's outcome in the order added.
    public struct Outcome: Sendable {
        public let results: [Result<Response, CourierError>]
        /// The index of the first member that failed (by time, not position), if any.
        public let firstFailure: Int?
        /// Every member succeeded.
        public var succeeded: Bool { firstFailure == nil }
        /// The responses of the members that succeeded, in order.
        public var responses: [Response] { results.compactMap { try? $0.get() } }
    }

    public let mode: Mode
    private let lock = Lock()
    private var members: [HTTPOperation]
    private var started = false

    public init(_ operations: [HTTPOperation] = [], mode: Mode = .allSettled) {
        self.members = operations
        self.mode = mode
    }

    /// Adds a member (before `run` or `start`).
    @discardableResult
    public func add(_ operation: HTTPOperation) -> OperationGroup {
        lock.withLock { members.append(operation) }
        return self
    }

    /// The members, in the order added.
    public var operations: [HTTPOperation] { lock.withLock { members } }

    /// Runs every member and returns when all have finished. Cancelling the calling task cancels
    /// the group.
    public func run() async -> Outcome { await awaitOutcome() }

    /// Starts every member; `completion` runs once, on the thread the last member finished on.
    public func start(completion: @escaping @Sendable (Outcome) -> Void) {
        let members = lock.withLock { () -> [HTTPOperation]? in
            guard !started else { return nil }
            started = true
            return self.members
        }
        guard let members else {
            preconditionFailure("an OperationGroup runs once")
        }
        guard !members.isEmpty else {
            completion(Outcome(results: [], firstFailure: nil))
            return
        }
        let tally = Tally(count: members.count, completion: completion)
        for (index, member) in members.enumerated() {
            member.onFinish { [mode] result in
                // (A cached-then-fresh member's stored preview is not its outcome.)
                if case .success(let response) = result, response.isPreview { return }
                if tally.record(result, at: index), mode == .failFast {
                    for (other, operation) in members.enumerated() where other != index { operation.cancel() }
                }
            }
            member.start()
        }
    }

    /// Cancels every member (those already finished keep their outcome).
    public func cancel() {
        for member in lock.withLock({ members }) { member.cancel() }
    }

    /// The members' outcomes as they arrive; the last one completes the group.
    private final class Tally: @unchecked Sendable {
        private let lock = Lock()
        private var results: [Result<Response, CourierError>?]
        private var left: Int
        private var firstFailure: Int?
        private let completion: @Sendable (Outcome) -> Void

        init(count: Int, completion: @escaping @Sendable (Outcome) -> Void) {
            results = Array(repeating: nil, count: count)
            left = count
            self.completion = completion
        }

        /// Records a member's outcome; true when it is the group's first failure.
        func record(_ result: Result<Response, CourierError>, at index: Int) -> Bool {
            let (first, done) = lock.withLock { () -> (Bool, Outcome?) in
                if results[index] == nil { left -= 1 }
                results[index] = result
                var first = false
                if case .failure = result, firstFailure == nil {
                    firstFailure = index
                    first = true
                }
                guard left == 0 else { return (first, nil) }
                return (first, Outcome(results: results.map { $0! }, firstFailure: firstFailure))
            }
            if let done { completion(done) }
            return first
        }
    }
}
