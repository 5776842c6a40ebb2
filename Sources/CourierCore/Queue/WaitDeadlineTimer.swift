import CUV

/// One timer for the deadlines of transfers that hold no connection: the queue wait, and the
/// total deadline while waiting for a connection. (A running transfer's deadlines are its
/// connection's timer.)
///
/// Armed lazily like the connections' timers: arming for a later deadline than the one pending
/// does nothing; when the timer fires, the executor sweeps the live transfers, ends those whose
/// deadline passed and arms again for the earliest left.
final class WaitDeadlineTimer {
    private let uvLoop: UnsafeMutablePointer<uv_loop_t>
    private let timer: UnsafeMutablePointer<uv_timer_t>
    private var armedFor: UInt64 = 0
    private let fired: () -> Void

    /// A timer on `uvLoop` that calls `fired` (on the loop thread) when a deadline may have passed.
    init(uvLoop: UnsafeMutablePointer<uv_loop_t>, fired: @escaping () -> Void) {
        self.uvLoop = uvLoop
        self.fired = fired
        timer = .allocate(capacity: 1)
        uv_timer_init(uvLoop, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Makes sure the timer fires by `deadline` (loop milliseconds; `.max` asks for nothing).
    func arm(_ deadline: UInt64) {
        guard deadline != .max, armedFor == 0 || deadline < armedFor else { return }
        let now = uv_now(uvLoop)
        armedFor = deadline
        uv_timer_start(timer, { timer in
            let owner = Unmanaged<WaitDeadlineTimer>.fromOpaque(timer!.pointee.data).takeUnretainedValue()
            owner.armedFor = 0
            owner.fired()
        }, deadline > now ? deadline - now : 0, 0)
    }

    /// Stops and closes the timer (shutdown); the handle's memory goes in its close callback.
    func close() {
        uv_timer_stop(timer)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { UnsafeMutableRawPointer($0!).deallocate() }
    }
}
