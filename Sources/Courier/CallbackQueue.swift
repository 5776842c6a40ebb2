import CourierCore
import Dispatch

/// Where an operation's handlers run.
public enum CallbackQueue: Sendable {
    /// On Courier's loop thread, straight from the I/O callback. The fastest choice (no thread hop,
    /// no allocation), for handlers that only hand the result on; a handler that blocks stalls every
    /// transfer in the process.
    case loopThread
    /// On a dispatch queue. The default is one serial queue per engine, so an engine's handlers
    /// never race each other and progress always arrives before completion.
    case dispatch(DispatchQueue)

    /// Runs `body` on the queue, never inside the caller's stack (a cached-then-fresh preview is
    /// delivered while `enqueue` runs).
    func runSoon(_ body: @escaping @Sendable () -> Void) {
        switch self {
        case .loopThread: Runtime.shared.executeSoon(body)
        case .dispatch(let queue): queue.async(execute: body)
        }
    }

    func run(_ body: @escaping @Sendable () -> Void) {
        switch self {
        case .loopThread:
            if Runtime.shared.isOnLoopThread { body() } else { Runtime.shared.executeSoon(body) }
        case .dispatch(let queue): queue.async(execute: body)
        }
    }
}

/// Progress of one direction of a transfer.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes done.
    public var completed: UInt64
    /// Bytes expected, when known (Content-Length or the request body's size).
    public var expected: UInt64?
    /// The average rate since the first byte, when known (downloads).
    public var bytesPerSecond: Double?

    /// Creates a progress value.
    public init(completed: UInt64, expected: UInt64?) {
        self.completed = completed
        self.expected = expected
    }

    /// `completed / expected`, or nil when the total is unknown.
    public var fraction: Double? {
        guard let expected, expected > 0 else { return nil }
        return min(1, Double(completed) / Double(expected))
    }
}
