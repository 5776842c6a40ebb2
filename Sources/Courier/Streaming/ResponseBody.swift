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
    private let operation: HTTPOperation

    init(head: ResponseHead, body: ResponseBody, operation: HTTPOperation) {
        self.head = head
        self.body = body
        self.operation = operation
    }

    /// The status code.
    public var status: Int { head.status }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }
    /// The HTTP version the response comes over: "HTTP/1.1", "HTTP/1.0" or "HTTP/2" (as
    /// `Response.httpVersion`).
    public var httpVersion: String { "HTTP/" + head.versionText }

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
/// Pieces that arrive while the reader is busy wait; the reader's next call takes the oldest
/// chunk at once, so a reader that cannot keep up does not pay a wake-up per socket read (the
/// wake is put off to the end of the loop's turn, once for everything that turn read).
///
/// Two ways in. On plain TCP the socket reads themselves go into arrays this channel keeps whole
/// (`ReadLanding.readArrayCapacity`): a read's bytes that are all body (everything after the
/// head of a Content-Length or close-delimited body) become the reader's chunk as they are, the
/// kernel's copy the only one (1 GiB from nginx: 0.37 -> 0.23 CPU s, measured with the copy taken
/// out). Any other piece (beside the head, between chunk framing, decrypted, decoded) is copied
/// into `pending`, whose storage is reused: the chunk handed to the reader is kept, and once the
/// reader has let go of it its storage becomes the next pending buffer, so copies go through the
/// same two allocations instead of one fresh allocation (and its page faults) per chunk.
final class BodyChannel: @unchecked Sendable {
    /// Above this many buffered bytes the transfer pauses; it resumes when the reader takes them.
    /// A reader slower than the network costs a pause, a resume and a thread hand-off per this
    /// many bytes. Measured on 1 GiB (client and server pinned apart, 4 runs each, one session):
    /// 256 KiB took 0.28–0.36 CPU s, 128 KiB 0.29–0.43, 1 MiB about the same as 256 KiB, but its
    /// two buffers (2.5 MiB) put the process's peak over 16 MiB (16.9); at 256 KiB it is 15.4.
    static let pauseAbove = 256 << 10

    private let lock = Lock()
    /// Whole arrays (socket reads kept as they are, and copied pieces sealed before them), oldest
    /// first; `pending` holds what came after them.
    private var ready = Deque<[UInt8]>()
    private var readyBytes = 0
    private var pending: [UInt8] = []
    private var ending: Result<Void, CourierError>?
    private var waiting: CheckedContinuation<Result<[UInt8]?, CourierError>, Never>?
    private var paused = false
    private var transfer: Transfer?
    /// The most bytes that ever waited for the reader (what back-pressure bounds).
    private(set) var peakBuffered = 0
    /// How many times the transfer was paused for the reader.
    private(set) var pauses = 0
    /// How many socket reads reached the reader as they were (not copied).
    private(set) var keptReads = 0
    weak var operation: HTTPOperation?

    /// The transfer to resume (set when it is made).
    func attach(_ transfer: Transfer) { lock.withLock { self.transfer = transfer } }

    /// Set while a hand-over to the waiting reader is scheduled for the end of the loop's turn.
    private var wakeScheduled = false
    /// Capacity given to a fresh pending buffer: the threshold plus one socket read, the most it
    /// ever holds, so it never regrows (and recopies).
    private static let pendingCapacity = pauseAbove + LoopReadBuffers.socketSize
    /// The last chunk handed to the reader, whose storage is reused once the reader drops it.
    private var handedOut: [UInt8] = []
    /// Loop thread: the array the socket read being delivered went into (see `arrayArrived`).
    private var arrival: [UInt8]?

    /// Bytes waiting for the reader. Under the lock.
    private var buffered: Int { readyBytes + pending.count }

    /// The sink for the transfer: this channel takes the socket reads as arrays where it can.
    var sink: StreamSink { StreamSink(landing: self) { [self] bytes in push(bytes) } }

    /// The loop's sink: keeps the piece (the read's whole array when the piece is all of it, a
    /// copy otherwise) and says whether to pause.
    func push(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        let whole = arrival.flatMap { array in Self.isAll(of: array, bytes) ? array : nil }
        if whole != nil { arrival = nil }
        let (scheduleWake, verdict) = lock.withLock { () -> (Bool, BodyVerdict) in
            if let whole {
                if !pending.isEmpty { seal() }
                ready.append(whole)
                readyBytes += whole.count
                keptReads += 1
            } else {
                if pending.isEmpty { pending.reserveCapacity(max(Self.pendingCapacity, bytes.count)) }
                pending.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            }
            peakBuffered = max(peakBuffered, buffered)
            var scheduleWake = false
            if waiting != nil, !wakeScheduled {
                wakeScheduled = true
                scheduleWake = true
            }
            guard buffered > Self.pauseAbove else { return (scheduleWake, .proceed) }
            if !paused { pauses += 1 }
            paused = true
            return (scheduleWake, .pause)
        }
        if scheduleWake { Runtime.shared.executeSoon { [self] in handOver() } }
        return verdict
    }

    /// Whether `bytes` are exactly the contents of `array`.
    private static func isAll(of array: [UInt8], _ bytes: UnsafeRawBufferPointer) -> Bool {
        array.withUnsafeBytes { $0.baseAddress == bytes.baseAddress && $0.count == bytes.count }
    }

    /// Under the lock: what `pending` holds becomes a chunk of its own in `ready` (an array
    /// arrives after it).
    private func seal() {
        var chunk: [UInt8] = []
        swap(&chunk, &pending)
        readyBytes += chunk.count
        ready.append(chunk)
    }

    /// The end of the turn: what arrived goes to the reader still waiting for it.
    private func handOver() {
        let (waiter, chunk, resumeTransfer) = lock.withLock { () -> (CheckedContinuation<Result<[UInt8]?, CourierError>, Never>?, [UInt8], Transfer?) in
            wakeScheduled = false
            guard let waiting, buffered > 0 else { return (nil, [], nil) }
            self.waiting = nil
            let (chunk, resumeTransfer) = takeChunk()
            return (waiting, chunk, resumeTransfer)
        }
        if let resumeTransfer { Runtime.shared.resume(resumeTransfer) }
        waiter?.resume(returning: .success(chunk))
    }

    /// The oldest chunk, and the transfer to resume if it was paused and what waits is back
    /// under the threshold. Under the lock, with something buffered.
    private func takeChunk() -> ([UInt8], Transfer?) {
        let chunk: [UInt8]
        if let first = ready.popFirst() {
            readyBytes -= first.count
            chunk = first
        } else {
            chunk = takePending()
        }
        guard paused, buffered <= Self.pauseAbove else { return (chunk, nil) }
        paused = false
        return (chunk, transfer)
    }

    /// Everything in `pending`, as one chunk. Under the lock.
    private func takePending() -> [UInt8] {
        // The reader's previous chunk: its storage is ours alone again once the reader dropped
        // it (if not, emptying it makes a new buffer, as a fresh one would).
        var chunk: [UInt8] = []
        swap(&chunk, &handedOut)
        chunk.removeAll(keepingCapacity: true)
        swap(&chunk, &pending)
        // Kept for reuse only while more can come: an ended body holds no buffer.
        handedOut = ending == nil ? chunk : []
        return chunk
    }

    /// The body ended (`.success`) or failed.
    func finish(_ outcome: Result<Void, CourierError>) {
        let resume = lock.withLock { () -> CheckedContinuation<Result<[UInt8]?, CourierError>, Never>? in
            guard ending == nil else { return nil }
            ending = outcome
            transfer = nil
            // Pieces still on their way to the reader (`handOver`) go first; the end follows.
            guard buffered == 0 else { return nil }
            let waiter = waiting
            waiting = nil
            return waiter
        }
        resume?.resume(returning: outcome.map { nil })
    }

    var isFinished: Bool { lock.withLock { ending != nil && buffered == 0 } }
    var statistics: (peakBuffered: Int, pauses: Int, keptReads: Int) { lock.withLock { (peakBuffered, pauses, keptReads) } }

    func cancel() { operation?.cancel() }

    func next() async -> Result<[UInt8]?, CourierError> {
        // What is already here is taken without suspending.
        if let ready = takeReady() { return ready }
        return await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> Result<[UInt8]?, CourierError>? in
                if buffered > 0 || ending != nil { return nil }
                waiting = continuation
                return .success([])
            }
            if ready == nil {
                // Something arrived between the two looks.
                continuation.resume(returning: takeReady() ?? .success(nil))
            }
        }
    }

    /// The oldest chunk, or the end; nil when the reader has to wait. Resumes a paused transfer.
    private func takeReady() -> Result<[UInt8]?, CourierError>? {
        let (ready, resumeTransfer) = lock.withLock { () -> (Result<[UInt8]?, CourierError>?, Transfer?) in
            if buffered > 0 {
                let (chunk, resumeTransfer) = takeChunk()
                return (.success(chunk), resumeTransfer)
            }
            if let ending { return (ending.map { nil }, nil) }
            return (nil, nil)
        }
        if let resumeTransfer { Runtime.shared.resume(resumeTransfer) }
        return ready
    }
}

extension BodyChannel: ReadLanding {
    /// No zones: this channel's pieces end up in arrays, which it takes whole instead.
    func landingZone() -> UnsafeMutableRawBufferPointer? { nil }

    func landed() { arrival = nil }

    var readArrayCapacity: Int { LoopReadBuffers.socketSize }

    func arrayArrived(_ array: [UInt8]) { arrival = array }
}
