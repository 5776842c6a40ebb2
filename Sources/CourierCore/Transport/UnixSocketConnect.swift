import CUV
import Glibc

/// Opens a connected, non-blocking Unix domain stream socket to a path or an abstract name
/// (`ConnectRoute.UnixSocket`). A local connect is decided at once (accepted, refused, no such
/// file), so no callback is needed: the descriptor is handed to libuv already connected.
enum UnixSocketConnect {
    /// The connected descriptor, or why there is none (`.connectFailed` with the errno's name).
    static func connect(_ socket: ConnectRoute.UnixSocket) -> Result<Int32, CourierError> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array(socket.name.utf8)
        let offset: Int
        switch socket {
        case .path: offset = 0
        case .abstract: offset = 1  // (a leading NUL: the abstract namespace)
        }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !name.isEmpty, name.count + offset < capacity, !name.contains(0) else {
            // (Where a name would be resolved, as curl does: its exit 6.)
            return .failure(CourierError(.dnsFailure, "Unix socket path too long: '\(socket.name)'"))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in name.enumerated() { path[index + offset] = byte }
        }
        // A path's length includes its NUL; an abstract name is exactly its bytes after the first.
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        let length = socklen_t(pathOffset + offset + name.count + (offset == 0 ? 1 : 0))
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
            return .failure(CourierError(.connectFailed, "connect \(errnoName(code)) \(what)"))
        }
        return .success(descriptor)
    }

    private static func errnoName(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "ENOENT"
        case ECONNREFUSED: return "ECONNREFUSED"
        case EACCES: return "EACCES"
        case EAGAIN: return "EAGAIN"
        case ENOTSOCK: return "ENOTSOCK"
        default: return String(cString: strerror(code))
        }
    }
}

extension ConnectRoute.UnixSocket {
    /// Whether the name is in the abstract namespace.
    var isAbstract: Bool {
        if case .abstract = self { return true }
        return false
    }
}
