import Courier
import CourierCore

// courier_request_* for retries (RetryPolicy) and what a response says about them.

public typealias courier_retry_fn = @convention(c) (OpaquePointer?, Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32

/// COURIER_RETRY_* flags.
private let retryBackoff: UInt32 = 1, retryJitter: UInt32 = 2, retryAllErrors: UInt32 = 4, retryNonIdempotent: UInt32 = 8,
            retryNoBudget: UInt32 = 16

@_cdecl("courier_request_set_retry")
public func courier_request_set_retry(_ handle: OpaquePointer?, _ count: Int32, _ intervals: UnsafePointer<Int64>?,
                                      _ intervalCount: Int, _ flags: UInt32) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard count >= 0 else { throw invalid("negative retry count") }
        guard intervalCount >= 0, intervals != nil || intervalCount == 0 else { throw invalid("NULL intervals with a non-zero count") }
        guard flags & ~(retryBackoff | retryJitter | retryAllErrors | retryNonIdempotent | retryNoBudget) == 0 else { throw invalid("unknown retry flags \(flags)") }
        var waits: [Nanoseconds] = []
        for index in 0..<intervalCount {
            let milliseconds = intervals![index]
            guard milliseconds >= 0 else { throw invalid("negative retry interval") }
            waits.append(.milliseconds(UInt64(milliseconds)))
        }
        var policy = r.draft.options.retry
        policy.count = Int(count)
        policy.intervals = waits  // (none: a second, the policy's default)
        policy.exponentialBackoff = flags & retryBackoff != 0
        policy.jitter = flags & retryJitter != 0
        policy.retriesAllErrors = flags & retryAllErrors != 0
        policy.retriesNonIdempotent = flags & retryNonIdempotent != 0
        policy.usesBudget = flags & retryNoBudget == 0
        r.draft.options.retry = policy
    }
}

@_cdecl("courier_request_set_retry_limits")
public func courier_request_set_retry_limits(_ handle: OpaquePointer?, _ maxTime: Int64, _ retryAfterLimit: Int64,
                                             _ maxInterval: Int64) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard maxTime >= 0, retryAfterLimit >= 0, maxInterval >= 0 else { throw invalid("negative retry limit") }
        var policy = r.draft.options.retry
        policy.maxTime = Nanoseconds.limit(milliseconds: maxTime)
        if retryAfterLimit > 0 { policy.retryAfterLimit = .milliseconds(UInt64(retryAfterLimit)) }
        if maxInterval > 0 { policy.maxInterval = .milliseconds(UInt64(maxInterval)) }
        guard policy.count > 0 else { throw invalid("courier_request_set_retry first: the request has no retries") }
        r.draft.options.retry = policy
    }
}

@_cdecl("courier_request_set_retry_statuses")
public func courier_request_set_retry_statuses(_ handle: OpaquePointer?, _ statuses: UnsafePointer<Int32>?, _ count: Int) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard count >= 0, statuses != nil || count == 0 else { throw invalid("NULL statuses with a non-zero count") }
        var set = Set<Int>()
        for index in 0..<count {
            let status = Int(statuses![index])
            guard (100...999).contains(status) else { throw invalid("status \(status) is not a status") }
            set.insert(status)
        }
        var policy = r.draft.options.retry
        guard policy.count > 0 else { throw invalid("courier_request_set_retry first: the request has no retries") }
        policy.statuses = set
        r.draft.options.retry = policy
    }
}

@_cdecl("courier_request_set_retry_callback")
public func courier_request_set_retry_callback(_ handle: OpaquePointer?, _ callback: courier_retry_fn?,
                                               _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r in r.retryCallback = callback.map { ($0, user) } }
}

@_cdecl("courier_response_retries")
public func courier_response_retries(_ handle: OpaquePointer?) -> Int32 {
    guard let response = response(handle) else { return -CourierError.Code.misuse.c }
    return Int32(response.transfer.retries)
}

@_cdecl("courier_response_retry_reason")
public func courier_response_retry_reason(_ handle: OpaquePointer?, _ index: Int32, _ status: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let response = response(handle) else { return -CourierError.Code.misuse.c }
    let reasons = response.transfer.machine.retryReasons
    guard index >= 0, Int(index) < reasons.count else { return -CourierError.Code.invalidArgument.c }
    switch reasons[Int(index)] {
    case .failure(let error):
        status?.pointee = 0
        return error.code.c
    case .status(let code):
        status?.pointee = Int32(code)
        return 0
    }
}
