import CourierCore

/// The responses one operation delivers (`Engine.responses`): at most two, the last one final.
///
/// ```swift
/// op.cachePolicy = .cachedThenFresh
/// for try await response in api.responses(op) {
///     show(try response.decode(Feed.self), stale: response.cachePhase != .fresh)
/// }
/// ```
public struct ResponseSequence: AsyncSequence, Sendable {
    public typealias Element = Response
    public typealias Failure = CourierError

    private let reader: Reader

    init(channel: ResponseChannel, operation: HTTPOperation) {
        reader = Reader(channel: channel, operation: operation)
    }

    public func makeAsyncIterator() -> Iterator { Iterator(reader: reader) }

    /// Reads the channel; cancelling the reading task cancels the operation.
    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let reader: Reader

        public mutating func next() async throws(CourierError) -> Response? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> Response? {
            let reader = self.reader
            let result = await withTaskCancellationHandler {
                await reader.channel.next()
            } onCancel: {
                reader.operation.cancel()
            }
            return try result?.get()
        }
    }

    /// Shared by the sequence and its iterators: when the last of them goes away before the final
    /// response, nobody is reading, and the operation is cancelled.
    fileprivate final class Reader: Sendable {
        let channel: ResponseChannel
        let operation: HTTPOperation

        init(channel: ResponseChannel, operation: HTTPOperation) {
            self.channel = channel
            self.operation = operation
        }

        deinit {
            if !channel.isFinished { operation.cancel() }
        }
    }
}

/// A buffer between an operation (which pushes on the loop thread) and one async reader.
final class ResponseChannel: @unchecked Sendable {
    private let lock = Lock()
    private var buffered: [Result<Response, CourierError>] = []
    private var finished = false
    private var waiting: CheckedContinuation<Result<Response, CourierError>?, Never>?

    /// A response that is not the last.
    func push(_ response: Response) { deliver(.success(response), last: false) }

    /// The final outcome.
    func finish(_ outcome: Result<Response, CourierError>) { deliver(outcome, last: true) }

    /// Whether the final outcome arrived.
    var isFinished: Bool { lock.withLock { finished } }

    private func deliver(_ outcome: Result<Response, CourierError>, last: Bool) {
        let resume = lock.withLock { () -> CheckedContinuation<Result<Response, CourierError>?, Never>? in
            guard !finished else { return nil }
            if last { finished = true }
            if let waiting {
                self.waiting = nil
                return waiting
            }
            buffered.append(outcome)
            return nil
        }
        resume?.resume(returning: outcome)
    }

    /// The next outcome, or nil after the last.
    func next() async -> Result<Response, CourierError>? {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> Result<Response, CourierError>?? in
                if !buffered.isEmpty { return .some(buffered.removeFirst()) }
                if finished { return .some(nil) }
                waiting = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
