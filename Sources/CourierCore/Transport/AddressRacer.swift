import CUV
import Glibc

/// Dials `host:port`: resolves it (or takes the addresses given, curl's --resolve), then races
/// its addresses (Happy Eyeballs, RFC 8305: IPv6 and IPv4 interleaved, the next attempt
/// `attemptDelayMillis` after the previous one started or at once when it fails; the first to
/// connect wins and the others are closed), and hands the connected handle to its owner.
///
/// The bottom of a connection's stack: `SocketStream` asks it for a socket when it opens, and
/// from then on moves the bytes itself. A racer to a proxy reports its failures as the proxy's
/// (curl's 5 and 7 for the proxy, not 6 and 7 for the origin).
///
/// Each attempt's handle holds a retain on the racer until its close callback, or until the
/// winner's handle is handed over (the new owner then holds it). Loop thread only.
package final class AddressRacer {
    /// The outcome: a connected handle (the caller owns it from then on), or why none.
    package typealias Completion = (Result<UnsafeMutablePointer<uv_tcp_t>, CourierError>) -> Void

    private let uvLoop: UnsafeMutablePointer<uv_loop_t>
    let host: String
    let port: UInt16
    private unowned(unsafe) let resolver: Resolver
    private let givenAddresses: [SocketAddress]?
    private let family: ConnectRoute.Family
    /// Where each attempt's socket is bound before it connects (nil: the kernel chooses).
    private let binding: LocalBinding?
    /// Why the latest attempt could not be bound; when every attempt failed so, the race's error.
    private var bindError: CourierError?
    private let attemptDelayMillis: UInt64
    /// Whether `host:port` is a proxy: its failures to resolve or connect are the proxy's.
    let toProxy: Bool
    private let trace: ConnectionTrace?
    private var completion: Completion?
    private var addresses: [SocketAddress] = []
    private var addressIndex = 0
    /// Connects in flight and the address each tries.
    private var attempts: [(tcp: UnsafeMutablePointer<uv_tcp_t>, address: SocketAddress)] = []
    /// Starts the next attempt when the latest has not connected in time (made only for a host
    /// with several addresses).
    private var raceTimer: UnsafeMutablePointer<uv_timer_t>?
    private var lastConnectError: Int32 = 0
    /// Every attempt so far failed for want of a route (the link is down): `.noRoute`.
    private var unrouted = true
    private var cancelled = false
    /// DNS and connect times, and the address that answered.
    package private(set) var timings = ConnectTimings()

    /// RFC 8305 section 5's Connection Attempt Delay, curl's default too.
    package static let defaultAttemptDelayMillis: UInt64 = 250

    package init(host: String, port: UInt16, resolver: Resolver, uvLoop: UnsafeMutablePointer<uv_loop_t>,
                 addresses: [SocketAddress]? = nil, family: ConnectRoute.Family = .any,
                 attemptDelayMillis: UInt64 = AddressRacer.defaultAttemptDelayMillis, toProxy: Bool = false,
                 binding: LocalBinding? = nil, trace: ConnectionTrace? = nil) {
        self.binding = binding
        self.host = host
        self.port = port
        self.resolver = resolver
        self.uvLoop = uvLoop
        givenAddresses = addresses
        self.family = family
        self.attemptDelayMillis = attemptDelayMillis
        self.toProxy = toProxy
        self.trace = trace
    }

    /// Starts dialling; `done` is called once (never from inside this call when a lookup runs).
    package func start(_ done: @escaping Completion) {
        completion = done
        timings.dnsStart = monotonicNanos()
        if let givenAddresses {
            timings.dnsEnd = timings.dnsStart
            connect(to: givenAddresses)
            return
        }
        resolver.resolve(host) { [self] result in
            guard !cancelled else { return }
            timings.dnsEnd = monotonicNanos()
            switch result {
            case .failure(let error): fail(error)
            case .success(let found): connect(to: found)
            }
        }
    }

    /// Gives up: every attempt is closed, nothing is reported.
    package func cancel() {
        guard !cancelled else { return }
        cancelled = true
        completion = nil
        addresses = []
        for attempt in attempts { Self.closeHandle(attempt.tcp) }
        attempts = []
        endRace()
    }

    /// Tries `found` (of the family asked for) one after the other.
    private func connect(to found: [SocketAddress]) {
        let kept = family == .any ? found : found.filter { $0.isIPv6 == (family == .ipv6) }
        guard !kept.isEmpty else {
            // curl's codes: a name without an address of the family does not resolve (6); an
            // address literal of the other family cannot be connected to (7).
            let literal = SocketAddress(ipLiteral: host, port: 0) != nil
            fail(CourierError(literal ? .connectFailed : .dnsFailure, "\(host) has no \(family == .ipv6 ? "IPv6" : "IPv4") address"))
            return
        }
        addresses = Self.interleaved(kept).map { var a = $0; a.port = port; return a }
        timings.connectStart = monotonicNanos()
        tryNextAddress()
    }

    /// RFC 8305 section 4: the families alternate, starting with the resolver's first choice.
    package static func interleaved(_ found: [SocketAddress]) -> [SocketAddress] {
        guard let first = found.first else { return found }
        let preferred = found.filter { $0.isIPv6 == first.isIPv6 }
        let other = found.filter { $0.isIPv6 != first.isIPv6 }
        guard !other.isEmpty else { return found }
        var out: [SocketAddress] = []
        for index in 0..<max(preferred.count, other.count) {
            if index < preferred.count { out.append(preferred[index]) }
            if index < other.count { out.append(other[index]) }
        }
        return out
    }

    /// Starts the next address's attempt (a fresh handle: one whose connect failed cannot be
    /// reused); with none left, fails once no attempt is in flight.
    private func tryNextAddress() {
        while addressIndex < addresses.count {
            let address = addresses[addressIndex]
            addressIndex += 1
            trace?.add("  Trying \(address)...")
            let tcp = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
            // (A socket to be bound must exist first: made now, of the address's family.)
            let made = binding != nil ? uv_tcp_init_ex(uvLoop, tcp, UInt32(address.family)) : uv_tcp_init(uvLoop, tcp)
            if made != 0 {
                // (No handle to close: the socket could not be made, out of descriptors.)
                tcp.deallocate()
                attemptFailed(address, made)
                continue
            }
            tcp.pointee.data = Unmanaged.passRetained(self).toOpaque()
            if let binding, let error = bind(tcp, binding, toward: address) {
                bindError = error
                trace?.add("  Local end: \(error.message)")
                Self.closeHandle(tcp)
                continue
            }
            let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
            request.pointee.data = Unmanaged.passRetained(self).toOpaque()
            let status = address.withSockaddr { uv_tcp_connect(request, tcp, $0, Self.onConnect) }
            if status != 0 {
                Unmanaged<AddressRacer>.fromOpaque(request.pointee.data).release()
                request.deallocate()
                Self.closeHandle(tcp)
                attemptFailed(address, status)
                continue
            }
            attempts.append((tcp, address))
            if addressIndex < addresses.count { armRace() }
            return
        }
        guard attempts.isEmpty else { return }
        if let bindError, lastConnectError == 0 { return fail(bindError) }
        let reason = lastConnectError == 0 ? "no address" : String(cString: uv_err_name(lastConnectError))
        let last = addresses.last.map { " \($0)" } ?? ""
        fail(CourierError(unrouted && lastConnectError != 0 ? .noRoute : .connectFailed, "connect \(reason)\(last) (\(host))"))
    }

    /// Binds the new attempt's socket as `binding` asks; nil when bound.
    private func bind(_ tcp: UnsafeMutablePointer<uv_tcp_t>, _ binding: LocalBinding, toward address: SocketAddress) -> CourierError? {
        var descriptor: uv_os_fd_t = -1
        guard uv_fileno(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(tcp)), &descriptor) == 0 else {
            return CourierError(.localBind, "no socket to bind")
        }
        return binding.bind(descriptor, toward: address)
    }

    private func attemptFailed(_ address: SocketAddress, _ status: Int32) {
        lastConnectError = status
        if status != UV_ENETUNREACH.rawValue, status != UV_EHOSTUNREACH.rawValue { unrouted = false }
        trace?.add("connect to \(address.ipDescription) port \(port) failed: \(String(cString: uv_strerror(status)))")
    }

    /// The next attempt starts if this one has not connected within the attempt delay.
    private func armRace() {
        if raceTimer == nil {
            let timer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
            uv_timer_init(uvLoop, timer)
            timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
            raceTimer = timer
        }
        uv_timer_start(raceTimer, { timer in
            let racer = Unmanaged<AddressRacer>.fromOpaque(timer!.pointee.data).takeUnretainedValue()
            guard !racer.cancelled, racer.completion != nil else { return }
            racer.tryNextAddress()
        }, attemptDelayMillis, 0)
    }

    private func endRace() {
        guard let timer = raceTimer else { return }
        raceTimer = nil
        uv_timer_stop(timer)
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(timer))) { $0?.deallocate() }
    }

    private static let onConnect: uv_connect_cb = { request, status in
        let racer = Unmanaged<AddressRacer>.fromOpaque(request!.pointee.data).takeRetainedValue()
        let handle = request!.pointee.handle
        request!.deallocate()
        racer.connectFinished(status: status, handle: handle)
    }

    private func connectFinished(status: Int32, handle finished: UnsafeMutablePointer<uv_stream_t>?) {
        // A callback for an attempt given up on (cancelled, or lost the race) changes nothing.
        guard !cancelled, completion != nil,
              let index = attempts.firstIndex(where: { UnsafeMutableRawPointer($0.tcp) == finished.map({ UnsafeMutableRawPointer($0) }) })
        else { return }
        let (tcp, address) = attempts.remove(at: index)
        if status != 0 {
            Self.closeHandle(tcp)
            attemptFailed(address, status)
            // A failure starts the next attempt at once (RFC 8305 section 5).
            if let timer = raceTimer { uv_timer_stop(timer) }
            tryNextAddress()
            return
        }
        // The winner: every other attempt is closed.
        for loser in attempts { Self.closeHandle(loser.tcp) }
        attempts = []
        endRace()
        timings.connectEnd = monotonicNanos()
        timings.remoteEndpoint = RemoteEndpoint(address)
        addresses = []
        trace?.connected("Connected to \(toProxy ? "proxy " : "")\(host) (\(address.ipDescription)) port \(port)")
        // The handle's retain on the racer goes; its new owner sets `data` to itself.
        Unmanaged<AddressRacer>.fromOpaque(tcp.pointee.data).release()
        tcp.pointee.data = nil
        let done = completion
        completion = nil
        done?(.success(tcp))
    }

    private func fail(_ error: CourierError) {
        var error = error
        if toProxy {
            // The proxy's failures are not the origin's (curl's 5, not 6).
            if error.code == .dnsFailure {
                error = CourierError(.proxyResolve, "proxy " + (error.detail ?? host))
            } else if error.code == .connectFailed {
                // (A local end that could not be bound, or no route at all, stays what it is:
                // curl's 45, and a retry that waits for the network.)
                error = CourierError(.proxyConnect, "proxy " + (error.detail ?? host))
            }
        }
        trace?.add(error.message)
        let done = completion
        cancel()
        done?(.failure(error))
    }

    /// Closes an attempt's handle; its retain on the racer and its memory go in the close callback.
    private static func closeHandle(_ handle: UnsafeMutablePointer<uv_tcp_t>) {
        uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(handle))) { handle in
            Unmanaged<AddressRacer>.fromOpaque(handle!.pointee.data).release()
            UnsafeMutableRawPointer(handle!).deallocate()
        }
    }
}
