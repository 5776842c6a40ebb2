import CourierCore

// courier_engine_set_mock: requests answered inside the process by a C callback (users' own
// tests), through Courier's whole stack above the wire (see MockServer).

/// courier_mock_fn.
public typealias CMockHandler = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                                UnsafePointer<CChar>?, UnsafeRawPointer?, Int, OpaquePointer?) -> Void

/// The reply a handler fills in, valid during its call.
final class CMockReply {
    /// Must stay the first stored property (see `HandleTag`).
    @exclusivity(unchecked) var tag = HandleTag.mockReply
    var reply = MockServer.Reply()
}

private func mockReply(_ handle: OpaquePointer?) -> CMockReply? {
    object(handle, tag: HandleTag.mockReply, as: CMockReply.self)
}

@_cdecl("courier_engine_set_mock")
public func courier_engine_set_mock(_ handle: OpaquePointer?, _ handler: CMockHandler?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    let userBits = UInt(bitPattern: user)
    return configureDefaults(handle) { o throws(CourierError) in
        var route = o.route ?? ConnectRoute()
        route.mock = handler.map { call in
            MockServer { request in
                let headers = (0..<request.headers.count).map { "\(request.headers.name(at: $0)): \(request.headers.value(at: $0))\r\n" }.joined()
                let holder = CMockReply()
                holder.reply.status = 200
                let replyHandle = borrowedHandle(holder)
                request.body.withUnsafeBytes { body in
                    call(UnsafeMutableRawPointer(bitPattern: userBits), request.method, request.target, headers, body.baseAddress, body.count,
                         replyHandle)
                }
                holder.tag = HandleTag.dead
                return holder.reply
            }
        }
        // (No route at all when nothing is left in it: requests keep their short path.)
        o.route = route == ConnectRoute() ? nil : route
    }
}

@_cdecl("courier_mock_reply_set_status")
public func courier_mock_reply_set_status(_ handle: OpaquePointer?, _ status: Int32) -> Int32 {
    guard let holder = mockReply(handle) else { return CourierError.Code.misuse.c }
    guard (100...999).contains(status) else { return CourierError.Code.invalidArgument.c }
    holder.reply.status = Int(status)
    return COURIER_OK
}

@_cdecl("courier_mock_reply_add_header")
public func courier_mock_reply_add_header(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let holder = mockReply(handle) else { return CourierError.Code.misuse.c }
    guard let field = validatedHeader(name, value) else { return CourierError.Code.invalidHeader.c }
    holder.reply.headers.add(name: field.name, value: field.value)
    return COURIER_OK
}

@_cdecl("courier_mock_reply_set_body")
public func courier_mock_reply_set_body(_ handle: OpaquePointer?, _ body: UnsafeRawPointer?, _ length: Int) -> Int32 {
    guard let holder = mockReply(handle) else { return CourierError.Code.misuse.c }
    guard length >= 0, body != nil || length == 0 else { return CourierError.Code.invalidArgument.c }
    holder.reply.body = length == 0 ? [] : Array(UnsafeRawBufferPointer(start: body, count: length))
    return COURIER_OK
}
