import CourierCore

/// A response whose body arrives as a stream (`Engine.stream`): the head first, then the body as
/// an `AsyncSequence` read at the consumer's pace.
///
/// ```swift
/// let response = try await api.stream(api.operation(path: "/big.iso"))
/// print(response.status, response.headers["Content-Length"] ?? "?")
/// for try await chunk in response.body { try file.write(chunk) }
/// ```
public struct StreamedResponse: Sendable {
    /// The final response head (after redirects).
    public let head: ResponseHead
    /// The body, piece by piece; iterate it once.
    public let body: ResponseBody
    private let operation: Operation

    init(head: ResponseHead, body: ResponseBody, operation: Operation) {
        self.head = head
        self.body = body
        self.operation = operation
    }

    /// The status code.
    public var status: Int { head.status }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }

    /// The finished response (metrics, trailers) once the body has been read; throws what the
    /// operation's error handlers get (an unaccepted status included).
    public func finished() async throws(CourierError) -> Response {
        try await Engine.waitFor(operation)
    }
}

/// The body of a `StreamedResponse` as byte chunks.
///
/// Back-pressure: at most about 512 KiB (and one socket read) wait for the consumer; beyond it the socket is no longer
/// read, so TCP slows the server and memory stays flat however slow the consumer. Reading resumes
/// once the consumer has taken it. Ending the iteration early, cancelling the reading task, or
/// dropping the response without reading its body cancels the operation (a paused transfer would
/// otherwise hold its connection and its slot of the queue for ever).
public struct ResponseBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public typealias Failure = CourierError

    private let reader: Reader
    var channel: BodyChannel { reader.channel }

    init(channel: BodyChannel) { reader = Reader(channel: channel) }

    public func makeAsyncIterator() -> Iterator { Iterator(reader: reader, iteration: Reader(channel: reader.channel)) }

    public struct Iterator: AsyncIteratorProtocol {
        fileprivate let reader: Reader
        /// This iteration's own end: leaving the loop early cancels even while the response is
        /// still held.
        fileprivate let iteration: Reader

        public mutating func next() async throws(CourierError) -> [UInt8]? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> [UInt8]? {
            let channel = reader.channel
            let result = await withTaskCancellationHandler {
                await channel.next()
            } onCancel: {
                channel.cancel()
            }
            return try result.get()
        }
    }

    /// Cancels when it goes away before the body ended: one belongs to the body (nobody can read
    /// it any more), one to each iteration (the reader left the loop).
    fileprivate final class Reader: Sendable {
        let channel: BodyChannel
        init(channel: BodyChannel) { self.channel = channel }
        deinit { if !channel.isFinished { channel.cancel() } }
    }
}

/// The buffer between the loop thread (which pushes body pieces) and one async reader.
///
/// Pieces that arrive while the reader is busy are appended to one pending buffer, and the
/// reader's next call takes all of it at once: a reader that cannot keep up gets fewer, larger
/// chunks (up to about the pause threshold) instead of one wake-up per socket read, which is what
/// a thread hand-off per piece would cost.
final class BodyChannel: @unchecked Sendable {
    /// Above this many buffered bytes the transfer pauses; it resumes when the reader takes them.
    static let pauseAbove = 512 << 10

    private let lock = Lock()
    private var pending: [UInt8] = []
    private var ending: Result<Void, CourierError>?
    private var waiting: CheckedContinuation<Result<[UInt8]?, CourierError>, Never>?
    private var paused = false
    private var transfer: Transfer?
    /// The most bytes that ever waited for the reader (what back-pressure bounds).
    private(set) var peakBuffered = 0
    /// How many times the transfer was paused for the reader.
    private(set) var pauses = 0
    weak var operation: Operation?

    /// The transfer to resume (set when it is made).
    func attach(_ transfer: Transfer) { lock.withLock { self.transfer = transfer } }

    /// The loop's sink: copies the piece and says whether to pause.
    func push(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        let (waiter, verdict) = lock.withLock { () -> (CheckedContinuation<Result<[UInt8]?, CourierError>, Never>?, BodyVerdict) in
            if let waiting {
                self.waiting = nil
                return (waiting, .proceed)
            }
            pending.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            peakBuffered = max(peakBuffered, pending.count)
            guard pending.count > Self.pauseAbove else { return (nil, .proceed) }
            if !paused { pauses += 1 }
            paused = true
            return (nil, .pause)
        }
        waiter?.resume(returning: .success(Array(bytes.bindMemory(to: UInt8.self))))
        return verdict
    }

    /// The body ended (`.success`) or failed.
    func finish(_ outcome: Result<Void, CourierError>) {
        let resume = lock.withLock { () -> CheckedContinuation<Result<[UInt8]?, CourierError>, Never>? in
            guard ending == nil else { return nil }
            ending = outcome
            transfer = nil
            let waiter = waiting
            waiting = nil
            return waiter
        }
        resume?.resume(returning: outcome.map { nil })
    }

    var isFinished: Bool { lock.withLock { ending != nil && pending.isEmpty } }
    var statistics: (peakBuffered: Int, pauses: Int) { lock.withLock { (peakBuffered, pauses) } }

    func cancel() { operation?.cancel() }

    func next() async -> Result<[UInt8]?, CourierError> {
        await withCheckedContinuation { continuation in
            let (ready, resumeTransfer) = lock.withLock { () -> (Result<[UInt8]?, CourierError>?, Transfer?) in
                if !pending.isEmpty {
                    // Everything that waited, in one chunk; the transfer reads again at once.
                    var piece: [UInt8] = []
                    swap(&piece, &pending)
                    var resumeTransfer: Transfer?
                    if paused {
                        paused = false
                        resumeTransfer = transfer
                    }
                    return (.success(piece), resumeTransfer)
                }
                if let ending { return (ending.map { nil }, nil) }
                waiting = continuation
                if paused {
                    paused = false
                    return (nil, transfer)
                }
                return (nil, nil)
            }
            if let resumeTransfer { Runtime.shared.resume(resumeTransfer) }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
