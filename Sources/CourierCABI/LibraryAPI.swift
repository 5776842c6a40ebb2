import Courier
import CourierCore

// courier_version*, courier_strerror, courier_shutdown and the shared queue's functions.

/// Static C strings for every known code, made once (swift_once makes the first use thread-safe)
/// and never freed, so `courier_strerror` can return them without ownership questions.
private let staticStrings: [Int32: OwnedCString] = {
    var table: [Int32: OwnedCString] = [:]
    for primary in Int32(0)...63 {
        for detail in Int32(0)...31 {
            let code = CourierError.Code(rawValue: primary | detail << 8)
            let text = CourierError.summary(for: code)
            if !text.hasPrefix("unknown error") { table[code.rawValue] = OwnedCString(text) }
        }
    }
    return table
}()
private let unknownCode = OwnedCString("unknown error code")
private let versionString = OwnedCString(CourierVersion.string)

/// The static text of a code (never NULL, never freed).
func courierStaticString(_ code: Int32) -> UnsafePointer<CChar> {
    UnsafePointer((staticStrings[code] ?? unknownCode).pointer)
}

/// Major, minor and patch packed as 0xMMmmpp, comparable with COURIER_VERSION_NUM.
@_cdecl("courier_version_number")
public func courier_version_number() -> Int32 {
    // (Numbers, not the string split: every binding calls this at load, and splitting a string
    // paged in over a megabyte of the library's code for it.)
    CourierVersion.major << 16 | CourierVersion.minor << 8 | CourierVersion.patch
}

@_cdecl("courier_version")
public func courier_version() -> UnsafePointer<CChar> {
    UnsafePointer(versionString.pointer)
}

@_cdecl("courier_strerror")
public func courier_strerror(_ code: Int32) -> UnsafePointer<CChar> {
    courierStaticString(code)
}

@_cdecl("courier_shutdown")
public func courier_shutdown() -> Int32 {
    // Shutting down from the loop thread would wait for itself.
    if Runtime.shared.isOnLoopThread { return CourierError.Code.misuse.c }
    SharedQueue.shutdown()
    return COURIER_OK
}

@_cdecl("courier_queue_width")
public func courier_queue_width() -> Int32 {
    Int32(clamping: SharedQueue.width)
}

@_cdecl("courier_queue_set_width")
public func courier_queue_set_width(_ width: Int32) -> Int32 {
    guard width >= 0 else { return CourierError.Code.invalidArgument.c }
    SharedQueue.width = Int(width)
    return COURIER_OK
}

@_cdecl("courier_queue_set_host_limit")
public func courier_queue_set_host_limit(_ host: UnsafePointer<CChar>?, _ limit: Int32) -> Int32 {
    guard let host = string(host) else {
        guard limit >= 1 else { return CourierError.Code.invalidArgument.c }
        SharedQueue.defaultHostLimit = Int(limit)
        return COURIER_OK
    }
    guard limit >= 0, !host.isEmpty else { return CourierError.Code.invalidArgument.c }
    SharedQueue.setLimit(limit == 0 ? nil : Int(limit), forHost: host)
    return COURIER_OK
}

@_cdecl("courier_queue_activity")
public func courier_queue_activity(_ running: UnsafeMutablePointer<Int32>?, _ queued: UnsafeMutablePointer<Int32>?) -> Int32 {
    let activity = SharedQueue.activity
    running?.pointee = Int32(clamping: activity.running)
    queued?.pointee = Int32(clamping: activity.queued)
    return COURIER_OK
}

@_cdecl("courier_queue_observe")
public func courier_queue_observe(_ observer: courier_activity_fn?, _ user: UnsafeMutableRawPointer?,
                                  _ token: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let observer, let token else { return CourierError.Code.misuse.c }
    let target = UncheckedSendable((observer, user))
    let id = Runtime.shared.addActivityObserver { activity in
        target.value.0(Int32(clamping: activity.running), Int32(clamping: activity.queued), target.value.1)
    }
    token.pointee = Int32(clamping: id)
    return COURIER_OK
}

@_cdecl("courier_queue_unobserve")
public func courier_queue_unobserve(_ token: Int32) -> Int32 {
    guard token > 0 else { return CourierError.Code.invalidArgument.c }
    Runtime.shared.removeActivityObserver(Int(token))
    return COURIER_OK
}
