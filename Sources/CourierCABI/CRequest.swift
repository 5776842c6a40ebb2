import Courier
import CourierCore
import Dispatch

public typealias courier_done_fn = @convention(c) (OpaquePointer?, OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void
public typealias courier_progress_fn = @convention(c) (OpaquePointer?, Int32, UInt64, Int64, UnsafeMutableRawPointer?) -> Void
public typealias courier_activity_fn = @convention(c) (Int32, Int32, UnsafeMutableRawPointer?) -> Void

/// `courier_request`: a Swift `Operation` of the request's engine, so C requests take exactly the
/// path Swift requests take (same queue, pool, redirects, decoding), plus how the end is reported
/// to C and the handle's own error message.
final class CRequest: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.request
    let engine: CEngine
    let operation: Operation
    @exclusivity(unchecked) var progress: (courier_progress_fn, UnsafeMutableRawPointer?)?
    @exclusivity(unchecked) private var errorMessage: OwnedCString?

    /// How the end is reported.
    enum Delivery: @unchecked Sendable {
        case callback(courier_done_fn, UnsafeMutableRawPointer?)
        case completionQueue
        case wait(DispatchSemaphore)
    }

    // Shared between the caller's thread and the loop thread.
    private let lock = Lock()
    private var sent = false
    private var freed = false
    /// Inside `operation.start()`: an outcome reported now is deferred, so a callback never runs
    /// inside courier_request_send and always on the loop thread.
    private var starting = false
    /// Outcome of a blocking `courier_request_perform`.
    @exclusivity(unchecked) private var waitResult: (response: OpaquePointer?, code: Int32) = (nil, 0)

    init(engine: CEngine, operation: Operation) {
        self.engine = engine
        self.operation = operation
    }

    var isFreed: Bool { lock.withLock { freed } }
    var wasSent: Bool { lock.withLock { sent } }

    /// The message for `courier_request_errmsg`.
    var errorText: UnsafePointer<CChar> {
        if let errorMessage { return UnsafePointer(errorMessage.pointer) }
        return courierStaticString(COURIER_OK)
    }

    /// Records `error` as the handle's message and returns its code.
    @discardableResult
    func record(_ error: CourierError) -> Int32 {
        errorMessage = OwnedCString(error.message)
        return error.code.c
    }

    /// Hands the operation to the shared queue; the outcome goes where `delivery` says.
    func send(_ delivery: Delivery) -> Int32 {
        let first = lock.withLock { () -> Bool in
            defer { sent = true }
            return !sent
        }
        guard first else { return record(CourierError(.misuse, "the request was already sent")) }
        lock.withLock { starting = true }
        defer { lock.withLock { starting = false } }
        if let progress {
            let target = UncheckedSendable(progress)
            operation.onUploadProgress { [self] p in reportProgress(target.value, direction: 0, p) }
            operation.onDownloadProgress { [self] p in reportProgress(target.value, direction: 1, p) }
        }
        // The handler keeps the request alive until the operation ends, even if C frees it.
        operation.onFinish { [self] result in finish(result, delivery) }
        operation.start()
        return COURIER_OK
    }

    private func reportProgress(_ progress: (courier_progress_fn, UnsafeMutableRawPointer?), direction: Int32, _ p: TransferProgress) {
        if isFreed { return }
        progress.0(borrowedHandle(self), direction, p.completed, p.expected.map { Int64($0) } ?? -1, progress.1)
    }

    /// `courier_request_perform`: send and wait (never on the loop thread).
    func perform() -> (response: OpaquePointer?, code: Int32) {
        let done = DispatchSemaphore(value: 0)
        let code = send(.wait(done))
        if code != COURIER_OK { return (nil, code) }
        done.wait()
        return waitResult
    }

    func cancel() { operation.cancel() }

    /// The C handle is gone: cancel, and report nothing more.
    func markFreed() {
        lock.withLock { freed = true }
        operation.cancel()
    }

    /// The operation ended: make the response handle and report, on the loop thread.
    private func finish(_ result: Result<Response, CourierError>, _ delivery: Delivery) {
        if lock.withLock({ starting }) || !Runtime.shared.isOnLoopThread {
            // Failed before reaching the queue (a file that cannot be opened, a bad header), or
            // completed while send() has not returned yet.
            let deferred = UncheckedSendable((self, result, delivery))
            Runtime.shared.execute { deferred.value.0.report(deferred.value.1, deferred.value.2) }
            return
        }
        report(result, delivery)
    }

    private func report(_ result: Result<Response, CourierError>, _ delivery: Delivery) {
        if isFreed { return }
        var code = COURIER_OK
        var response: Response?
        switch result {
        case .success(let r):
            errorMessage = nil
            response = r
        case .failure(let error):
            code = record(error)
            response = operation.response
        }
        let handle = response.map { retainedHandle(CResponse($0)) }
        switch delivery {
        case .callback(let done, let user):
            done(borrowedHandle(self), handle, code, user)
        case .completionQueue:
            if !engine.pushCompletion(CEngine.Completed(request: self, response: handle, code: code)), let handle {
                releaseHandle(handle)
            }
        case .wait(let semaphore):
            waitResult = (handle, code)
            semaphore.signal()
        }
    }
}
