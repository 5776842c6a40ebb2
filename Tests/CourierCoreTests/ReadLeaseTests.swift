import Dispatch
import Foundation
import CUV
import Glibc
import Testing
@testable import CourierCore

/// A `ReadLease` alone, over socket pairs and loopback TCP (no loop, no connection): what one
/// `read` takes, how a lease ends, and that only its own ends are handed back. (The reads block:
/// each test runs off the cooperative pool.)
@Suite("Read lease")
struct ReadLeaseTests {
    /// Counts the lease's hand-backs (from the reading thread).
    final class Returns: @unchecked Sendable {
        private let lock = Lock()
        private var count = 0
        func returned() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    /// A connected pair: the lease's side (`client`, the connection's descriptor) and the peer.
    struct Pair {
        let client: Int32
        let peer: Int32

        init() {
            var fds: [Int32] = [0, 0]
            precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            client = fds[0]
            peer = fds[1]
        }

        func send(_ count: Int, _ byte: UInt8 = 7) {
            let bytes = [UInt8](repeating: byte, count: count)
            bytes.withUnsafeBytes { _ = write(peer, $0.baseAddress, count) }
        }

        func close() {
            Glibc.close(client)
            Glibc.close(peer)
        }
    }

    static func lease(on socket: Int32, budget: UInt64, idleMillis: UInt64 = .max, returns: Returns) -> ReadLease {
        ReadLease(socket: socket, budget: budget, idleLimitMillis: idleMillis) { _ in returns.returned() }!
    }

    /// One read through `lease` into a buffer of `capacity` bytes.
    static func read(_ lease: ReadLease, capacity: Int = 4096, timeout: Int = -1) -> ReadLease.Read {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        return lease.read(into: buffer, capacity: capacity, timeoutMillis: timeout)
    }

    @Test func readsUpToTheBudgetAndLeavesTheRestInTheSocket() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let pair = Pair()
            defer { pair.close() }
            let returns = Returns()
            let lease = Self.lease(on: pair.client, budget: 60, returns: returns)
            pair.send(100)
            #expect(Self.read(lease, capacity: 1000) == .bytes(60))
            #expect(returns.value == 0)
            #expect(Self.read(lease) == .over(.budgetUsed))
            #expect(returns.value == 1)
            #expect(lease.taken == 60)
            #expect(lease.end == .budgetUsed)
            // The rest is the connection's, on its own descriptor.
            var rest = [UInt8](repeating: 0, count: 100)
            #expect(recv(pair.client, &rest, 100, Int32(MSG_DONTWAIT)) == 40)
            // An ended lease stays ended and is handed back once.
            #expect(Self.read(lease) == .over(.budgetUsed))
            #expect(returns.value == 1)
        }
    }

    /// A reader that never waits polls the set `watch` filled: it wakes for bytes and for a
    /// revoke; silence counts from its first read that found nothing, the timer wakes it when
    /// the limit is reached, and that read ends the lease as silent; the set is left empty.
    @Test func aWatchedLeaseWakesItsPollerAndEndsSilentOnItsTimer() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            func readable(_ set: Int32, within millis: Int32) -> Bool {
                var ask = pollfd(fd: set, events: Int16(POLLIN), revents: 0)
                return poll(&ask, 1, millis) == 1
            }
            let pair = Pair()
            defer { pair.close() }
            let set = courier_poll_set_create()
            defer { close(set) }
            let returns = Returns()
            let lease = Self.lease(on: pair.client, budget: 1 << 20, idleMillis: 300, returns: returns)
            #expect(lease.watch(in: set))
            #expect(!lease.watch(in: set), "watched once")
            #expect(!readable(set, within: 0))
            pair.send(100)
            #expect(readable(set, within: 1000), "bytes wake the poller")
            #expect(Self.read(lease, timeout: 0) == .bytes(100))
            #expect(Self.read(lease, timeout: 0) == .again)
            let quietFrom = monotonicNanos()
            #expect(!readable(set, within: 100), "nothing to say before the limit")
            #expect(readable(set, within: 2000), "the silence timer wakes the poller")
            #expect(monotonicNanos() - quietFrom >= 250_000_000)
            #expect(Self.read(lease, timeout: 0) == .over(.silent))
            #expect(returns.value == 1)
            #expect(!readable(set, within: 0), "the ended lease left the set")

            let revoked = Self.lease(on: pair.client, budget: 1 << 20, returns: Returns())
            #expect(revoked.watch(in: set))
            #expect(Self.read(revoked, timeout: 0) == .again)
            revoked.revoke()
            #expect(readable(set, within: 1000), "a revoke wakes the poller")
            #expect(Self.read(revoked, timeout: 0) == .over(.revoked))
            #expect(!readable(set, within: 0))
        }
    }

    @Test func oneReadTakesWhatTheKernelAlreadyHolds() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let pair = Pair()
            defer { pair.close() }
            let lease = Self.lease(on: pair.client, budget: 1 << 20, returns: Returns())
            pair.send(1000)
            pair.send(2000)
            pair.send(3000)
            #expect(Self.read(lease, capacity: 8192) == .bytes(6000))
            pair.send(5000)
            #expect(Self.read(lease, capacity: 4096) == .bytes(4096))
            #expect(Self.read(lease, capacity: 4096) == .bytes(904))
        }
    }

    @Test func aReaderWaitsNoLongerThanItAsked() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let pair = Pair()
            defer { pair.close() }
            let lease = Self.lease(on: pair.client, budget: 100, returns: Returns())
            #expect(Self.read(lease, timeout: 0) == .again)
            #expect(Self.read(lease, timeout: 30) == .again)
            #expect(lease.end == nil)
            pair.send(10)
            #expect(Self.read(lease, timeout: 0) == .bytes(10))
        }
    }

    @Test func anEndMetWhileFillingComesAfterTheBytes() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let pair = Pair()
            defer { pair.close() }
            let returns = Returns()
            let lease = Self.lease(on: pair.client, budget: 1000, returns: returns)
            pair.send(10)
            shutdown(pair.peer, Int32(SHUT_WR))
            #expect(Self.read(lease) == .bytes(10))
            #expect(returns.value == 0)
            #expect(Self.read(lease) == .over(.closed))
            #expect(returns.value == 1)
            #expect(lease.taken == 10)
        }
    }

    @Test func revokingWakesAWaitingReaderAndNothingIsHandedBack() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let pair = Pair()
            defer { pair.close() }
            let returns = Returns()
            let lease = Self.lease(on: pair.client, budget: 1000, returns: returns)
            let reader = DispatchSemaphore(value: 0)
            let outcome = ReadLandingTests.Box<ReadLease.Read?>(nil)
            Thread.detachNewThread {
                outcome.value = Self.read(lease, timeout: -1)
                reader.signal()
            }
            usleep(50_000)
            lease.revoke()
            #expect(reader.wait(timeout: .now() + 10) == .success)
            #expect(outcome.value == .over(.revoked))
            #expect(returns.value == 0)
            // Revoked before any read: the same, and bytes sent meanwhile are left alone.
            let second = Self.lease(on: pair.client, budget: 1000, returns: returns)
            second.revoke()
            pair.send(5)
            #expect(Self.read(second) == .over(.revoked))
            var rest = [UInt8](repeating: 0, count: 10)
            #expect(recv(pair.client, &rest, 10, Int32(MSG_DONTWAIT)) == 5)
            #expect(returns.value == 0)
        }
    }

    /// The idle limit's rule as a value: any durations, no sleeping.
    @Test func silenceCountsOnlyWhileTheReaderWaits() {
        func ms(_ n: UInt64) -> UInt64 { n * 1_000_000 }
        var silence = LeaseSilence(limitMillis: 2000)
        #expect(silence.allowance == ms(2000))
        let first = silence.waited(ms(1200))
        // Away for 2.5 s (nothing is reported): the server is not silent while nobody asks.
        let second = silence.waited(ms(300))
        #expect(!first && !second, "1.5 s of waiting")
        #expect(silence.allowance == ms(500), "a wait never goes past the limit")
        silence.heard()
        let afterByte = silence.waited(ms(900))
        #expect(!afterByte, "a byte starts the count again")
        let atLimit = silence.waited(ms(1100))
        #expect(atLimit, "2 s of waiting since the byte")
        #expect(silence.allowance == 0)
        var unlimited = LeaseSilence(limitMillis: .max)
        let never = unlimited.waited(.max / 2)
        #expect(unlimited.allowance == .max && !never)
    }

    /// A reader that polls a descriptor: silence counts from its first read that found nothing.
    @Test func aPollingReaderCountsFromItsFirstEmptyRead() {
        func ms(_ n: UInt64) -> UInt64 { n * 1_000_000 }
        var silence = LeaseSilence(limitMillis: 2000)
        let first = silence.foundNothing(at: ms(10_000))
        let later = silence.foundNothing(at: ms(11_500))
        #expect(first == ms(2000))
        #expect(later == ms(500), "the timer is set for what is left")
        silence.heard()
        let afterByte = silence.foundNothing(at: ms(20_000))
        let atLimit = silence.foundNothing(at: ms(22_000))
        #expect(afterByte == ms(2000), "a byte starts it again")
        #expect(atLimit == nil, "the limit reached")
    }

    /// On a socket: a waiting reader meets the limit and the lease goes back, once; a byte read
    /// before is delivered.
    @Test func aSilentSocketEndsTheLease() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let pair = Pair()
            defer { pair.close() }
            let returns = Returns()
            let lease = Self.lease(on: pair.client, budget: 1000, idleMillis: 200, returns: returns)
            pair.send(1)
            #expect(Self.read(lease, timeout: -1) == .bytes(1))
            #expect(Self.read(lease, timeout: -1) == .over(.silent))
            #expect(lease.end == .silent)
            #expect(returns.value == 1)
        }
    }

    @Test func theLeaseReadsThroughItsOwnDescriptor() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let pair = Pair()
            defer { close(pair.peer) }
            let lease = Self.lease(on: pair.client, budget: 1000, returns: Returns())
            pair.send(20)
            // The loop closing its connection takes nothing from under the reader.
            close(pair.client)
            #expect(Self.read(lease) == .bytes(20))
            // Nor does a new descriptor that gets the old number.
            let other = Pair()
            defer { other.close() }
            pair.send(3)
            #expect(Self.read(lease) == .bytes(3))
        }
    }

    @Test func aResetIsAFailure() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(listener) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    #expect(bind(listener, raw, length) == 0)
                    #expect(listen(listener, 1) == 0)
                    #expect(getsockname(listener, raw, &length) == 0)
                }
            }
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(client) }
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
            }
            #expect(connected == 0)
            let server = accept(listener, nil, nil)
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(server, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(server)
            let lease = Self.lease(on: client, budget: 1000, returns: Returns())
            #expect(Self.read(lease) == .over(.failed(ECONNRESET)))
        }
    }
}
