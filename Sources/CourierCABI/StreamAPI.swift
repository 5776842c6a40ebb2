import Courier
import CourierCore
import Glibc

// courier_request_* for streamed bodies: read and write callbacks, forms, resumable and chosen
// downloads, pacing.

public typealias courier_write_fn = @convention(c) (UnsafeRawPointer?, Int, UnsafeMutableRawPointer?) -> Int
public typealias courier_read_fn = @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int64
public typealias courier_head_fn = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> Void
public typealias courier_destination_fn = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> UnsafePointer<CChar>?

/// `COURIER_WRITEFUNC_PAUSE`: (size_t)-1.
let writePause = Int(bitPattern: UInt(bitPattern: -1))
/// `COURIER_READFUNC_ABORT` and `COURIER_READFUNC_PAUSE`.
let readAbort: Int64 = -1
let readPause: Int64 = -2

/// A C write callback with curl's pause contract: a piece answered with PAUSE was not taken; it
/// is kept and offered again, first, when the request is resumed. Any other count but the
/// piece's length is a write error.
final class CWriteSink: @unchecked Sendable {
    private let write: courier_write_fn
    private let user: UnsafeMutableRawPointer?
    private var refused: [UInt8]?

    init(_ write: @escaping courier_write_fn, _ user: UnsafeMutableRawPointer?) {
        self.write = write
        self.user = user
    }

    var sink: StreamSink {
        StreamSink(redeliver: { [self] in redeliver() }) { [self] bytes in offer(bytes) }
    }

    private func offer(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
        let taken = write(bytes.baseAddress, bytes.count, user)
        if taken == bytes.count { return .proceed }
        if taken == writePause {
            refused = Array(bytes.bindMemory(to: UInt8.self))
            return .pause
        }
        return .fail(CourierError(.fileWrite, "the write callback took \(taken) of \(bytes.count) bytes"))
    }

    private func redeliver() -> BodyVerdict {
        guard let piece = refused else { return .proceed }
        refused = nil
        return piece.withUnsafeBytes { offer($0) }
    }
}

/// A C read callback as a request body: pieces are read into one 128 KiB buffer on the loop
/// thread; PAUSE waits for `courier_request_resume`, ABORT fails the request.
final class CReadSource: BodySource, @unchecked Sendable {
    private let callback: courier_read_fn
    private let user: UnsafeMutableRawPointer?
    private var buffer: UnsafeMutableRawBufferPointer?
    private var paused = false
    var wake: (() -> Void)?

    init(_ read: @escaping courier_read_fn, _ user: UnsafeMutableRawPointer?) {
        self.callback = read
        self.user = user
    }

    deinit { buffer?.deallocate() }

    func read() -> BodyRead {
        let memory = buffer ?? {
            let made = UnsafeMutableRawBufferPointer.allocate(byteCount: FileBodySource.pieceSize, alignment: 16)
            buffer = made
            return made
        }()
        let n = callback(memory.baseAddress, memory.count, user)
        if n > 0, n <= memory.count { return .bytes(UnsafeRawBufferPointer(start: memory.baseAddress, count: Int(n))) }
        switch n {
        case 0: return .end
        case readPause:
            paused = true
            return .pending
        case readAbort: return .failed(CourierError(.bodySource, "the read callback aborted the upload"))
        default: return .failed(CourierError(.bodySource, "the read callback returned \(n) for a \(memory.count)-byte buffer"))
        }
    }

    /// `courier_request_resume` (on the loop thread): a paused callback is asked again.
    func resume() {
        guard paused else { return }
        paused = false
        wake?()
    }

    func close() {
        wake = nil
        buffer?.deallocate()
        buffer = nil
    }
}

/// The C functions keep these on the request.
final class CStreamSettings: @unchecked Sendable {
    var reader: CReadSource?
    /// courier_request_set_body_reader's buffer.
    var pipe: CBodyPipe?
    var head: (courier_head_fn, UnsafeMutableRawPointer?)?
}

@_cdecl("courier_request_add_write_callback")
public func courier_request_add_write_callback(_ handle: OpaquePointer?, _ write: courier_write_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let write else { throw invalid("NULL write callback") }
        // (The sink's closures keep the writer.)
        r.draft.downloadStreams.append(DownloadStreamBox(sink: CWriteSink(write, user).sink))
    }
}

@_cdecl("courier_request_set_head_callback")
public func courier_request_set_head_callback(_ handle: OpaquePointer?, _ head: courier_head_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        r.streams.head = head.map { ($0, user) }
    }
}

@_cdecl("courier_request_set_body_callback")
public func courier_request_set_body_callback(_ handle: OpaquePointer?, _ read: courier_read_fn?, _ length: Int64,
                                              _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let read else { throw invalid("NULL read callback") }
        guard length >= -1 else { throw invalid("length must be -1 (unknown) or the body's size") }
        let source = CReadSource(read, user)
        r.streams.reader = source
        r.draft.body = .stream(BodyStream(length: length < 0 ? nil : UInt64(length), replayable: false) { source })
    }
}

@_cdecl("courier_request_resume")
public func courier_request_resume(_ handle: OpaquePointer?) -> Int32 {
    guard let request = request(handle) else { return CourierError.Code.misuse.c }
    request.resume()
    return COURIER_OK
}

/// The request's multipart form, started on first use.
private func editForm(_ r: CRequest, _ edit: (inout MultipartForm) -> Void) {
    var form: MultipartForm
    if case .multipart(let existing)? = r.draft.body { form = existing } else { form = MultipartForm() }
    edit(&form)
    r.draft.body = .multipart(form)
}

@_cdecl("courier_request_add_form_field")
public func courier_request_add_form_field(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let name = string(name), let value = string(value) else { throw invalid("NULL field name or value") }
        editForm(r) { $0.addField(name, value: value) }
    }
}

@_cdecl("courier_request_add_form_data")
public func courier_request_add_form_data(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ data: UnsafeRawPointer?, _ length: Int,
                                          _ mimeType: UnsafePointer<CChar>?, _ fileName: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let name = string(name) else { throw invalid("NULL part name") }
        guard length >= 0, data != nil || length == 0 else { throw invalid("NULL data with a non-zero length") }
        let bytes = data.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
        editForm(r) { $0.addData(bytes, forKey: name, mimeType: string(mimeType) ?? "application/octet-stream", fileName: string(fileName)) }
    }
}

@_cdecl("courier_request_add_form_file")
public func courier_request_add_form_file(_ handle: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                                          _ mimeType: UnsafePointer<CChar>?, _ fileName: UnsafePointer<CChar>?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let name = string(name), let path = string(path), !path.isEmpty else { throw invalid("NULL part name or file path") }
        editForm(r) { $0.addFile(path, forKey: name, mimeType: string(mimeType), fileName: string(fileName)) }
    }
}

@_cdecl("courier_request_set_resume_file")
public func courier_request_set_resume_file(_ handle: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ attempts: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let path = string(path), !path.isEmpty else { throw invalid("no file path") }
        guard attempts >= 0 else { throw invalid("negative resume attempts") }
        r.draft.resumablePath = path
        r.draft.options.resumeAttempts = Int(attempts)
    }
}

@_cdecl("courier_request_set_destination")
public func courier_request_set_destination(_ handle: OpaquePointer?, _ choose: courier_destination_fn?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard let choose else { throw invalid("NULL destination callback") }
        let context = UncheckedSendable((r, choose, user))
        r.draft.destination = { head in
            let (request, choose, user) = context.value
            // The head is shown as a response valid during the call (status and headers).
            let shown = CResponse(Transfer.finished(url: request.currentURL, head: head, body: [], trailers: HTTPHeaders(),
                                                    metrics: TransferMetrics()))
            let path = withExtendedLifetime(shown) { choose(borrowedHandle(request), borrowedHandle(shown), user) }
            return path.map { String(cString: $0) }
        }
    }
}

@_cdecl("courier_request_set_expect_continue")
public func courier_request_set_expect_continue(_ handle: OpaquePointer?, _ mode: Int32) -> Int32 {
    configure(handle) { r throws(CourierError) in
        switch mode {
        case 0: r.draft.options.expectContinue = .automatic
        case 1: r.draft.options.expectContinue = .always
        case 2: r.draft.options.expectContinue = .never
        default: throw invalid("unknown Expect mode \(mode)")
        }
    }
}

@_cdecl("courier_request_set_rate_limit")
public func courier_request_set_rate_limit(_ handle: OpaquePointer?, _ receive: Int64, _ send: Int64) -> Int32 {
    configure(handle) { r throws(CourierError) in
        guard receive >= 0, send >= 0 else { throw invalid("negative rate") }
        r.draft.options.receiveRateLimit = UInt64(receive)
        r.draft.options.sendRateLimit = UInt64(send)
    }
}
