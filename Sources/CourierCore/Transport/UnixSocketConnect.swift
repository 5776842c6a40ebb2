import CUV
import Glibc

/// Opens a connected, non-blocking Unix domain stream socket to a path or an abstract name
/// (`ConnectRoute.UnixSocket`). A local connect is decided at once (accepted, refused, no such
/// file), so no callback is needed: the descriptor is handed to libuv already connected.
enum UnixSocketConnect {
    /// The connected descriptor, or why there is none (`.connectFailed` with the errno's name).
    static func connect(_ socket: ConnectRoute.UnixSocket) -> Result<Int32, CourierError> {
        guard socket.fits else {
            // (Where a name would be resolved, as curl does: its exit 6.)
            return .failure(CourierError(.dnsFailure, "Unix socket path too long: '\(socket.name)'"))
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // A path ends with a NUL; an abstract name starts with one (Linux's abstract namespace).
        // Either way the address is its bytes and one NUL.
        let start = socket.isAbstract ? 1 : 0
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in socket.name.utf8.enumerated() { path[start + index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + socket.name.utf8.count + 1)
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(CourierError(.connectFailed, "socket: \(String(cString: strerror(errno)))")) }
        let status = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, length) }
        }
        if status != 0 {
            let code = errno
            Glibc.close(descriptor)
            // (EAGAIN: the listener's backlog is full; a local server that far behind is refused.)
            let what = socket.isAbstract ? "@\(socket.name)" : socket.name
            return .failure(CourierError(.connectFailed, "connect \(String(cString: uv_err_name(-code))) \(what)"))
        }
        return .success(descriptor)
    }
}

extension ConnectRoute.UnixSocket {
    /// Whether the name is in the abstract namespace.
    var isAbstract: Bool {
        if case .abstract = self { return true }
        return false
    }
}
