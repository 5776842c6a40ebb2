import CourierCore
import Dispatch
import Glibc

// courier_group_*: requests that run together through the shared queue and end with one
// completion (OCNet's group queue), all-settled or fail-fast.

public typealias courier_group_done_fn = @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void

/// A group handle: its members (requests the caller keeps owning) and, once they ran, each
/// member's code and response.
final class CGroup: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.group
    let failFast: Bool
    private let lock = Lock()
    private var members: [CRequest] = []
    private var codes: [Int32] = []
    private var responses: [OpaquePointer?] = []
    private var left = 0
    private var started = false
    private(set) var firstFailure = -1
    private var finished: (() -> Void)?

    init(failFast: Bool) { self.failFast = failFast }

    deinit {
        for case let response? in responses { releaseHandle(response) }
    }

    func add(_ request: CRequest) -> Int32 {
        lock.withLock { () -> Int32 in
            guard !started else { return CourierError.Code.misuse.c }
            members.append(request)
            return COURIER_OK
        }
    }

    /// Sends every member; `finished` runs once, on the loop thread, after the last one.
    func send(finished: @escaping () -> Void) -> Int32 {
        let members = lock.withLock { () -> [CRequest]? in
            guard !started else { return nil }
            started = true
            codes = Array(repeating: COURIER_OK, count: self.members.count)
            responses = Array(repeating: nil, count: self.members.count)
            left = self.members.count
            self.finished = finished
            return self.members
        }
        guard let members else { return CourierError.Code.misuse.c }
        if members.isEmpty {
            lock.withLock { self.finished = nil }
            onLoopThread(finished)
            return COURIER_OK
        }
        for (index, member) in members.enumerated() {
            let report: @Sendable (OpaquePointer?, Int32) -> Void = { [self] response, code in
                memberEnded(index, response, code)
            }
            let code = member.send(.handler(Box(report)))
            if code != COURIER_OK { memberEnded(index, nil, code) }
        }
        return COURIER_OK
    }

    private func memberEnded(_ index: Int, _ response: OpaquePointer?, _ code: Int32) {
        let (first, done) = lock.withLock { () -> (Bool, (() -> Void)?) in
            codes[index] = code
            responses[index] = response
            left -= 1
            var first = false
            if code != COURIER_OK, firstFailure < 0 {
                firstFailure = index
                first = true
            }
            guard left == 0 else { return (first, nil) }
            let done = finished
            finished = nil
            return (first, done)
        }
        if first, failFast {
            for (other, member) in lock.withLock({ members }).enumerated() where other != index { member.cancel() }
        }
        if let done { onLoopThread(done) }
    }

    func cancel() {
        for member in lock.withLock({ members }) { member.cancel() }
    }

    var count: Int { lock.withLock { members.count } }

    /// A member's code and response (the response stays the group's).
    func result(_ index: Int) -> (Int32, OpaquePointer?)? {
        lock.withLock { index >= 0 && index < codes.count && left == 0 ? (codes[index], responses[index]) : nil }
    }
}

private func group(_ handle: OpaquePointer?) -> CGroup? {
    object(handle, tag: HandleTag.group, as: CGroup.self)
}

@_cdecl("courier_group_create")
public func courier_group_create(_ mode: Int32, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return CourierError.Code.misuse.c }
    out.pointee = nil
    guard mode == 0 || mode == 1 else { return CourierError.Code.invalidArgument.c }
    out.pointee = retainedHandle(CGroup(failFast: mode == 1))
    return COURIER_OK
}

@_cdecl("courier_group_add")
public func courier_group_add(_ handle: OpaquePointer?, _ requestHandle: OpaquePointer?) -> Int32 {
    guard let group = group(handle), let member = request(requestHandle) else { return CourierError.Code.misuse.c }
    return group.add(member)
}

@_cdecl("courier_group_send")
public func courier_group_send(_ handle: OpaquePointer?, _ done: courier_group_done_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let group = group(handle) else { return CourierError.Code.misuse.c }
    let borrowed = UncheckedSendable(handle)
    return group.send { [group] in done?(borrowed.value, Int32(group.firstFailure), user) }
}

@_cdecl("courier_group_perform")
public func courier_group_perform(_ handle: OpaquePointer?) -> Int32 {
    guard let group = group(handle) else { return CourierError.Code.misuse.c }
    let code = sendAndWait { group.send(finished: $0) }
    guard code == COURIER_OK else { return code }
    return group.firstFailure < 0 ? COURIER_OK : (group.result(group.firstFailure)?.0 ?? COURIER_OK)
}

@_cdecl("courier_group_result")
public func courier_group_result(_ handle: OpaquePointer?, _ index: Int, _ response: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    response?.pointee = nil
    guard let group = group(handle) else { return CourierError.Code.misuse.c }
    guard let (code, made) = group.result(index) else { return CourierError.Code.invalidArgument.c }
    response?.pointee = made
    return code
}

@_cdecl("courier_group_count")
public func courier_group_count(_ handle: OpaquePointer?) -> Int {
    group(handle)?.count ?? 0
}

@_cdecl("courier_group_cancel")
public func courier_group_cancel(_ handle: OpaquePointer?) -> Int32 {
    guard let group = group(handle) else { return CourierError.Code.misuse.c }
    group.cancel()
    return COURIER_OK
}

@_cdecl("courier_group_free")
public func courier_group_free(_ handle: OpaquePointer?) {
    guard let group = group(handle), let handle else { return }
    group.tag = HandleTag.dead
    releaseHandle(handle)
}
