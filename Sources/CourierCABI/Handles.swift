import CourierCore
import Dispatch
import Glibc

// How a C handle maps to a Swift object, and how a bad one is caught.
//
// A handle is the address of a Swift object whose reference the caller holds (passRetained at the
// constructor, released at the destructor). Each handle class begins with a tag: the entry points
// check it before touching the object, so NULL, a pointer to something else, or a handle already
// destroyed becomes COURIER_E_MISUSE (sqlite's sqlite3SafetyCheckOk). Destructors overwrite the tag
// before letting go, so a second destroy is caught while the memory has not been reused.

/// Tag values, the first stored property of each handle class.
enum HandleTag {
    static let engine: UInt32 = 0xC0E1_E001
    static let request: UInt32 = 0xC0E1_4E01
    static let response: UInt32 = 0xC0E1_4E5F
    static let cache: UInt32 = 0xC0E1_CAC4
    static let group: UInt32 = 0xC0E1_6409
    static let cookieJar: UInt32 = 0xC0E1_C00C
    static let chain: UInt32 = 0xC0E1_C4A1
    static let outbox: UInt32 = 0xC0E1_0B0C
    static let hsts: UInt32 = 0xC0E1_4575
    static let mockReply: UInt32 = 0xC0E1_3E91
    static let dead: UInt32 = 0xDEAD_C0E1
    /// Swift class instances start with a 16-byte header (metadata, reference counts) on 64-bit
    /// Linux; the first stored property follows.
    static let offset = 16
}

/// Reads a handle's tag without retaining the object (it may be gone).
@inline(__always)
func tagOf(_ pointer: OpaquePointer) -> UInt32 {
    UnsafeRawPointer(pointer).load(fromByteOffset: HandleTag.offset, as: UInt32.self)
}

/// The live object behind `pointer`, or nil for NULL, a wrong kind or a destroyed handle.
@inline(__always)
func object<T: AnyObject>(_ pointer: OpaquePointer?, tag: UInt32, as type: T.Type) -> T? {
    guard let pointer, tagOf(pointer) == tag else { return nil }
    return Unmanaged<T>.fromOpaque(UnsafeRawPointer(pointer)).takeUnretainedValue()
}

/// A new handle: the caller owns one reference.
@inline(__always)
func retainedHandle(_ object: AnyObject) -> OpaquePointer {
    OpaquePointer(Unmanaged.passRetained(object).toOpaque())
}

/// A handle for an object the caller already owns.
@inline(__always)
func borrowedHandle(_ object: AnyObject) -> OpaquePointer {
    OpaquePointer(Unmanaged.passUnretained(object).toOpaque())
}

/// Releases the caller's reference of a handle.
@inline(__always)
func releaseHandle(_ pointer: OpaquePointer) {
    Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(pointer)).release()
}

/// A `String` from a C string, nil for NULL.
@inline(__always)
func string(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.map { String(cString: $0) }
}

/// A C string Courier owns, freed with its holder.
final class OwnedCString: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<CChar>
    init(_ string: String) { pointer = strdup(string) }
    /// A NUL-terminated copy of `bytes` (which hold no NUL).
    init(copying bytes: UnsafeRawBufferPointer) {
        pointer = malloc(bytes.count + 1)!.assumingMemoryBound(to: CChar.self)
        if let source = bytes.baseAddress { memcpy(pointer, source, bytes.count) }
        pointer[bytes.count] = 0
    }
    deinit { free(pointer) }
}

/// Result codes as C returns them.
extension CourierError.Code {
    @inline(__always) var c: Int32 { rawValue }
}

let COURIER_OK: Int32 = 0

/// Runs a completion C expects on the loop thread: at once when already there, else soon on it
/// (a group or chain that ends inside its send call still reports from the loop).
func onLoopThread(_ body: @escaping () -> Void) {
    if Runtime.shared.isOnLoopThread {
        body()
    } else {
        let boxed = UncheckedSendable(body)
        Runtime.shared.executeSoon { boxed.value() }
    }
}

/// A group's or chain's blocking perform: `send` with a completion that wakes this thread, then
/// the wait (COURIER_E_MISUSE on the loop thread, which the completion needs).
func sendAndWait(_ send: (@escaping () -> Void) -> Int32) -> Int32 {
    guard !Runtime.shared.isOnLoopThread else { return CourierError.Code.misuse.c }
    let finished = DispatchSemaphore(value: 0)
    let code = send { finished.signal() }
    guard code == COURIER_OK else { return code }
    finished.wait()
    return COURIER_OK
}
