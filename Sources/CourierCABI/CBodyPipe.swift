import Courier
import CourierCore
import CUV
import Glibc

/// The buffer between the loop thread, which pushes body pieces, and one reading thread (behind
/// `courier_request_set_body_reader` / `courier_request_read`).
///
/// Double-buffered: the loop appends to `pending`; a read that has used up its own chunk takes all
/// of `pending` at once (a swap under the lock) and copies out of it without the lock, while the
/// loop fills the other buffer. Above `limit` bytes waiting, the transfer pauses (TCP slows the
/// server), and the swap resumes it: at most two buffers of `limit` plus a socket read exist,
/// allocated once for the whole body.
///
/// The pipe is also a `ReadLanding`: the socket reads themselves go into the free end of
/// `pending`, so a piece arrives already in place and pushing it only counts it (a chunk header
/// between pieces is squeezed out with a move inside the buffer). What reaches the reader from
/// there is copied once, into the reader's memory, as a write callback's consumer copies it.
///
/// A reader that finds nothing waiting lends its own buffer while it waits (`zone`): the reads
/// land there, the pieces go straight into it, and the reader wakes, at the end of the loop's
/// turn as before, with its buffer already filled. A reader that keeps up with the network thus
/// copies nothing at all (C reader, 1 GiB from nginx: 0.43 -> 0.38 CPU s, user time 0.08 -> 0.06).
/// Holding the reader back until its buffer is full was measured too, and lost: fewer thread
/// hand-offs, but the loop then idles between reads and the kernel's side of the reads costs
/// more (0.48 CPU s).
final class CBodyPipe: @unchecked Sendable {
    /// `courier_request_set_body_reader`'s 0: what waits before the socket is paused. A reader
    /// slower than the network pauses and resumes the transfer once per `limit` bytes, each a
    /// hand-off between threads; larger limits pay fewer hand-offs with more memory (two buffers
    /// of `limit` plus a socket read). 256 KiB keeps a process near the bound the Swift stream
    /// keeps; a caller whose per-read cost is high asks for more.
    static let defaultLimit = 256 << 10
    /// The largest `buffer_size` taken: more is refused (INVALID_ARGUMENT), not reserved.
    static let largestLimit = 256 << 20
    /// The smallest free end offered as a landing zone: below it, a read goes to the loop's
    /// buffer (a pipe that is full is paused, and its last reads are short anyway).
    static let smallestZone = 16 << 10

    let limit: Int
    private let state = ConditionLock()
    // Under `state`:
    private var pending = PipeBuffer()
    private var paused = false
    private var readerWaits = false
    private var wakeScheduled = false
    /// The request's end as the reader sees it: nil while the body may grow.
    private var ending: Int32?
    /// A read said AGAIN: the readable callback is owed a call when something comes.
    private var armed = false
    /// A socket read is landing in `pending`'s free end: its memory must stay where it is.
    private var landing = false
    /// Buffers let go while a read was landing in them, freed once it has landed.
    private var retired: [PipeBuffer] = []
    /// The end came and the reader has taken everything, but a read was landing: the buffers go
    /// when it has landed.
    private var releaseOwed = false
    /// The waiting reader's own buffer (`base` nil when none is lent). It is lent only while
    /// nothing waits in `pending`, and the pieces go into it until one does not fit; that one and
    /// the ones after it wait in `pending` (nothing goes into the buffer while `pending` holds
    /// bytes), so the order holds.
    private var zone = PipeBuffer()
    /// The read landing now is in `zone`; `reclaiming`: the reader waits for it to end before it
    /// takes its buffer back.
    private var landingInZone = false
    private var reclaiming = false
    /// The connection's reads, lent to the reader for the rest of the body (see `ReadLease`):
    /// used once nothing waits here, dropped when it ends.
    private var lease: ReadLease?

    /// What the reader does that a test waits for, instead of for time: it lent its buffer and
    /// waits (`lent`), or its time ran out while a read lands in that buffer (`waitingForLanding`).
    package enum ReaderEvent: Sendable { case lent, waitingForLanding }
    /// Told each `ReaderEvent` (set before the first read; called under the pipe's lock: signal,
    /// never block). Nil outside tests.
    package var readerEvents: (@Sendable (ReaderEvent) -> Void)?

    /// courier_readable_fn and its user pointer, told (on the loop thread) when bytes or the end
    /// came after an AGAIN; `request` is the handle it is given (weak: never called once freed).
    private let readable: (courier_readable_fn, UnsafeMutableRawPointer?)?
    private weak var request: CRequest?
    /// `courier_request_get_readable_fd`'s descriptor (-1 until asked for, before the request is
    /// sent): an epoll set the caller's event loop polls, so a runtime with a global lock (Python's
    /// asyncio) is woken by its own poller instead of a callback that must take the lock on
    /// Courier's thread. It holds `bell`, an eventfd rung where the readable callback is called
    /// (and cleared by `read`); while a lease is out, also the leased socket (see `ReadLease.watch`),
    /// so a reader that never waits still reads the socket itself, one copy per byte. Both are
    /// closed with the pipe.
    private(set) var readableFD: Int32 = -1
    private var bell: Int32 = -1
    /// Under `state`: the bell was rung and not yet cleared (see `takeArmed`).
    private var rung = false

    /// The reading thread's side: one reader at a time (`reading` is its chunk, read up to
    /// `offset`); the lock makes two threads reading at once safe, if pointless.
    private let readerLock = Lock()
    private var reading = PipeBuffer()
    private var offset = 0

    init(limit: Int, request: CRequest, readable: (courier_readable_fn, UnsafeMutableRawPointer?)?) {
        self.limit = limit
        self.request = request
        self.readable = readable
    }

    deinit {
        if readableFD >= 0 {
            close(readableFD)
            close(bell)
        }
        pending.free()
        reading.free()
        for var buffer in retired { buffer.free() }
    }

    /// What each buffer holds at most: `limit` before the pause, plus the rest of the socket read
    /// that crossed it.
    private var bufferCapacity: Int { limit + LoopReadBuffers.socketSize }

    /// The descriptor (made once, before the request is sent; the request is not yet shared).
    func makeReadableFD() throws(CourierError) -> Int32 {
        if readableFD < 0 {
            let set = courier_poll_set_create()
            let ring = set >= 0 ? eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) : -1
            guard set >= 0, ring >= 0, courier_poll_set_add(set, ring) == 0 else {
                let reason = String(cString: strerror(errno))
                if set >= 0 { close(set) }
                if ring >= 0 { close(ring) }
                throw CourierError(.noMemory, "no descriptor to be had: \(reason)")
            }
            readableFD = set
            bell = ring
        }
        return readableFD
    }

    /// A reader that waits in `read` may take the socket's reads themselves, and so may one told
    /// through the descriptor (the socket joins the set it polls); one told through the readable
    /// callback never waits in `read` and has nothing to poll, so it is not offered them.
    var sink: StreamSink { StreamSink(landing: self, leaseTaker: readable == nil ? self : nil) { [self] bytes in push(bytes) } }

    /// Loop thread: keeps the piece (already in place when it landed in the reader's buffer or in
    /// `pending`); pauses the transfer above the limit. A waiting reader is woken at the end of
    /// the loop's turn, once for all the pieces that turn read.
    private func push(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        state.lock()
        if let source = bytes.baseAddress, bytes.count > 0 { keep(source, bytes.count) }
        let wake = (readerWaits || armed) && !wakeScheduled
        if wake { wakeScheduled = true }
        let full = pending.count >= limit
        if full { paused = true }
        state.unlock()
        if wake { Runtime.shared.executeSoon { [self] in wakeReader() } }
        return full ? .pause : .proceed
    }

    /// Under the lock: the piece into the lent buffer while it fits there, else into `pending`.
    private func keep(_ source: UnsafeRawPointer, _ count: Int) {
        if zone.base != nil, pending.count == 0, zone.count + count <= zone.capacity { return zone.append(source, count) }
        if !pending.holds(source, count) {
            if pending.base == nil { pending.allocate(bufferCapacity) }
            if pending.count + count > pending.capacity { grow(to: pending.count + count) }
        }
        pending.append(source, count)
    }

    /// Under the lock: a larger `pending` (a piece beyond the bound: a held read delivered at
    /// once). The old one is kept while a read lands in it.
    private func grow(to size: Int) {
        var larger = PipeBuffer()
        larger.allocate(max(size, bufferCapacity))
        larger.append(pending.base!, pending.count)
        if landing { retired.append(pending) } else { pending.free() }
        pending = larger
    }

    private func wakeReader() {
        let notify = state.withLock { () -> Bool in
            wakeScheduled = false
            state.signal()
            return takeArmed()
        }
        if notify { tellReadable() }
    }

    /// Under the lock: whether the readable callback is owed a call (it is then no longer). The
    /// bell rings here, under the lock, and `read` clears it under the lock: where it says AGAIN,
    /// in the section that found nothing (a later ring announces what it has not seen), and after
    /// anything else it returns (its caller reads again before it waits). So no ring outlives
    /// what it announced, and the descriptor is quiet once the end has been read.
    private func takeArmed() -> Bool {
        guard armed else { return false }
        armed = false
        if bell >= 0 {
            _ = eventfd_write(bell, 1)
            rung = true
        }
        return readable != nil
    }

    /// Under the lock, in the section that found nothing to read: a call is owed when something
    /// comes, and a ring from before is for what this read has already seen.
    private func armForAgain() {
        armed = true
        clearRing()
    }

    /// Under the lock: the bell's ring read away.
    private func clearRing() {
        guard rung else { return }
        rung = false
        var count: eventfd_t = 0
        _ = eventfd_read(bell, &count)
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
            // (The connection revoked a lease it had given; a failure reaches here first at times.)
            lease?.revoke()
            lease = nil
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
        let result = readPiece(into: buffer, capacity: capacity, timeout: timeout, resume: resume)
        if bell >= 0, result.0 != CourierError.Code.again.c { state.withLock { clearRing() } }
        return result
    }

    /// `read` itself, one reader at a time.
    private func readPiece(into buffer: UnsafeMutableRawPointer, capacity: Int, timeout: Int, resume: () -> Void) -> (Int32, Int) {
        readerLock.withLock { () -> (Int32, Int) in
            let deadline = timeout > 0 ? monotonicNanos() &+ UInt64(timeout) &* 1_000_000 : 0
            while offset == reading.count {
                let wait = Self.millisecondsLeft(timeout, deadline)
                if let lease = state.withLock({ pending.count == 0 ? lease : nil }) {
                    switch lease.read(into: buffer, capacity: capacity, timeoutMillis: wait) {
                    case .bytes(let n): return (COURIER_OK, n)
                    case .again:
                        // (The end is rung on the bell; the socket and the lease's own end wake
                        // a polling reader through the set.)
                        state.withLock { armForAgain() }
                        return (CourierError.Code.again.c, 0)
                    case .over: state.withLock { if self.lease === lease { self.lease = nil } }
                    }
                    continue
                }
                let (outcome, resumeTransfer) = refill(timeout: wait, lending: buffer, capacity)
                if resumeTransfer { resume() }
                switch outcome {
                case .taken, .leased: break
                case .inPlace(let n): return (COURIER_OK, n)
                case .stop(let code): return (code, 0)
                }
            }
            let n = min(capacity, reading.count - offset)
            buffer.copyMemory(from: reading.base! + offset, byteCount: n)
            offset += n
            return (COURIER_OK, n)
        }
    }

    /// What is left of a read's wait: `timeout` itself when it is 0 (none) or negative (for
    /// ever), else the milliseconds to `deadline` (a lease that ended used some of the wait).
    private static func millisecondsLeft(_ timeout: Int, _ deadline: UInt64) -> Int {
        guard timeout > 0 else { return timeout }
        let now = monotonicNanos()
        return deadline > now ? Int((deadline - now + 999_999) / 1_000_000) : 0
    }

    private enum Refill {
        /// `pending` became `reading`.
        case taken
        /// That many bytes went straight into the reader's buffer while it waited.
        case inPlace(Int)
        /// The end, the failure, or AGAIN.
        case stop(Int32)
        /// Nothing waits, and the reads were lent meanwhile: read through the lease.
        case leased
    }

    /// Takes what waits into `reading`, or waits for pieces with `buffer` lent to them, or says
    /// why there is nothing (and whether the transfer must be resumed).
    private func refill(timeout: Int, lending buffer: UnsafeMutableRawPointer, _ capacity: Int) -> (Refill, Bool) {
        let deadline = timeout > 0 ? ConditionLock.deadline(afterMilliseconds: timeout) : nil
        state.lock()
        defer { state.unlock() }
        while pending.count == 0 {
            if let ending {
                // Nothing more comes: the buffers go now, or once a read landing in one is done.
                offset = 0
                reading.count = 0
                if landing { releaseOwed = true } else { releaseBuffers() }
                return (.stop(ending == CourierError.Code.httpStatus.c ? COURIER_OK : ending), false)
            }
            if lease != nil { return (.leased, false) }
            if timeout == 0 {
                armForAgain()
                return (.stop(CourierError.Code.again.c), false)
            }
            zone = PipeBuffer(borrowing: buffer, capacity: capacity)
            readerWaits = true
            readerEvents?(.lent)
            let woken = deadline.map { state.wait(until: $0) } ?? { state.wait(); return true }()
            readerWaits = false
            let inPlace = reclaimZone()
            if inPlace > 0 { return (.inPlace(inPlace), false) }
            if pending.count == 0, ending == nil, lease != nil { return (.leased, false) }
            if !woken, pending.count == 0, ending == nil {
                armForAgain()
                return (.stop(CourierError.Code.again.c), false)
            }
        }
        // The previous chunk's storage becomes the next pending buffer (no allocation per chunk).
        // A read may be landing in the free end of the one taken: it stays where it is, and the
        // pieces still to come from it are copied into the new pending buffer.
        reading.count = 0
        swap(&reading, &pending)
        offset = 0
        let resumeTransfer = paused
        paused = false
        return (.taken, resumeTransfer)
    }

    /// Under the lock: the lent buffer back, once no read lands in it; what it received.
    private func reclaimZone() -> Int {
        reclaiming = true
        if landingInZone { readerEvents?(.waitingForLanding) }
        while landingInZone { state.wait() }
        reclaiming = false
        let received = zone.count
        zone = PipeBuffer()
        return received
    }

    /// Under the lock, with no read landing: frees both buffers (the reader has taken all).
    private func releaseBuffers() {
        pending.free()
        reading.free()
        releaseOwed = false
    }
}

extension CBodyPipe: ReadLanding {
    func landingZone() -> UnsafeMutableRawBufferPointer? {
        state.lock()
        defer { state.unlock() }
        guard ending == nil, !landing else { return nil }
        if zone.base != nil, pending.count == 0, zone.capacity - zone.count >= Self.smallestZone {
            landing = true
            landingInZone = true
            return UnsafeMutableRawBufferPointer(start: zone.base! + zone.count,
                                                 count: min(zone.capacity - zone.count, LoopReadBuffers.socketSize))
        }
        if pending.base == nil { pending.allocate(bufferCapacity) }
        let free = pending.capacity - pending.count
        guard free >= Self.smallestZone else { return nil }
        landing = true
        return UnsafeMutableRawBufferPointer(start: pending.base! + pending.count, count: min(free, LoopReadBuffers.socketSize))
    }

    func landed() {
        state.lock()
        defer { state.unlock() }
        landing = false
        if landingInZone {
            landingInZone = false
            if reclaiming { state.signal() }
        }
        for var buffer in retired { buffer.free() }
        retired.removeAll()
        if releaseOwed { releaseBuffers() }
    }
}

extension CBodyPipe: ReadLeaseTaker {
    /// Loop thread, right after a piece was pushed: the reader takes the reads once what waits
    /// here is read (a reader waiting now is woken to do so).
    func take(_ offered: ReadLease) -> Bool {
        state.withLock { () -> Bool in
            guard ending == nil, lease == nil, readable == nil else { return false }
            if readableFD >= 0, !offered.watch(in: readableFD) { return false }
            lease = offered
            state.signal()
            return true
        }
    }
}
