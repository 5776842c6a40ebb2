/// What a body source hands over when the connection asks for the next piece.
package enum BodyRead {
    /// The next bytes, in the source's own buffer: valid until the next `read` or `close`.
    case bytes(UnsafeRawBufferPointer)
    /// The next bytes as an array (a producer's piece, a form's part heads), sent from it.
    case array([UInt8])
    /// The body is complete.
    case end
    /// Nothing yet: the source calls `wake` on the loop thread when it has more (a producer on
    /// another thread, a paused C callback).
    case pending
    /// The body cannot be produced; the request fails with this.
    case failed(CourierError)
}

/// One sending of a streamed request body, read by the connection on the loop thread.
///
/// Pull, not push: the connection asks for the next piece only once the previous one has left
/// for the kernel, so a 10 GiB upload holds one piece in memory whatever the network's pace.
package protocol BodySource: AnyObject {
    /// The next piece (see `BodyRead`).
    func read() -> BodyRead
    /// Set by the connection before a `read` that may answer `.pending`; called on the loop thread.
    var wake: (() -> Void)? { get set }
    /// The exchange no longer needs the body (finished, failed, answered early): release files
    /// and producers. Idempotent.
    func close()
    /// The file whose unread rest is what comes next (a file body, a form's file part being sent),
    /// for sending it with sendfile instead of `read`; nil otherwise.
    var nextFile: FileBodySource? { get }
}

extension BodySource {
    package var nextFile: FileBodySource? { nil }
}

/// A body producer handed to a request (`RequestBody.stream`): its length when known, and how to
/// make the source that one sending reads.
///
/// Equal by identity. A one-shot producer (an async sequence, a C callback) hands out its source
/// once; `isReplayable` producers make one per sending.
public final class BodyStream: @unchecked Sendable, Hashable {
    /// The body's length when the producer knows it (sent as Content-Length); nil means chunked.
    public let length: UInt64?
    /// Whether `take` may be called more than once.
    public let isReplayable: Bool
    private let lock = SpinLock()
    private var make: (() -> any BodySource)?

    /// A producer whose sources `make` builds (on the loop thread, when the request is written).
    package init(length: UInt64?, replayable: Bool, make: @escaping () -> any BodySource) {
        self.length = length
        self.isReplayable = replayable
        self.make = make
    }

    /// A source for one sending; nil when a one-shot producer was already used.
    package func take() -> (any BodySource)? {
        let maker = lock.withLock { () -> (() -> any BodySource)? in
            let maker = make
            if !isReplayable { make = nil }
            return maker
        }
        return maker?()
    }

    public static func == (a: BodyStream, b: BodyStream) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
