import Dispatch
import Foundation
import Glibc
import Testing
@testable import CourierCore

/// A connection lending its reads to a body consumer's thread (`ReadLease`), over the socketpair
/// rig of `HTTP1ConnectionTests`: the rest of a long Content-Length body goes to that thread, the
/// last byte comes through the loop so the exchange ends as any other, and every way a lease can
/// end (silence, the peer closing, the loop taking it back) ends the exchange as the loop would.
@Suite("Leased body reads")
struct LeasedBodyTests {
    typealias Rig = HTTP1ConnectionTests.Rig

    /// A consumer that takes leases and keeps what the loop delivers (loop thread) apart from what
    /// the test reads through the lease (its own thread).
    final class Taker: ReadLanding, ReadLeaseTaker, @unchecked Sendable {
        private let lock = Lock()
        private var _delivered: [UInt8] = []
        private var _lease: ReadLease?
        private var _offers = 0

        func landingZone() -> UnsafeMutableRawBufferPointer? { nil }
        func landed() {}

        func take(_ lease: ReadLease) -> Bool {
            lock.withLock {
                _offers += 1
                _lease = lease
            }
            return true
        }

        func deliver(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
            lock.withLock { _delivered += bytes }
            return .proceed
        }

        var delivered: [UInt8] { lock.withLock { _delivered } }
        var offers: Int { lock.withLock { _offers } }

        /// The lease, once the connection gave it (waiting up to 10 s).
        func lease() -> ReadLease? {
            for _ in 0..<10_000 {
                if let lease = lock.withLock({ _lease }) { return lease }
                usleep(1000)
            }
            return nil
        }
    }

    static func streamed(_ path: String, to taker: Taker, idle: Nanoseconds? = nil) -> Transfer {
        var options = TransferOptions()
        options.decompress = false
        options.timeouts.idle = idle
        let transfer = Transfer(url: try! CourierURL(parsing: "http://test.example" + path), options: options)
        transfer._sink = .stream(StreamSink(landing: taker, leaseTaker: taker) { taker.deliver($0) })
        return transfer
    }

    /// Bytes of a body: position `i` holds `i % 251`, so any slip shows.
    static func body(_ range: Range<Int>) -> [UInt8] { range.map { UInt8($0 % 251) } }

    static func send(_ bytes: [UInt8], on rig: Rig) {
        bytes.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = write(rig.server, raw.baseAddress! + sent, raw.count - sent)
                guard n > 0 else { return }
                sent += n
            }
        }
    }

    /// Reads through `lease` on this thread until it ends: the bytes and the end.
    static func drain(_ lease: ReadLease) -> ([UInt8], ReadLease.End) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { buffer.deallocate() }
        var bytes: [UInt8] = []
        while true {
            switch lease.read(into: buffer, capacity: 64 << 10, timeoutMillis: -1) {
            case .bytes(let n): bytes += UnsafeRawBufferPointer(start: buffer, count: n)
            case .again: continue
            case .over(let end): return (bytes, end)
            }
        }
    }

    /// An exchange for `path` on a fresh rig with a taker: `body` plays the server once the
    /// request head was read; the rig is torn down after it.
    func streaming(_ path: String, idle: Nanoseconds? = nil, _ body: @escaping @Sendable (Rig, Taker, Transfer) -> Void) async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            let taker = Taker()
            let transfer = Self.streamed(path, to: taker, idle: idle)
            rig.begin(transfer)
            _ = rig.readRequestHead()
            body(rig, taker, transfer)
            rig.tearDown()
        }
    }

    @Test func theRestOfALongBodyIsReadOnTheConsumersThread() async throws {
        try await streaming("/long") { rig, taker, transfer in
            let size = 300_000
            Self.send(Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8) + Self.body(0..<1000), on: rig)
            guard let lease = taker.lease() else { Issue.record("no lease"); return }
            #expect(lease.budget == UInt64(size - 1000 - 1))
            // The server writes the rest (more than a socketpair holds) while the test reads.
            let writer = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                for start in stride(from: 1000, to: size, by: 70_001) { Self.send(Self.body(start..<min(start + 70_001, size)), on: rig) }
                writer.signal()
            }
            let (leased, end) = Self.drain(lease)
            writer.wait()
            #expect(end == .budgetUsed)
            #expect(leased.count == size - 1001)
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            // The loop delivered the first piece and the last byte; the lease everything between.
            let delivered = taker.delivered
            #expect(delivered.count == 1001)
            let whole = Array(delivered.prefix(1000)) + leased + Array(delivered.suffix(1)) == Self.body(0..<size)
            #expect(whole, "the body in order, every byte once")
            #expect(taker.offers == 1)
            #expect(ReadLandingTests.onLoop(rig) { transfer.metrics.bodyBytesReceived } == UInt64(size))

            // The parser is in step: the next exchange on the connection reads as usual.
            let next = HTTP1ConnectionTests.transfer("/next")
            rig.begin(next)
            _ = rig.readRequestHead()
            rig.send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            #expect(next.responseBody == Array("hello".utf8))
        }
    }

    @Test func silenceOnTheConsumersThreadIsAnIdleTimeout() async throws {
        try await streaming("/silent", idle: .milliseconds(300)) { rig, taker, _ in
            Self.send(Array("HTTP/1.1 200 OK\r\nContent-Length: 300000\r\n\r\n".utf8) + Self.body(0..<1000), on: rig)
            guard let lease = taker.lease() else { Issue.record("no lease"); return }
            Self.send(Self.body(1000..<3000), on: rig)
            let (leased, end) = Self.drain(lease)
            let same = leased == Self.body(1000..<3000)
            #expect(same)
            #expect(end == .silent)
            #expect(rig.owner.next() == .finished(success: false, reusable: false, replay: false, code: .idleTimeout))
        }
    }

    @Test func theLoopTakesTheReadsBackWhenTheExchangeEnds() async throws {
        try await streaming("/cancelled") { rig, taker, _ in
            Self.send(Array("HTTP/1.1 200 OK\r\nContent-Length: 300000\r\n\r\n".utf8) + Self.body(0..<1000), on: rig)
            guard let lease = taker.lease() else { Issue.record("no lease"); return }
            let reader = DispatchSemaphore(value: 0)
            let outcome = ReadLandingTests.Box<ReadLease.End?>(nil)
            Thread.detachNewThread {
                outcome.value = Self.drain(lease).1
                reader.signal()
            }
            usleep(50_000)
            rig.onLoop { rig.connection.abort(CourierError(.cancelled)) }
            #expect(reader.wait(timeout: .now() + 10) == .success)
            #expect(outcome.value == .revoked)
            #expect(rig.owner.next() == .finished(success: false, reusable: false, replay: false, code: .cancelled))
        }
    }

    @Test func aPeerClosingMidBodyLeavesATruncatedBody() async throws {
        try await streaming("/cut") { rig, taker, transfer in
            Self.send(Array("HTTP/1.1 200 OK\r\nContent-Length: 300000\r\n\r\n".utf8) + Self.body(0..<1000), on: rig)
            guard let lease = taker.lease() else { Issue.record("no lease"); return }
            Self.send(Self.body(1000..<6000), on: rig)
            shutdown(rig.server, Int32(SHUT_WR))
            let (leased, end) = Self.drain(lease)
            let same = leased == Self.body(1000..<6000)
            #expect(same)
            #expect(end == .closed)
            #expect(rig.owner.next() == .finished(success: false, reusable: false, replay: false, code: .truncatedBody))
            #expect(ReadLandingTests.onLoop(rig) { transfer.metrics.bodyBytesReceived } == 6000)
        }
    }

    @Test func bytesAfterALeasedBodyStillPoisonTheConnection() async throws {
        try await streaming("/trailing") { rig, taker, _ in
            let size = 200_000
            Self.send(Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8) + Self.body(0..<1000), on: rig)
            guard let lease = taker.lease() else { Issue.record("no lease"); return }
            Thread.detachNewThread { Self.send(Self.body(1000..<size) + Array("HTTP/1.1 200 OK\r\n".utf8), on: rig) }
            let (leased, end) = Self.drain(lease)
            #expect(end == .budgetUsed)
            let same = leased == Self.body(1000..<(size - 1))
            #expect(same)
            #expect(rig.owner.next() == .finished(success: true, reusable: false, replay: false, code: nil))
        }
    }

    @Test func shortAndChunkedBodiesAreNotLeased() async throws {
        try await streaming("/short") { rig, taker, _ in
            // At the lease's lower bound (what is left after the first piece): read by the loop.
            let size = 1000 + Int(ReceiveFlow.smallestLease)
            Self.send(Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8) + Self.body(0..<1000), on: rig)
            usleep(20_000)
            Self.send(Self.body(1000..<size), on: rig)
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            #expect(taker.offers == 0)
            let short = taker.delivered == Self.body(0..<size)
            #expect(short)

            let chunked = Self.streamed("/chunked", to: taker)
            rig.begin(chunked)
            _ = rig.readRequestHead()
            let data = Self.body(0..<300_000)
            Self.send(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n".utf8) + Array(data.prefix(1000)) + [13, 10], on: rig)
            usleep(20_000)
            Thread.detachNewThread {
                Self.send(Array("\(String(299_000, radix: 16))\r\n".utf8) + Array(data.dropFirst(1000)) + Array("\r\n0\r\n\r\n".utf8), on: rig)
            }
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            #expect(taker.offers == 0)
            let chunks = taker.delivered.suffix(300_000) == data[...]
            #expect(chunks)
        }
    }
}
