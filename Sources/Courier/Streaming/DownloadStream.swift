import CourierCore

/// What a download stream says after taking a piece of the body.
public enum StreamVerdict: Sendable {
    /// Keep going.
    case proceed
    /// Taken; send no more until `HTTPOperation.resume()` (reading stops, so the server is slowed,
    /// not buffered for).
    case pause
    /// Stop: the operation ends as `.cancelled`.
    case stop
}

/// A consumer of a response body (MKNetworkKit's download streams): it gets every piece, in
/// order, on the loop thread, beside the download file and any other stream. It must return
/// quickly; a slow consumer returns `.pause` and calls `HTTPOperation.resume()` when it can take more,
/// and the slowest stream sets the pace for all.
public protocol DownloadStream: AnyObject, Sendable {
    /// A piece of the body, valid only during the call.
    func write(_ bytes: UnsafeRawBufferPointer) -> StreamVerdict
}

/// A download stream in the shape the core takes.
package struct DownloadStreamBox: @unchecked Sendable {
    package let sink: StreamSink

    /// A consumer the core already knows how to call (the C ABI's write callbacks).
    package init(sink: StreamSink) { self.sink = sink }

    init(_ stream: any DownloadStream) {
        sink = StreamSink { bytes in
            switch stream.write(bytes) {
            case .proceed: return .proceed
            case .pause: return .pause
            case .stop: return .stop
            }
        }
    }
}
