/// What a request sends after its head.
public enum RequestBody: Sendable, Hashable {
    /// No body. POST, PUT and PATCH still send `Content-Length: 0`, which servers expect.
    case empty
    /// Bytes in memory, written straight from this array (no copy into a send buffer).
    case bytes([UInt8])
    /// A file streamed from disk in 64 KiB pieces, so uploads never load it whole. Its size is
    /// taken when the request is admitted; a file that shrinks while it is sent fails the
    /// request (`.fileRead`) rather than sending a short body.
    case file(path: String)
    /// `multipart/form-data` (RFC 7578): fields, in-memory parts and files, streamed; its length
    /// is known from the file sizes, without reading them.
    /// (Indirect: a form is several fields, and every request carries a `RequestBody`; boxed, the
    /// enum stays as small as a file path.)
    indirect case multipart(MultipartForm)
    /// Bytes a producer hands over as they become available (a Swift `AsyncSequence`, a C read
    /// callback, a Python iterator). Sent with `Transfer-Encoding: chunked` when its length is
    /// unknown.
    case stream(BodyStream)

    /// Whether the body could be sent a second time (a redirect with 307/308 or a stale-connection
    /// replay). Files and forms are read again; a stream produces its bytes once.
    public var isReplayable: Bool {
        if case .stream(let stream) = self { return stream.isReplayable }
        return true
    }

    /// Whether there is a body at all.
    public var isEmpty: Bool {
        if case .empty = self { return true }
        if case .bytes(let b) = self { return b.isEmpty }
        return false
    }

    /// A fresh reader for one sending of a streamed body (file, form, stream); nil for the bodies
    /// written straight from memory.
    package func makeSource(length: UInt64) -> Result<any BodySource, CourierError>? {
        switch self {
        case .empty, .bytes:
            return nil
        case .file(let path):
            return FileBodySource.open(path: path, length: length).map { $0 }
        case .multipart(let form):
            return .success(MultipartBodySource(form: form, length: length))
        case .stream(let stream):
            guard let source = stream.take() else {
                return .failure(CourierError(.fileRead, "the body stream was already consumed"))
            }
            return .success(source)
        }
    }
}
