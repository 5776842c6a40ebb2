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
/// Back-pressure: at most about 256 KiB (and one socket read) wait for the consumer; beyond it the socket is no longer
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
///
/// Two buffers take turns: the chunk handed to the reader is kept, and once the reader has let go
/// of it (its loop body ended) its storage becomes the next pending buffer. A gigabyte goes
/// through the same two allocations instead of one fresh allocation (and its page faults) per
/// chunk, and the process grows by at most the two buffers.
final class BodyChannel: @unchecked Sendable {
    /// Above this many buffered bytes the transfer pauses; it resumes when the reader takes them.
    /// A reader slower than the network costs a pause, a resume and a thread hand-off per this
    /// many bytes. Measured on 1 GiB (client and server pinned apart, 4 runs each, one session):
    /// 256 KiB took 0.28–0.36 CPU s, 128 KiB 0.29–0.43, 1 MiB about the same as 256 KiB, but its
    /// two buffers (2.5 MiB) put the process's peak over 16 MiB (16.9); at 256 KiB it is 15.4.
    static let pauseAbove = 256 << 10

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

    /// Set while a hand-over to the waiting reader is scheduled for the end of the loop's turn.
    private var wakeScheduled = false
    /// Capacity given to a fresh pending buffer: the threshold plus one socket read, the most it
    /// ever holds, so it never regrows (and recopies).
    private static let pendingCapacity = pauseAbove + LoopReadBuffers.socketSize
    /// The last chunk handed to the reader, whose storage is reused once the reader drops it.
    private var handedOut: [UInt8] = []

    /// The loop's sink: copies the piece and says whether to pause.
    ///
    /// A waiting reader is not woken per piece: the wake is put off to the end of the loop's turn
    /// (`executeSoon`), so the pieces one turn reads (libuv reads a ready socket up to 32 times)
    /// reach the reader as one chunk, for one thread hand-off.
    func push(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        let (scheduleWake, verdict) = lock.withLock { () -> (Bool, BodyVerdict) in
            if pending.isEmpty { pending.reserveCapacity(max(Self.pendingCapacity, bytes.count)) }
            pending.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            peakBuffered = max(peakBuffered, pending.count)
            var scheduleWake = false
            if waiting != nil, !wakeScheduled {
                wakeScheduled = true
                scheduleWake = true
            }
            guard pending.count > Self.pauseAbove else { return (scheduleWake, .proceed) }
            if !paused { pauses += 1 }
            paused = true
            return (scheduleWake, .pause)
        }
        if scheduleWake { Runtime.shared.executeSoon { [self] in handOver() } }
        return verdict
    }

    /// The end of the turn: what arrived goes to the reader still waiting for it.
    private func handOver() {
        let (waiter, chunk, resumeTransfer) = lock.withLock { () -> (CheckedContinuation<Result<[UInt8]?, CourierError>, Never>?, [UInt8], Transfer?) in
            wakeScheduled = false
            guard let waiting, !pending.isEmpty else { return (nil, [], nil) }
            self.waiting = nil
            let (chunk, resumeTransfer) = takePending()
            return (waiting, chunk, resumeTransfer)
        }
        if let resumeTransfer { Runtime.shared.resume(resumeTransfer) }
        waiter?.resume(returning: .success(chunk))
    }

    /// Everything that waited, as one chunk, and the transfer to resume if it was paused. Under
    /// the lock.
    private func takePending() -> ([UInt8], Transfer?) {
        // The reader's previous chunk: its storage is ours alone again once the reader dropped
        // it (if not, emptying it makes a new buffer, as a fresh one would).
        var chunk: [UInt8] = []
        swap(&chunk, &handedOut)
        chunk.removeAll(keepingCapacity: true)
        swap(&chunk, &pending)
        // Kept for reuse only while more can come: an ended body holds no buffer.
        handedOut = ending == nil ? chunk : []
        guard paused else { return (chunk, nil) }
        paused = false
        return (chunk, transfer)
    }

    /// The body ended (`.success`) or failed.
    func finish(_ outcome: Result<Void, CourierError>) {
        let resume = lock.withLock { () -> CheckedContinuation<Result<[UInt8]?, CourierError>, Never>? in
            guard ending == nil else { return nil }
            ending = outcome
            transfer = nil
            // Pieces still on their way to the reader (`handOver`) go first; the end follows.
            guard pending.isEmpty else { return nil }
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
        // What is already here is taken without suspending.
        if let ready = takeReady() { return ready }
        return await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> Result<[UInt8]?, CourierError>? in
                if !pending.isEmpty || ending != nil { return nil }
                waiting = continuation
                return .success([])
            }
            if ready == nil {
                // Something arrived between the two looks.
                continuation.resume(returning: takeReady() ?? .success(nil))
            }
        }
    }

    /// The pending chunk, or the end; nil when the reader has to wait. Resumes a paused
    /// transfer.
    private func takeReady() -> Result<[UInt8]?, CourierError>? {
        let (ready, resumeTransfer) = lock.withLock { () -> (Result<[UInt8]?, CourierError>?, Transfer?) in
            if !pending.isEmpty {
                let (chunk, resumeTransfer) = takePending()
                return (.success(chunk), resumeTransfer)
            }
            if let ending { return (ending.map { nil }, nil) }
            return (nil, nil)
        }
        if let resumeTransfer { Runtime.shared.resume(resumeTransfer) }
        return ready
    }
}
