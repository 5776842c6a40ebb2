import CUV
import Glibc

/// Asynchronous name resolution with a small cache, on the loop thread.
///
/// `uv_getaddrinfo` runs the blocking `getaddrinfo` on libuv's thread pool, so a slow DNS server
/// never stalls the loop. Answers are cached for `ttl` (curl's default is 60 s too), concurrent
/// lookups of one name share a single query, and IP literals skip the resolver entirely: a benchmark
/// against 127.0.0.1 that opens a connection per request must not pay a thread-pool round trip.
package final class Resolver {
    package typealias Completion = (Result<[SocketAddress], CourierError>) -> Void

    private struct Entry {
        var addresses: [SocketAddress]
        var expiresAtMillis: UInt64
    }

    private let loop: EventLoop
    private var cache: [String: Entry] = [:]
    private var pending: [String: [Completion]] = [:]
    /// How long an answer is reused, in milliseconds.
    package var ttlMillis: UInt64 = 60_000

    package init(loop: EventLoop) {
        self.loop = loop
    }

    /// RFC 6761 section 6.3: `localhost` and names under it are the loopback addresses, whatever
    /// the system's resolver (or /etc/hosts) says, and never go to DNS. IPv6 first, as for any
    /// name with both (the connection races them, RFC 8305).
    package static let loopback = [SocketAddress(ipLiteral: "::1", port: 0)!, SocketAddress(ipLiteral: "127.0.0.1", port: 0)!]

    package static func isLocalhost(_ host: String) -> Bool {
        host == "localhost" || host == "localhost." || host.hasSuffix(".localhost") || host.hasSuffix(".localhost.")
    }

    /// Drops the cached answers (the network changed: its DNS may answer differently). Lookups in
    /// flight still complete.
    package func forgetAnswers() { cache.removeAll() }

    /// Resolves `host`; addresses come back with port 0 (the caller sets it). The completion runs
    /// on the loop thread, possibly before this call returns (cache hits and literals).
    package func resolve(_ host: String, completion: @escaping Completion) {
        if let literal = SocketAddress(ipLiteral: host, port: 0) {
            completion(.success([literal]))
            return
        }
        if Self.isLocalhost(host) {
            completion(.success(Self.loopback))
            return
        }
        if let entry = cache[host], entry.expiresAtMillis > loop.nowMillis {
            completion(.success(entry.addresses))
            return
        }
        if pending[host] != nil {
            pending[host]!.append(completion)
            return
        }
        pending[host] = [completion]
        let request = UnsafeMutablePointer<uv_getaddrinfo_t>.allocate(capacity: 1)
        let context = LookupContext(resolver: self, host: host)
        request.pointee.data = Unmanaged.passRetained(context).toOpaque()
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        let status = uv_getaddrinfo(loop.uvLoop, request, { request, status, result in
            let context = Unmanaged<LookupContext>.fromOpaque(request!.pointee.data).takeRetainedValue()
            request!.deallocate()
            var addresses: [SocketAddress] = []
            var cursor = result
            while let info = cursor {
                if let address = info.pointee.ai_addr.flatMap({ SocketAddress(UnsafePointer($0)) }) { addresses.append(address) }
                cursor = info.pointee.ai_next
            }
            if result != nil { uv_freeaddrinfo(result) }
            context.resolver.finish(context.host, status: status, addresses: addresses)
        }, host, nil, &hints)
        if status != 0 {
            Unmanaged<LookupContext>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            finish(host, status: status, addresses: [])
        }
    }

    /// Forgets every cached answer (tests, and a network change).
    package func flush() { cache.removeAll() }

    private func finish(_ host: String, status: Int32, addresses: [SocketAddress]) {
        let waiting = pending.removeValue(forKey: host) ?? []
        let result: Result<[SocketAddress], CourierError>
        if status == 0, !addresses.isEmpty {
            cache[host] = Entry(addresses: addresses, expiresAtMillis: loop.nowMillis + ttlMillis)
            result = .success(addresses)
        } else {
            let reason = status == 0 ? "no addresses" : String(cString: uv_strerror(status))
            result = .failure(CourierError(.dnsFailure, "\(host): \(reason)"))
        }
        for completion in waiting { completion(result) }
    }

    private final class LookupContext {
        let resolver: Resolver
        let host: String
        init(resolver: Resolver, host: String) {
            self.resolver = resolver
            self.host = host
        }
    }
}
