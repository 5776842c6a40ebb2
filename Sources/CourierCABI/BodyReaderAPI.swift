import Courier
import CourierCore
import Glibc

// courier_request_set_body_reader / courier_request_read: the response body pulled by the caller
// into its own buffer, from its own thread, instead of pushed through a write callback on the loop
// thread. A runtime that must take a lock to run a callback (Python's GIL) pays one blocking call
// per buffer this way, not a callback per socket read.

/// The buffer between the loop thread, which pushes body pieces, and one reading thread.
///
/// Double-buffered: the loop appends to `pending`; a read that has used up its own chunk takes all
/// of `pending` at once (a swap under the lock) and copies out of it without the lock, while the
/// loop fills the other buffer. Above `limit` bytes waiting, the transfer pauses (TCP slows the
/// server), and the swap resumes it: at most two buffers of `limit` plus a socket read exist,
/// allocated once for the whole body.
final class CBodyPipe: @unchecked Sendable {
    /// `courier_request_set_body_reader`'s 0: what waits before the socket is paused. A reader
    /// slower than the network pauses and resumes the transfer once per `limit` bytes, each a
    /// hand-off between threads; larger limits pay fewer hand-offs with more memory (two buffers
    /// of `limit` plus a socket read). 256 KiB keeps a process near the bound the Swift stream
    /// keeps; a caller whose per-read cost is high asks for more (Python asks 1 MiB: a third less
    /// CPU per GiB there; 4 MiB was no better, its buffers outgrow the caches).
    static let defaultLimit = 256 << 10
    /// The largest `buffer_size` taken: more is refused (INVALID_ARGUMENT), not reserved.
    static let largestLimit = 256 << 20

    let limit: Int
    private let state = ConditionLock()
    // Under `state`:
    private var pending: [UInt8] = []
    private var paused = false
    private var readerWaits = false
    private var wakeScheduled = false
    /// The request's end as the reader sees it: nil while the body may grow.
    private var ending: Int32?
    /// A read said AGAIN: the readable callback is owed a call when something comes.
    private var armed = false

    /// courier_readable_fn and its user pointer, told (on the loop thread) when bytes or the end
    /// came after an AGAIN; `request` is the handle it is given (weak: never called once freed).
    private let readable: (courier_readable_fn, UnsafeMutableRawPointer?)?
    private weak var request: CRequest?

    /// The reading thread's side: one reader at a time (`reading` is its chunk, read up to
    /// `offset`); the lock makes two threads reading at once safe, if pointless.
    private let readerLock = Lock()
    private var reading: [UInt8] = []
    private var offset = 0

    init(limit: Int, request: CRequest, readable: (courier_readable_fn, UnsafeMutableRawPointer?)?) {
        self.limit = limit
        self.request = request
        self.readable = readable
    }

    var sink: StreamSink { StreamSink { [self] bytes in push(bytes) } }

    /// Loop thread: keeps the piece; pauses the transfer above the limit. A waiting reader is
    /// woken at the end of the loop's turn, once for all the pieces that turn read.
    private func push(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        state.lock()
        if pending.capacity == 0 { pending.reserveCapacity(limit + LoopReadBuffers.socketSize) }
        pending.append(contentsOf: bytes.bindMemory(to: UInt8.self))
        let wake = (readerWaits || armed) && !wakeScheduled
        if wake { wakeScheduled = true }
        let full = pending.count >= limit
        if full { paused = true }
        state.unlock()
        if wake { Runtime.shared.executeSoon { [self] in wakeReader() } }
        return full ? .pause : .proceed
    }

    private func wakeReader() {
        let notify = state.withLock { () -> Bool in
            wakeScheduled = false
            state.signal()
            return takeArmed()
        }
        if notify { tellReadable() }
    }

    /// Under the lock: whether the readable callback is owed a call (it is then no longer).
    private func takeArmed() -> Bool {
        guard armed else { return false }
        armed = false
        return readable != nil
    }

    private func tellReadable() {
        guard let (callback, user) = readable, let request, !request.isFreed else { return }
        callback(borrowedHandle(request), user)
    }

    /// The request ended (loop thread, before its outcome is reported): `code` is what the reader
    /// is told once the buffered bytes are read. `notify`: the readable callback may be called
    /// (not for a freed request).
    func finish(_ code: Int32, notify: Bool = true) {
        let owed = state.withLock { () -> Bool in
            guard ending == nil else { return false }
            ending = code
            state.signal()
            return takeArmed()
        }
        if owed, notify { tellReadable() }
    }

    /// `courier_request_read`: up to `capacity` bytes into `buffer`. (COURIER_OK, n > 0) for
    /// bytes, (COURIER_OK, 0) at the end of the body, (code, 0) when the request failed,
    /// (COURIER_E_AGAIN, 0) when `timeout` milliseconds (0: none, negative: for ever) passed with
    /// nothing to read. `resume` resumes the paused transfer (called without a lock held).
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int, timeout: Int, resume: () -> Void) -> (Int32, Int) {
        readerLock.withLock { () -> (Int32, Int) in
            if offset == reading.count {
                let (code, resumeTransfer) = refill(timeout: timeout)
                if resumeTransfer { resume() }
                if let code { return (code, 0) }
            }
            let n = min(capacity, reading.count - offset)
            reading.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            offset += n
            return (COURIER_OK, n)
        }
    }

    /// Takes what waits into `reading` (nil, and whether the transfer must be resumed) or says
    /// why there is nothing: the end, the failure, or AGAIN.
    private func refill(timeout: Int) -> (Int32?, Bool) {
        let deadline = timeout > 0 ? ConditionLock.deadline(afterMilliseconds: timeout) : nil
        state.lock()
        defer { state.unlock() }
        while pending.isEmpty {
            if let ending {
                reading = []  // nothing more comes: the buffers go now
                offset = 0
                pending = []
                return (ending == CourierError.Code.httpStatus.c ? COURIER_OK : ending, false)
            }
            if timeout == 0 {
                armed = true
                return (CourierError.Code.again.c, false)
            }
            readerWaits = true
            let woken = deadline.map { state.wait(until: $0) } ?? { state.wait(); return true }()
            readerWaits = false
            if !woken, pending.isEmpty, ending == nil {
                armed = true
                return (CourierError.Code.again.c, false)
            }
        }
        // The previous chunk's storage becomes the next pending buffer (no allocation per chunk).
        reading.removeAll(keepingCapacity: true)
        swap(&reading, &pending)
        offset = 0
        let resumeTransfer = paused
        paused = false
        return (nil, resumeTransfer)
    }
}

public typealias courier_readable_fn = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void

@_cdecl("courier_request_set_body_reader")
public func courier_request_set_body_reader(_ handle: OpaquePointer?, _ bufferSize: Int, _ readable: courier_readable_fn?,
                                            _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard r.streams.pipe == nil else { throw invalid("the request already has a body reader") }
        // (A size_t beyond Int.max arrives negative; beyond the bound, the first piece would try to
        // reserve it and end the process.)
        guard bufferSize >= 0, bufferSize <= CBodyPipe.largestLimit else { throw invalid("buffer size above 256 MiB") }
        let pipe = CBodyPipe(limit: bufferSize == 0 ? CBodyPipe.defaultLimit : max(bufferSize, 4096), request: r,
                             readable: readable.map { ($0, user) })
        r.streams.pipe = pipe
        r.draft.downloadStreams.append(DownloadStreamBox(sink: pipe.sink))
    }
}

@_cdecl("courier_request_read")
public func courier_request_read(_ handle: OpaquePointer?, _ buffer: UnsafeMutableRawPointer?, _ capacity: Int,
                                 _ received: UnsafeMutablePointer<Int>?, _ timeoutMilliseconds: Int32) -> Int32 {
    received?.pointee = 0
    guard let request = request(handle), let received, let pipe = request.bodyPipe else { return CourierError.Code.misuse.c }
    guard let buffer, capacity > 0 else { return CourierError.Code.invalidArgument.c }
    // The loop thread would wait for itself.
    guard !Runtime.shared.isOnLoopThread else { return CourierError.Code.misuse.c }
    guard request.wasSent else { return CourierError.Code.misuse.c }
    let (code, n) = pipe.read(into: buffer, capacity: capacity, timeout: Int(timeoutMilliseconds)) { request.resume() }
    received.pointee = n
    return code
}
