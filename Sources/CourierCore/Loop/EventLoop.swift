import CUV
import Glibc

/// Work handed to the loop thread.
package enum LoopJob {
    /// Put a transfer into the shared queue.
    case submit(Transfer)
    /// Cancel a transfer wherever it is.
    case cancel(Transfer)
    /// The transfer's streaming consumer can take more.
    case resume(Transfer)
    /// Run a closure on the loop thread (configuration changes, statistics, shutdown).
    case run(() -> Void)
}

/// One libuv loop on one dedicated thread, and the only door into it from other threads.
///
/// Other threads append to a locked inbox and wake the loop with `uv_async_send` only when the inbox
/// goes from empty to non-empty: libuv coalesces wakeups anyway, but not calling it saves a system
/// call per submission under load (NIO's `_pendingTaskPop` trick). The loop swaps the inbox for an
/// empty array and drains it, so the lock is held for a pointer swap, never while work runs.
/// Work submitted *on* the loop thread skips the inbox entirely.
package final class EventLoop: @unchecked Sendable {
    package let uvLoop: UnsafeMutablePointer<uv_loop_t>
    private let wakeup: UnsafeMutablePointer<uv_async_t>
    private let lock = Lock()
    @exclusivity(unchecked) private var inbox: [LoopJob] = []
    @exclusivity(unchecked) private var spare: [LoopJob] = []
    @exclusivity(unchecked) private var thread = pthread_t()
    private let perform: (LoopJob) -> Void
    /// Set once the thread runs; read by `isLoopThread` from any thread (a stale read only ever
    /// answers "no", which routes through the inbox and stays correct).
    @exclusivity(unchecked) private var loopThread: pthread_t?
    @exclusivity(unchecked) private var startHook: (() -> Void)?
    /// Work the loop thread put off until the end of the current turn (`deferOnLoopThread`), run
    /// by an idle handle that is active only while something waits.
    private let deferHandle: UnsafeMutablePointer<uv_idle_t>
    @exclusivity(unchecked) private var deferred: [() -> Void] = []
    @exclusivity(unchecked) private var deferredSpare: [() -> Void] = []
    @exclusivity(unchecked) private var closing = false

    /// Creates the loop; `perform` runs every job, on the loop thread. Fails with
    /// `.loopUnavailable` when the system refuses the loop's descriptors (no file descriptors
    /// left): the host process gets an error, never an abort.
    package init(perform: @escaping (LoopJob) -> Void) throws(CourierError) {
        self.perform = perform
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let status = uv_loop_init(loop)
        guard status == 0 else {
            loop.deallocate()
            throw CourierError(.loopUnavailable, "uv_loop_init: \(String(cString: uv_strerror(status)))")
        }
        let handle = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
        let asyncStatus = uv_async_init(loop, handle) { handle in
            Unmanaged<EventLoop>.fromOpaque(handle!.pointee.data).takeUnretainedValue().drain()
        }
        guard asyncStatus == 0 else {
            handle.deallocate()
            uv_loop_close(loop)
            loop.deallocate()
            throw CourierError(.loopUnavailable, "uv_async_init: \(String(cString: uv_strerror(asyncStatus)))")
        }
        let idle = UnsafeMutablePointer<uv_idle_t>.allocate(capacity: 1)
        uv_idle_init(loop, idle)
        LoopReadBuffers.attach(to: loop)
        uvLoop = loop
        wakeup = handle
        deferHandle = idle
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        deferHandle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Runs `body` on the loop thread after the current callback returns, in the same loop turn or
    /// the next: for work that must not run inside its caller's stack (a response the cache
    /// answered inside a completion handler that asked for it), without the inbox's lock or a
    /// wakeup system call. Loop thread only.
    package func deferOnLoopThread(_ body: @escaping () -> Void) {
        if closing {
            body()
            return
        }
        deferred.append(body)
        if deferred.count == 1 {
            uv_idle_start(deferHandle) { handle in
                Unmanaged<EventLoop>.fromOpaque(handle!.pointee.data).takeUnretainedValue().runDeferred()
            }
        }
    }

    /// Runs what was deferred so far; work deferred meanwhile waits for the next turn.
    private func runDeferred() {
        var jobs = deferred
        deferred = deferredSpare
        deferredSpare = []
        // Work the jobs defer starts the handle again (`deferOnLoopThread`).
        uv_idle_stop(deferHandle)
        for job in jobs { job() }
        jobs.removeAll(keepingCapacity: true)
        deferredSpare = jobs
    }

    /// Starts the thread that runs the loop until every handle is closed. `onThread` runs first,
    /// on the new thread. Fails with `.loopUnavailable` when no thread can be created; the loop
    /// is then released and must not be used.
    package func start(onThread: @escaping () -> Void) throws(CourierError) {
        startHook = onThread
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            let loop = Unmanaged<EventLoop>.fromOpaque(context!).takeRetainedValue()
            loop.loopThread = pthread_self()
            courier_name_thread("courier-loop")
            // A write to a socket the peer has closed raises SIGPIPE in the thread that wrote,
            // whose default action ends the process (an HTTP/2 connection writes WINDOW_UPDATEs
            // and PING ACKs while a server closes it). Blocked on this thread only, the write
            // returns EPIPE, which the stream reports; the application's own disposition stays.
            var pipe = sigset_t()
            sigemptyset(&pipe)
            sigaddset(&pipe, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipe, nil)
            loop.startHook?()
            loop.startHook = nil
            uv_run(loop.uvLoop, UV_RUN_DEFAULT)
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            startHook = nil
            abandon()
            throw CourierError(.loopUnavailable, "pthread_create: \(String(cString: strerror(result)))")
        }
    }

    /// Releases a loop whose thread never started: every handle created on it (by the caller,
    /// before `start`) must already be closing; this runs their close callbacks and frees it.
    private func abandon() {
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(wakeup)), nil)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(deferHandle)), nil)
        uv_run(uvLoop, UV_RUN_DEFAULT)
        uv_loop_close(uvLoop)
        LoopReadBuffers.detach(from: uvLoop)
        uvLoop.deallocate()
        wakeup.deallocate()
        deferHandle.deallocate()
    }

    /// Whether the caller runs on the loop thread.
    @inline(__always)
    package var isLoopThread: Bool {
        guard let loopThread else { return false }
        return pthread_equal(loopThread, pthread_self()) != 0
    }

    /// Hands a job to the loop thread. Safe from any thread.
    package func enqueue(_ job: LoopJob) {
        let wasEmpty = lock.withLock { () -> Bool in
            inbox.append(job)
            return inbox.count == 1
        }
        if wasEmpty { uv_async_send(wakeup) }
    }

    private func drain() {
        while true {
            // Swap buffers so neither side allocates once both have grown: the inbox gets the
            // emptied array of the previous round, the loop takes the full one.
            var jobs = lock.withLock { () -> [LoopJob] in
                let taken = inbox
                inbox = spare
                spare = []
                return taken
            }
            if jobs.isEmpty { spare = jobs; return }
            for job in jobs { perform(job) }
            jobs.removeAll(keepingCapacity: true)
            spare = jobs
        }
    }

    /// Closes the wakeup handle; the loop returns once every other handle is closed too.
    /// Loop thread only, as the last step of shutdown.
    package func closeWakeup() {
        repeat {
            drain()
            runDeferred()
        } while !deferred.isEmpty
        closing = true
        uv_idle_stop(deferHandle)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(wakeup)), nil)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(deferHandle)), nil)
    }

    /// Waits for the loop thread to end and frees the loop. Never call on the loop thread.
    package func join() {
        precondition(!isLoopThread, "joining the loop from its own thread would deadlock")
        pthread_join(thread, nil)
        let status = uv_loop_close(uvLoop)
        assert(status == 0, "handles left open at shutdown: \(String(cString: uv_err_name(status)))")
        LoopReadBuffers.detach(from: uvLoop)
        uvLoop.deallocate()
        wakeup.deallocate()
        deferHandle.deallocate()
    }

    /// The loop's cached millisecond clock (updated once per loop iteration, no system call).
    @inline(__always)
    package var nowMillis: UInt64 { uv_now(uvLoop) }
}
