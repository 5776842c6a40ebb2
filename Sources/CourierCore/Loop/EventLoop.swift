import CUV
import Glibc

/// Work handed to the loop thread.
package enum LoopJob {
    /// Put a transfer into the shared queue.
    case submit(Transfer)
    /// Cancel a transfer wherever it is.
    case cancel(Transfer)
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
        uvLoop = loop
        wakeup = handle
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
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
        uv_run(uvLoop, UV_RUN_DEFAULT)
        uv_loop_close(uvLoop)
        uvLoop.deallocate()
        wakeup.deallocate()
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
        drain()
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(wakeup)), nil)
    }

    /// Waits for the loop thread to end and frees the loop. Never call on the loop thread.
    package func join() {
        precondition(!isLoopThread, "joining the loop from its own thread would deadlock")
        pthread_join(thread, nil)
        let status = uv_loop_close(uvLoop)
        assert(status == 0, "handles left open at shutdown: \(String(cString: uv_err_name(status)))")
        uvLoop.deallocate()
        wakeup.deallocate()
    }

    /// The loop's cached millisecond clock (updated once per loop iteration, no system call).
    @inline(__always)
    package var nowMillis: UInt64 { uv_now(uvLoop) }
}
