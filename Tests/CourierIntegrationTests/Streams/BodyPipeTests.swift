@testable import CourierCABI
@testable import CourierCore
import CourierHeader
import Foundation
import Testing

/// The C ABI's body pipe as a value between two threads, without sockets: this test's thread plays
/// the loop (zones, pieces, landings, the end) and a second thread is the reader in
/// `courier_request_read`. What is checked is where the bytes go: a reader that waits lends its
/// own buffer, and a read that lands there is never copied.
@Suite("C body pipe")
struct BodyPipeTests {
    /// A pipe on a request that is never sent (the pipe needs one only for its readable callback).
    final class Bench: @unchecked Sendable {
        let engine: OpaquePointer
        let handle: OpaquePointer
        let pipe: CBodyPipe
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 << 10, alignment: 16)
        let capacity = 64 << 10
        let outcome = OutcomeBox()
        /// Signalled when the reader lent its buffer, and when its time ran out while a read
        /// lands there (the pipe's `readerEvents`).
        let lent = DispatchSemaphore(value: 0)
        let waitingForLanding = DispatchSemaphore(value: 0)

        init() {
            var engine: OpaquePointer?
            courier_engine_create(nil, &engine)
            var handle: OpaquePointer?
            courier_request_create(engine, "GET", "http://127.0.0.1:9/", &handle)
            self.engine = engine!
            self.handle = handle!
            pipe = CBodyPipe(limit: 256 << 10, request: request(handle)!, readable: nil)
            pipe.readerEvents = { [lent, waitingForLanding] event in
                switch event {
                case .lent: lent.signal()
                case .waitingForLanding: waitingForLanding.signal()
                }
            }
        }

        deinit {
            buffer.deallocate()
            courier_request_free(handle)
            courier_engine_destroy(engine)
        }

        /// Starts one `read` on another thread; its result lands in `outcome`.
        func startRead(timeout: Int) {
            Thread.detachNewThread { [self] in
                let result = pipe.read(into: buffer, capacity: capacity, timeout: timeout) {}
                outcome.set(result)
            }
        }

        /// The zone the pipe hands out once the reader lent its buffer (nil when it never did:
        /// the wait's deadline is for a lost event only).
        func lentZone() -> UnsafeMutableRawBufferPointer? {
            guard lent.wait(timeout: .now() + 10) == .success, let zone = pipe.landingZone() else { return nil }
            return zone.baseAddress! >= buffer && zone.baseAddress! < buffer + capacity ? zone : nil
        }

        /// A socket read of `bytes` into `zone`, delivered as one piece.
        func land(_ bytes: [UInt8], in zone: UnsafeMutableRawBufferPointer) {
            bytes.withUnsafeBytes { zone.copyMemory(from: $0) }
            _ = pipe.sink.deliver(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(zone)[0..<bytes.count]))
        }

        func deliver(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { pipe.sink.deliver($0) }
        }

        func received(_ n: Int) -> [UInt8] { Array(UnsafeRawBufferPointer(start: buffer, count: n)) }

        /// A read on this thread, into memory of its own (the buffer above may still be lent).
        func readHere(timeout: Int = 2000) -> (Int32, [UInt8]) {
            var own = [UInt8](repeating: 0, count: 1 << 20)
            let (code, n) = own.withUnsafeMutableBytes { pipe.read(into: $0.baseAddress!, capacity: $0.count, timeout: timeout) {} }
            return (code, Array(own[..<n]))
        }
    }

    final class OutcomeBox: @unchecked Sendable {
        private let lock = NSCondition()
        private var value: (Int32, Int)?

        func set(_ result: (Int32, Int)) {
            lock.lock()
            value = result
            lock.broadcast()
            lock.unlock()
        }

        func peek() -> (Int32, Int)? {
            lock.lock()
            defer { lock.unlock() }
            return value
        }

        func wait(seconds: Double = 5) -> (Int32, Int)? {
            lock.lock()
            defer { lock.unlock() }
            let deadline = Date().addingTimeInterval(seconds)
            while value == nil, lock.wait(until: deadline) {}
            return value
        }
    }

    /// (The header's constant; the library module declares one too.)
    static let ok = CourierHeader.COURIER_OK

    /// A pipe with a reader waiting on another thread (`timeout` ms), and the buffer it lent.
    static func lending(timeout: Int) throws -> (Bench, UnsafeMutableRawBufferPointer) {
        let bench = Bench()
        bench.startRead(timeout: timeout)
        let zone = try #require(bench.lentZone(), "the waiting reader lent no buffer")
        return (bench, zone)
    }

    static func bytes(_ count: Int, _ seed: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7) &+ seed } }

    @Test func aWaitingReaderLendsItsBufferAndTheReadLandsInIt() throws {
        let (bench, zone) = try Self.lending(timeout: -1)
        #expect(zone.baseAddress == UnsafeMutableRawPointer(bench.buffer), "the zone starts where the reader's buffer does")
        let sent = Self.bytes(40_000, 3)
        bench.land(sent, in: zone)
        bench.pipe.landed()
        let (code, n) = try #require(bench.outcome.wait(), "the reader was not woken")
        #expect(code == Self.ok)
        #expect(n == sent.count)
        #expect(bench.received(n) == sent)
    }

    /// Chunk framing inside a read: the pieces are moved down inside the lent buffer.
    @Test func piecesAfterFramingAreSqueezedTogetherInTheLentBuffer() throws {
        let (bench, zone) = try Self.lending(timeout: -1)
        // "<5000 bytes>\r\n1f40\r\n<8000 bytes>": two pieces with 8 bytes of framing between them.
        let first = Self.bytes(5000, 1), second = Self.bytes(8000, 9)
        let framing = Array("\r\n1f40\r\n".utf8)
        (first + framing + second).withUnsafeBytes { zone.copyMemory(from: $0) }
        let raw = UnsafeRawBufferPointer(zone)
        _ = bench.pipe.sink.deliver(UnsafeRawBufferPointer(rebasing: raw[0..<5000]))
        _ = bench.pipe.sink.deliver(UnsafeRawBufferPointer(rebasing: raw[5008..<13_008]))
        bench.pipe.landed()
        let (code, n) = try #require(bench.outcome.wait())
        #expect(code == Self.ok)
        #expect(bench.received(n) == first + second)
    }

    /// A piece that does not fit where the reader's buffer ends waits in the pipe, and so does
    /// every piece after it: the reader gets them in order, on its next read.
    @Test func whatDoesNotFitWaitsInOrderForTheNextRead() throws {
        let (bench, zone) = try Self.lending(timeout: -1)
        let head = Self.bytes(60_000, 5)
        bench.land(head, in: zone)
        bench.pipe.landed()
        // Before the reader has run: more than the 5,536 bytes left, then a small piece.
        let big = Self.bytes(10_000, 7), small = Self.bytes(100, 11)
        bench.deliver(big)
        bench.deliver(small)
        let (code, n) = try #require(bench.outcome.wait())
        #expect(code == Self.ok)
        #expect(bench.received(n) == head, "the lent buffer holds the first read and nothing after it")
        let (nextCode, next) = bench.readHere()
        #expect(nextCode == Self.ok)
        #expect(next == big + small)
    }

    /// The reader's time is up while a read is landing in its buffer: it waits for that read to
    /// end before it takes the buffer back, and returns its bytes (not AGAIN, and nothing written
    /// into the buffer once it has returned).
    @Test func aReaderWhoseTimeIsUpWaitsForTheReadLandingInItsBuffer() throws {
        // (Half a second: the zone is taken after the reader lent it and before its time runs
        // out, which 50 ms did not leave room for on a loaded machine.)
        let (bench, zone) = try Self.lending(timeout: 500)
        // The reader's time runs out while the read lands: it says so, and waits.
        #expect(bench.waitingForLanding.wait(timeout: .now() + 10) == .success, "the reader's time never ran out")
        #expect(bench.outcome.peek() == nil, "the reader returned while a read was landing in its buffer")
        let sent = Self.bytes(1000, 2)
        bench.land(sent, in: zone)
        #expect(bench.outcome.peek() == nil)
        bench.pipe.landed()
        let (code, n) = try #require(bench.outcome.wait())
        #expect(code == Self.ok)
        #expect(bench.received(n) == sent)
        // The next read lends nothing to a thread that is gone: pieces wait in the pipe.
        bench.deliver(Self.bytes(10, 4))
        #expect(bench.readHere(timeout: 0) == (Self.ok, Self.bytes(10, 4)))
    }

    /// The end comes while the reader's buffer holds bytes: the bytes first, then the end.
    @Test func theEndComesAfterTheBytesInTheLentBuffer() throws {
        let (bench, zone) = try Self.lending(timeout: -1)
        let sent = Self.bytes(3000, 8)
        bench.land(sent, in: zone)
        bench.pipe.finish(Self.ok, notify: false)
        bench.pipe.landed()
        let (code, n) = try #require(bench.outcome.wait())
        #expect(code == Self.ok)
        #expect(bench.received(n) == sent)
        #expect(bench.readHere() == (Self.ok, []))
    }

    /// A reader that does not wait (timeout 0, the asyncio side) lends nothing.
    @Test func aReaderThatDoesNotWaitLendsNothing() throws {
        let bench = Bench()
        #expect(bench.readHere(timeout: 0).0 == CourierError.Code.again.c)
        let zone = try #require(bench.pipe.landingZone())
        #expect(!(zone.baseAddress! >= bench.buffer && zone.baseAddress! < bench.buffer + bench.capacity))
        bench.pipe.landed()
    }
}
