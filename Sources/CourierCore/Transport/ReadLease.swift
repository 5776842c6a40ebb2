import CUV
import Glibc

/// The socket's reads for the rest of a body, lent to the thread that consumes the body.
///
/// Why: a consumer on a thread of its own (the C ABI's body reader, behind Python's `iter_bytes`)
/// otherwise meets the loop thread once per socket read: the loop reads, wakes the reader, the
/// reader takes the piece and waits again, two context switches and a futex round trip per piece.
/// Measured on 1 GiB from nginx, Python's own blocking socket loop cost 0.21-0.25 CPU s where the
/// hand-offs put Courier's `iter_bytes` at 0.48-0.55 (curl: 0.29-0.32). With a lease the reading
/// thread calls `recv` itself, into its own buffer, and nothing crosses threads per piece.
///
/// What is lent is narrow, so the loop keeps everything else:
/// - only the bytes of a Content-Length body, less its last byte (`budget`): the loop reads that
///   byte itself, so its parser ends the message as for any other response and the connection
///   goes back to the pool by the usual path;
/// - only on plain TCP (TLS records are the loop's), with no request bytes still to send, no rate
///   limit, no content decoding, nobody else taking the body (cache, file, progress);
/// - through a duplicate of the socket, which only the lease closes: the loop may close its
///   connection at any time (a deadline, a cancel) without pulling a descriptor from under a
///   reader in `poll`, and no other connection can ever get that descriptor number meanwhile.
///
/// Life: the connection stops reading and lends (`init`); the reader reads until the budget is
/// used, the peer closes, the socket fails, or nothing comes for the idle limit while it waits
/// (`read` says `.over`); the lease then closes its descriptors and is handed back to the loop
/// (`returned`), which counts what was read, feeds its parser and reads again. The loop may take
/// the reads back at any time (`revoke`): a reader waiting in `poll` wakes at once, and a revoked
/// lease is not handed back (the exchange is over).
///
/// A reader that never waits in `read` (an event loop polling a descriptor) has the socket, the
/// revoke bell and a silence timer put in its poll set (`watch`): it is woken when there is
/// something to read, when the loop takes the reads back, and when the idle limit has passed since
/// its first `read` that found nothing, which then ends the lease as silent.
///
/// Threads: `read` is the consumer's, one call at a time; `revoke` and `taken` are the loop's.
package final class ReadLease: @unchecked Sendable {
    /// Why a lease ended.
    package enum End: Equatable, Sendable {
        /// The reader took the whole budget: the loop reads the body's last byte.
        case budgetUsed
        /// The peer closed before the body was whole.
        case closed
        /// The socket failed (errno).
        case failed(Int32)
        /// The reader waited the idle limit and nothing came.
        case silent
        /// The loop took the reads back.
        case revoked
    }

    /// What one `read` found.
    package enum Read: Equatable, Sendable {
        /// That many bytes, at the start of the reader's buffer.
        case bytes(Int)
        /// Nothing within the reader's timeout (the lease goes on).
        case again
        /// The lease is over (the reader goes back to what the loop delivers).
        case over(End)
    }

    /// The reader's duplicate of the socket, and the eventfd `revoke` rings.
    private let socket: Int32
    private let wakeup: Int32
    /// How many bytes the reader may take.
    package let budget: UInt64
    private let returned: @Sendable (ReadLease) -> Void

    private let lock = Lock()
    // Under `lock`:
    private var _taken: UInt64 = 0
    private var revoked = false
    private var _end: End?
    // The reader's alone:
    /// The idle limit, counted only while the reader waits (see `LeaseSilence`).
    private var silence: LeaseSilence
    /// An end met while filling a buffer: reported by the next read, after the bytes.
    private var deferredEnd: End?
    /// `watch`'s epoll set and the silence timer in it (-1: the reader waits in `read` instead).
    private var watchSet: Int32 = -1
    private var silenceTimer: Int32 = -1

    /// Lends the reads of `descriptor` (the connection's socket, left open and untouched) for
    /// `budget` bytes; `returned` is called from the reading thread once the lease ends by itself
    /// (not after `revoke`). Nil when the duplicate or the eventfd cannot be made (no lease then).
    package init?(socket descriptor: Int32, budget: UInt64, idleLimitMillis: UInt64,
                  returned: @escaping @Sendable (ReadLease) -> Void) {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        let bell = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard bell >= 0 else {
            close(copy)
            return nil
        }
        socket = copy
        wakeup = bell
        self.budget = budget
        silence = LeaseSilence(limitMillis: idleLimitMillis)
        self.returned = returned
    }

    deinit {
        if _end == nil { closeDescriptors() }
    }

    /// Before the lease is handed to its reader: puts the socket, the revoke bell and a silence
    /// timer in the epoll instance `set`, which the reader's event loop polls instead of waiting in
    /// `read`. False (nothing added) when the timer or a registration could not be made.
    package func watch(in set: Int32) -> Bool {
        lock.withLock { () -> Bool in
            guard _end == nil, watchSet < 0 else { return false }
            let timer = courier_timer_create()
            guard timer >= 0 else { return false }
            var added: [Int32] = []
            for descriptor in [socket, wakeup, timer] {
                guard courier_poll_set_add(set, descriptor) == 0 else {
                    for done in added { courier_poll_set_remove(set, done) }
                    close(timer)
                    return false
                }
                added.append(descriptor)
            }
            watchSet = set
            silenceTimer = timer
            return true
        }
    }

    /// Bytes the reader has taken so far (all of them once the lease has ended).
    package var taken: UInt64 { lock.withLock { _taken } }

    /// Why the lease ended; nil while it runs.
    package var end: End? { lock.withLock { _end } }

    /// Loop thread: takes the reads back. A reader waiting in `poll` wakes at once; its next
    /// `read` says `.over(.revoked)`. Nothing is handed back.
    package func revoke() {
        lock.withLock {
            guard _end == nil, !revoked else { return }
            revoked = true
            _ = eventfd_write(wakeup, 1)
        }
    }

    /// Reading thread: up to `capacity` bytes (never beyond the budget) into `buffer`, waiting
    /// up to `timeoutMillis` (0: not at all, negative: until something happens) for the first.
    /// Once bytes came, it takes what else the kernel already holds without waiting, so a fast
    /// sender fills the buffer in one call and a slow one is not held back.
    package func read(into buffer: UnsafeMutableRawPointer, capacity: Int, timeoutMillis: Int) -> Read {
        if let over = lock.withLock({ () -> End? in revoked ? .revoked : _end }) { return .over(conclude(over)) }
        if let end = deferredEnd { return .over(conclude(end)) }
        let deadline = timeoutMillis > 0 ? monotonicNanos() &+ UInt64(timeoutMillis) &* 1_000_000 : 0
        while true {
            let left = budget - taken
            if left == 0 { return .over(conclude(.budgetUsed)) }
            let n = recv(socket, buffer, Int(min(UInt64(capacity), left)), Int32(MSG_DONTWAIT))
            if n > 0 {
                silence.heard()
                return .bytes(fill(buffer, capacity: capacity, after: n, left: left))
            }
            if n == 0 { return .over(conclude(.closed)) }
            let failure = errno
            if failure == EINTR { continue }
            guard failure == EAGAIN || failure == EWOULDBLOCK else { return .over(conclude(.failed(failure))) }
            if timeoutMillis == 0 { return quietRead() }
            switch wait(until: deadline) {
            case .readable: continue
            case .timedOut: return .again
            case .over(let end): return .over(conclude(end))
            }
        }
    }

    /// After `got` bytes: what else the kernel holds, up to the buffer and the budget, without
    /// waiting. An end met here waits for the next read.
    private func fill(_ buffer: UnsafeMutableRawPointer, capacity: Int, after got: Int, left: UInt64) -> Int {
        var got = got
        while got < capacity, UInt64(got) < left {
            let more = recv(socket, buffer + got, Int(min(UInt64(capacity - got), left - UInt64(got))), Int32(MSG_DONTWAIT))
            if more > 0 {
                got += more
                continue
            }
            if more == 0 {
                deferredEnd = .closed
            } else if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                deferredEnd = .failed(errno)
            }
            break
        }
        lock.withLock { _taken &+= UInt64(got) }
        return got
    }

    /// A read that does not wait found nothing: for a watched lease, silence counts from the first
    /// such read since the last byte, and the timer wakes the reader when the limit is reached.
    private func quietRead() -> Read {
        guard watchSet >= 0, silence.limit != .max else { return .again }
        guard let left = silence.foundNothing(at: monotonicNanos()) else { return .over(conclude(.silent)) }
        // (Setting the timer also clears an expiry that woke the reader.)
        courier_timer_set(silenceTimer, left)
        return .again
    }

    private enum Wait {
        case readable
        case timedOut
        case over(End)
    }

    /// Waits for the socket (or the revoke bell) until the monotonic `deadline` (0: no deadline)
    /// or the idle limit, whichever comes first.
    private func wait(until deadline: UInt64) -> Wait {
        var fds = (pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0))
        let start = monotonicNanos()
        var waitNanos: UInt64 = .max
        if deadline != 0 { waitNanos = deadline > start ? deadline - start : 0 }
        waitNanos = min(waitNanos, silence.allowance)
        // Rounded up: a wait cut short by rounding would spin.
        let millis = waitNanos == .max ? -1 : Int32(clamping: (waitNanos + 999_999) / 1_000_000)
        let ready = withUnsafeMutablePointer(to: &fds) { $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, millis) } }
        let silent = silence.waited(monotonicNanos() - start)
        if ready < 0 { return errno == EINTR ? .readable : .over(.failed(errno)) }
        if fds.1.revents != 0 { return .over(.revoked) }
        if fds.0.revents != 0 { return .readable }
        if silent { return .over(.silent) }
        return deadline != 0 && monotonicNanos() >= deadline ? .timedOut : .readable
    }

    /// The lease ends with `end` (the first end wins): the descriptors close, and unless the loop
    /// revoked it, the lease goes back to the loop.
    private func conclude(_ end: End) -> End {
        let (settled, giveBack) = lock.withLock { () -> (End, Bool) in
            if let already = _end { return (already, false) }
            let settled: End = revoked ? .revoked : end
            _end = settled
            closeDescriptors()
            return (settled, settled != .revoked)
        }
        if giveBack { returned(self) }
        return settled
    }

    private func closeDescriptors() {
        if watchSet >= 0 {
            // (Out of the set before closing: the loop's own descriptor keeps the socket open,
            // and a closed duplicate would stay registered and keep waking the reader.)
            for descriptor in [socket, wakeup, silenceTimer] { courier_poll_set_remove(watchSet, descriptor) }
            close(silenceTimer)
        }
        close(socket)
        close(wakeup)
    }
}

/// A body consumer on a thread of its own that can take a connection's reads (see `ReadLease`).
package protocol ReadLeaseTaker: AnyObject {
    /// Loop thread: takes `lease` (true) or declines it (false: the loop keeps reading).
    func take(_ lease: ReadLease) -> Bool
}
