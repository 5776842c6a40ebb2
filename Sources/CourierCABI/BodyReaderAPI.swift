import Courier
import CourierCore
import Glibc

// courier_request_set_body_reader / courier_request_read: the response body pulled by the caller
// into its own buffer, from its own thread, instead of pushed through a write callback on the loop
// thread. A runtime that must take a lock to run a callback (Python's GIL) pays one blocking call
// per buffer this way, not a callback per socket read.

public typealias courier_readable_fn = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void

@_cdecl("courier_request_set_body_reader")
public func courier_request_set_body_reader(_ handle: OpaquePointer?, _ bufferSize: Int, _ readable: courier_readable_fn?,
                                            _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard r.streams.pipe == nil else { throw invalid("the request already has a body reader") }
        // (A size_t beyond Int.max arrives negative; beyond the bound, the first piece would try to
        // reserve it and end the process.)
        guard bufferSize >= 0, bufferSize <= CBodyPipe.largestLimit else { throw invalid("buffer size above 256 MiB") }
        let pipe = CBodyPipe(limit: bufferSize == 0 ? CBodyPipe.defaultLimit : max(bufferSize, 4096), request: r,
                             readable: readable.map { ($0, user) })
        r.streams.pipe = pipe
        r.draft.downloadStreams.append(DownloadStreamBox(sink: pipe.sink))
    }
}

@_cdecl("courier_request_read")
public func courier_request_read(_ handle: OpaquePointer?, _ buffer: UnsafeMutableRawPointer?, _ capacity: Int,
                                 _ received: UnsafeMutablePointer<Int>?, _ timeoutMilliseconds: Int32) -> Int32 {
    received?.pointee = 0
    guard let request = request(handle), let received, let pipe = request.bodyPipe else { return CourierError.Code.misuse.c }
    guard let buffer, capacity > 0 else { return CourierError.Code.invalidArgument.c }
    // The loop thread would wait for itself.
    guard !Runtime.shared.isOnLoopThread else { return CourierError.Code.misuse.c }
    guard request.wasSent else { return CourierError.Code.misuse.c }
    let (code, n) = pipe.read(into: buffer, capacity: capacity, timeout: Int(timeoutMilliseconds)) { request.resume() }
    received.pointee = n
    return code
}

@_cdecl("courier_request_get_readable_fd")
public func courier_request_get_readable_fd(_ handle: OpaquePointer?, _ fd: UnsafeMutablePointer<Int32>?) -> Int32 {
    fd?.pointee = -1
    return configure(handle) { r throws(CourierError) in
        guard let fd else { throw invalid("fd is NULL") }
        guard let pipe = r.streams.pipe else { throw CourierError(.misuse, "the request has no body reader") }
        fd.pointee = try pipe.makeReadableFD()
    }
}
