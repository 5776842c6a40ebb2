import Glibc

/// Streams a file as (part of) a request body, in pieces of one reusable 64 KiB buffer (measured
/// against 128 and 256 KiB on 1 GiB uploads: the read from the page cache and the copy into the
/// socket both stay in the CPU cache, and the upload keeps pace with curl -T).
///
/// The length is fixed when the request is admitted (it went out as Content-Length or into a
/// form's length); a file that turns out shorter fails the request instead of sending a body
/// that contradicts its framing, and bytes beyond the length are not sent.
package final class FileBodySource: BodySource {
    package static let pieceSize = 65536
    @exclusivity(unchecked) private var fd: Int32
    private let path: String
    @exclusivity(unchecked) package private(set) var remaining: UInt64
    @exclusivity(unchecked) private var buffer: UnsafeMutableRawBufferPointer?
    package var wake: (() -> Void)?

    /// The length admitted: the file must still have it when its last piece is read.
    private let length: UInt64

    private init(fd: Int32, path: String, remaining: UInt64) {
        self.fd = fd
        self.path = path
        self.remaining = remaining
        length = remaining
    }

    deinit { close() }

    /// Opens `path` to send `length` bytes of it.
    package static func open(path: String, length: UInt64) -> Result<FileBodySource, CourierError> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))")) }
        return .success(FileBodySource(fd: fd, path: path, remaining: length))
    }

    /// The size of a regular file, for Content-Length before it is opened for sending.
    package static func size(of path: String) -> Result<UInt64, CourierError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))")) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(CourierError(.fileRead, "\(path): not a regular file")) }
        return .success(UInt64(info.st_size))
    }

    package func read() -> BodyRead {
        guard remaining > 0 else { return .end }
        guard fd >= 0 else { return .failed(CourierError(.fileRead, "\(path): closed")) }
        let memory = buffer ?? {
            let made = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.pieceSize, alignment: 16)
            buffer = made
            return made
        }()
        let want = Int(min(remaining, UInt64(Self.pieceSize)))
        var filled = 0
        while filled < want {
            let n = Glibc.read(fd, memory.baseAddress! + filled, want - filled)
            if n < 0 {
                if errno == EINTR { continue }
                return .failed(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))"))
            }
            if n == 0 { return .failed(shrank) }
            filled += n
        }
        remaining -= UInt64(want)
        if remaining == 0, let changed = sizeChanged() { return .failed(changed) }
        return .bytes(UnsafeRawBufferPointer(start: memory.baseAddress, count: want))
    }

    package var nextFile: FileBodySource? { remaining > 0 && fd >= 0 ? self : nil }

    /// The descriptor, for sending the rest with sendfile (see `sentElsewhere`).
    package var descriptor: Int32 { fd }

    /// Before `count` of the remaining bytes go out some other way: when they would be the last,
    /// the check `read` makes (a file that grew would go out cut at its old length as if whole).
    package func checkBeforeSending(_ count: Int) -> CourierError? {
        UInt64(count) >= remaining ? sizeChanged() : nil
    }

    /// Before the last bytes go out: a file that grew would go out cut at its old length as if
    /// whole.
    private func sizeChanged() -> CourierError? {
        var info = stat()
        guard fstat(fd, &info) == 0, UInt64(info.st_size) != length else { return nil }
        return CourierError(.fileRead, "\(path): the file changed size while being sent")
    }

    /// `count` bytes went out from the file's offset (which moved as far).
    package func sentElsewhere(_ count: Int) { remaining -= UInt64(count) }

    /// The file ended before its admitted length.
    package var shrank: CourierError { CourierError(.fileRead, "\(path): the file shrank while being sent") }

    package func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        buffer?.deallocate()
        buffer = nil
    }
}
