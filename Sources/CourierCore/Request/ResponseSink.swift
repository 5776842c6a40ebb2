import Glibc

/// Where a response body goes.
package enum ResponseSink {
    /// Collected in memory (`Transfer.responseBody`).
    case memory
    /// Counted and dropped (benchmarks, HEAD-like uses).
    case discard
    /// Written to a file as it arrives.
    case file(FileSink)
    /// Handed to a closure piece by piece, on the loop thread; returning false stops the transfer
    /// with `.cancelled`. The bytes are only valid during the call.
    case stream((UnsafeRawBufferPointer) -> Bool)
}

/// An open file a body is written to.
///
/// Writes are synchronous `write(2)` calls on the loop thread, the same choice curl makes in its
/// write callback: to the page cache they cost about what the copy costs, and a body arrives in
/// 256 KiB reads, so the number of calls stays small.
package final class FileSink {
    package let path: String
    private var fd: Int32
    private let ownsDescriptor: Bool
    package private(set) var bytesWritten: UInt64 = 0

    /// Opens (creating or truncating, or appending when `append`) `path`.
    package init(path: String, append: Bool = false) throws(CourierError) {
        self.path = path
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC)
        fd = open(path, flags, 0o644)
        ownsDescriptor = true
        if fd < 0 {
            throw CourierError(.fileWrite, "\(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Writes to a descriptor the caller owns (stdout for the CLI).
    package init(descriptor: Int32, name: String) {
        path = name
        fd = descriptor
        ownsDescriptor = false
    }

    deinit { close() }

    /// Writes all of `bytes`, retrying short writes and EINTR.
    package func write(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        guard var base = bytes.baseAddress else { return nil }
        var remaining = bytes.count
        while remaining > 0 {
            let n = Glibc.write(fd, base, remaining)
            if n < 0 {
                if errno == EINTR { continue }
                return CourierError(.fileWrite, "\(path): \(String(cString: strerror(errno)))")
            }
            base += n
            remaining -= n
            bytesWritten += UInt64(n)
        }
        return nil
    }

    /// Closes the file (idempotent).
    package func close() {
        if ownsDescriptor, fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}
