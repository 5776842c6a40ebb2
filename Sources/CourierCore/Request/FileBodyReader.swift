import Glibc

/// Streams a request body from a file in 64 KiB pieces.
final class FileBodyReader {
    @exclusivity(unchecked) private var fd: Int32
    private let path: String
    @exclusivity(unchecked) private(set) var remaining: UInt64

    private init(fd: Int32, path: String, remaining: UInt64) {
        self.fd = fd
        self.path = path
        self.remaining = remaining
    }

    deinit { if fd >= 0 { close(fd) } }

    static func open(path: String, expectedLength: UInt64) -> Result<FileBodyReader, CourierError> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))")) }
        return .success(FileBodyReader(fd: fd, path: path, remaining: expectedLength))
    }

    /// The size of a file, for Content-Length before it is opened for sending.
    static func size(of path: String) -> Result<UInt64, CourierError> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))")) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(CourierError(.fileRead, "\(path): not a regular file")) }
        return .success(UInt64(info.st_size))
    }

    func readChunk() -> Result<[UInt8], CourierError> {
        let want = Int(min(remaining, 64 * 1024))
        var chunk = [UInt8](repeating: 0, count: want)
        var filled = 0
        while filled < want {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, want - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))"))
            }
            if n == 0 { return .failure(CourierError(.fileRead, "\(path): file shrank while being sent")) }
            filled += n
        }
        remaining -= UInt64(want)
        return .success(chunk)
    }
}
