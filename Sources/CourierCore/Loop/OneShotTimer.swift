import CUV

/// Runs a closure once on the loop thread after a delay (the CLI's `--rate`: the next transfer
/// starts when its turn comes). The handle closes itself after firing; a pending one keeps the
/// loop running until it fires.
enum OneShotTimer {
    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Starts the timer on `uvLoop` (loop thread only).
    static func start(on uvLoop: UnsafeMutablePointer<uv_loop_t>, after milliseconds: UInt64, _ body: @escaping () -> Void) {
        let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(uvLoop, timer)
        timer.pointee.data = Unmanaged.passRetained(Job(body)).toOpaque()
        uv_timer_start(timer, { timer in
            let job = Unmanaged<Job>.fromOpaque(timer!.pointee.data).takeRetainedValue()
            uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { UnsafeMutableRawPointer($0!).deallocate() }
            job.body()
        }, milliseconds, 0)
    }
}
