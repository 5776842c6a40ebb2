import CUV
import Glibc

/// Watches the network from the loop: a NETLINK_ROUTE socket subscribed to link, address and
/// route changes wakes the loop (no polling), and 50 ms after the last message of a burst (an
/// interface going down sends several) the state is read again (`NetworkProbe`); a different
/// status goes to `onChange`, on the loop thread (the runtime's observers hear of it from there).
///
/// The kind can be forced: `override` (the application's configuration), else the environment's
/// `COURIER_NETWORK` (`wired`, `wifi`, `cellular` or `none`), read once when the monitor starts.
/// Without netlink (a sandbox that refuses the socket) the status is read once and kept.
package final class NetworkMonitor {
    package private(set) var status: NetworkStatus
    /// Called with each new status (the runtime drops idle connections, applies the queue width
    /// and tells its observers).
    package var onChange: ((NetworkStatus) -> Void)?
    /// Changes seen since the monitor started (tests).
    package private(set) var changes = 0
    package var override: NetworkKind? {
        didSet { reevaluate() }
    }
    package var isWatching: Bool { poll != nil }

    private let root: String
    private var socket: Int32 = -1
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    private var timer: UnsafeMutablePointer<uv_timer_t>?

    /// Starts watching on `uvLoop` (loop thread). `root` prefixes procfs and sysfs paths (tests).
    package init(uvLoop: UnsafeMutablePointer<uv_loop_t>, root: String = "",
                 environment: String? = getenv("COURIER_NETWORK").map { String(cString: $0) }) {
        self.root = root
        override = environment.flatMap { NetworkKind(rawValue: $0.lowercased()) }
        status = NetworkStatus(kind: .none, interface: "")
        status = current()
        let fd = courier_netlink_route_socket()
        guard fd >= 0 else { return }
        socket = fd
        let handle = UnsafeMutablePointer<uv_poll_t>.allocate(capacity: 1)
        let delay = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        guard uv_poll_init(uvLoop, handle, fd) == 0 else {
            handle.deallocate()
            delay.deallocate()
            Glibc.close(fd)
            socket = -1
            return
        }
        uv_timer_init(uvLoop, delay)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        delay.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        poll = handle
        timer = delay
        uv_poll_start(handle, Int32(UV_READABLE.rawValue)) { handle, _, _ in
            Unmanaged<NetworkMonitor>.fromOpaque(handle!.pointee.data).takeUnretainedValue().drain()
        }
    }

    /// Stops watching (loop thread): closes the socket and the handles.
    package func close() {
        if let poll {
            uv_poll_stop(poll)
            uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(poll))) { $0?.deallocate() }
        }
        if let timer {
            uv_timer_stop(timer)
            uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { $0?.deallocate() }
        }
        poll = nil
        timer = nil
        if socket >= 0 { Glibc.close(socket) }
        socket = -1
    }

    /// Reads the state again now (after an override, or when told of a change another way).
    package func reevaluate() {
        let now = current()
        guard now != status else { return }
        status = now
        changes += 1
        onChange?(now)
    }

    private func current() -> NetworkStatus {
        if let override { return NetworkStatus(kind: override, interface: override == .none ? "" : "override", isOverridden: true) }
        return NetworkProbe.status(root: root)
    }

    /// Empties the socket (the messages only say that something changed) and reads the state
    /// once the burst is over.
    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0, errno == EINTR { continue }
            // ENOBUFS: the kernel dropped messages for us; the state is read again all the same.
            if count <= 0 { break }
        }
        guard let timer else { return }
        uv_timer_start(timer, { timer in
            Unmanaged<NetworkMonitor>.fromOpaque(timer!.pointee.data).takeUnretainedValue().reevaluate()
        }, 50, 0)
    }
}
