import Courier
import CourierCore

/// `courier_response`: a finished response, read-only. Pointers handed to C point into arrays
/// this object keeps (never mutated again), so they stay valid until the handle is freed.
final class CResponse: @unchecked Sendable {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.response
    let response: Response
    let headers: HTTPHeaders
    let body: [UInt8]
    /// NUL-terminated copies made on demand (header values, the URL), freed with the response.
    private let lock = Lock()
    private var cStrings: [String: OwnedCString] = [:]

    init(_ response: Response) {
        self.response = response
        headers = response.headers
        body = response.body
    }

    /// A NUL-terminated copy of what `make` returns, cached under `key` (any thread).
    func cString(_ key: String, _ make: () -> String?) -> UnsafePointer<CChar>? {
        lock.withLock {
            if let cached = cStrings[key] { return UnsafePointer(cached.pointer) }
            guard let value = make() else { return nil }
            let owned = OwnedCString(value)
            cStrings[key] = owned
            return UnsafePointer(owned.pointer)
        }
    }
}
