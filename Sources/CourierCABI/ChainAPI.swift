import CourierCore
import Dispatch
import Glibc

// courier_chain_*: requests that run one after another (OCNet's chain queue): each starts when
// the previous one succeeded, after a hook that may alter it or stop the chain.

public typealias courier_chain_next_fn = @convention(c) (OpaquePointer?, Int, OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Int32
public typealias courier_chain_done_fn = @convention(c) (OpaquePointer?, Int32, Int32, UnsafeMutableRawPointer?) -> Void

/// A chain handle: its steps (requests the caller keeps owning) and, as they run, each one's code
/// and response.
final class CChain: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.chain
    private let lock = Lock()
    private var steps: [CRequest] = []
    private var codes: [Int32] = []
    private var responses: [OpaquePointer?] = []
    private var started = false
    private var ended = false
    private var cancelled = false
    private var running: CRequest?
    private(set) var failedStep = -1
    private(set) var stoppedEarly = false
    private var next: (courier_chain_next_fn, UnsafeMutableRawPointer?)?
    private var finished: (() -> Void)?

    deinit {
        for case let response? in responses { releaseHandle(response) }
    }

    func add(_ request: CRequest) -> Int32 {
        lock.withLock { () -> Int32 in
            guard !started else { return CourierError.Code.misuse.c }
            steps.append(request)
            return COURIER_OK
        }
    }

    func setNext(_ hook: courier_chain_next_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
        lock.withLock { () -> Int32 in
            guard !started else { return CourierError.Code.misuse.c }
            next = hook.map { ($0, user) }
            return COURIER_OK
        }
    }

    /// Sends the first step; `finished` runs once, on the loop thread, when the chain ends.
    func send(handle: OpaquePointer, finished: @escaping () -> Void) -> Int32 {
        let first = lock.withLock { () -> CRequest?? in
            guard !started else { return nil }
            started = true
            self.finished = finished
            return .some(steps.first)
        }
        guard let first else { return CourierError.Code.misuse.c }
        guard let first else {
            end()
            return COURIER_OK
        }
        start(first, index: 0, handle: UncheckedSendable(handle))
        return COURIER_OK
    }

    private func start(_ step: CRequest, index: Int, handle: UncheckedSendable<OpaquePointer>) {
        let stop = lock.withLock { () -> Bool in
            if cancelled { return true }
            running = step
            return false
        }
        if stop {
            record(index, nil, CourierError.Code.cancelled.c)
            end()
            return
        }
        let report: @Sendable (OpaquePointer?, Int32) -> Void = { [self] response, code in
            stepEnded(index, response, code, handle: handle)
        }
        let code = step.send(.handler(Box(report)))
        if code != COURIER_OK { stepEnded(index, nil, code, handle: handle) }
    }

    private func record(_ index: Int, _ response: OpaquePointer?, _ code: Int32) {
        lock.withLock {
            codes.append(code)
            responses.append(response)
            running = nil
            if code != COURIER_OK, failedStep < 0 { failedStep = index }
        }
    }

    private func stepEnded(_ index: Int, _ response: OpaquePointer?, _ code: Int32, handle: UncheckedSendable<OpaquePointer>) {
        record(index, response, code)
        let (following, hook) = lock.withLock { () -> (CRequest?, (courier_chain_next_fn, UnsafeMutableRawPointer?)?) in
            (index + 1 < steps.count ? steps[index + 1] : nil, next)
        }
        guard code == COURIER_OK, let following else {
            end()
            return
        }
        if let (hook, user) = hook, hook(handle.value, index, response, borrowedHandle(following), user) != 0 {
            lock.withLock { stoppedEarly = true }
            end()
            return
        }
        start(following, index: index + 1, handle: handle)
    }

    private func end() {
        let done = lock.withLock { () -> (() -> Void)? in
            guard !ended else { return nil }
            ended = true
            defer { finished = nil }
            return finished
        }
        if let done { onLoopThread(done) }
    }

    func cancel() {
        let current = lock.withLock { () -> CRequest? in
            cancelled = true
            return running
        }
        current?.cancel()
    }

    var count: Int { lock.withLock { steps.count } }
    /// How many steps ran (so far).
    var ran: Int { lock.withLock { codes.count } }

    /// A step's code and response (the response stays the chain's), once the chain ended.
    func result(_ index: Int) -> (Int32, OpaquePointer?)? {
        lock.withLock { ended && index >= 0 && index < codes.count ? (codes[index], responses[index]) : nil }
    }
}

private func chain(_ handle: OpaquePointer?) -> CChain? {
    object(handle, tag: HandleTag.chain, as: CChain.self)
}

@_cdecl("courier_chain_create")
public func courier_chain_create(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return CourierError.Code.misuse.c }
    out.pointee = retainedHandle(CChain())
    return COURIER_OK
}

@_cdecl("courier_chain_add")
public func courier_chain_add(_ handle: OpaquePointer?, _ requestHandle: OpaquePointer?) -> Int32 {
    guard let chain = chain(handle), let step = request(requestHandle) else { return CourierError.Code.misuse.c }
    return chain.add(step)
}

@_cdecl("courier_chain_set_next")
public func courier_chain_set_next(_ handle: OpaquePointer?, _ next: courier_chain_next_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let chain = chain(handle) else { return CourierError.Code.misuse.c }
    return chain.setNext(next, user)
}

@_cdecl("courier_chain_send")
public func courier_chain_send(_ handle: OpaquePointer?, _ done: courier_chain_done_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let chain = chain(handle), let handle else { return CourierError.Code.misuse.c }
    let borrowed = UncheckedSendable(handle)
    return chain.send(handle: handle) { [chain] in
        done?(borrowed.value, Int32(chain.failedStep), chain.stoppedEarly ? 1 : 0, user)
    }
}

@_cdecl("courier_chain_perform")
public func courier_chain_perform(_ handle: OpaquePointer?) -> Int32 {
    guard let chain = chain(handle), let handle else { return CourierError.Code.misuse.c }
    let code = sendAndWait { chain.send(handle: handle, finished: $0) }
    guard code == COURIER_OK else { return code }
    return chain.failedStep < 0 ? COURIER_OK : (chain.result(chain.failedStep)?.0 ?? COURIER_OK)
}

@_cdecl("courier_chain_result")
public func courier_chain_result(_ handle: OpaquePointer?, _ index: Int, _ response: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    response?.pointee = nil
    guard let chain = chain(handle) else { return CourierError.Code.misuse.c }
    guard let (code, made) = chain.result(index) else { return CourierError.Code.invalidArgument.c }
    response?.pointee = made
    return code
}

@_cdecl("courier_chain_count")
public func courier_chain_count(_ handle: OpaquePointer?) -> Int {
    chain(handle)?.count ?? 0
}

@_cdecl("courier_chain_ran")
public func courier_chain_ran(_ handle: OpaquePointer?) -> Int {
    chain(handle)?.ran ?? 0
}

@_cdecl("courier_chain_cancel")
public func courier_chain_cancel(_ handle: OpaquePointer?) -> Int32 {
    guard let chain = chain(handle) else { return CourierError.Code.misuse.c }
    chain.cancel()
    return COURIER_OK
}

@_cdecl("courier_chain_free")
public func courier_chain_free(_ handle: OpaquePointer?) {
    guard let chain = chain(handle), let handle else { return }
    chain.tag = HandleTag.dead
    releaseHandle(handle)
}
