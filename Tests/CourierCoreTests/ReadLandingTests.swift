import Dispatch
import Glibc
import Testing
@testable import CourierCore

/// Reads that land in a body consumer's own memory (`ReadLanding`), over the socketpair rig of
/// `HTTP1ConnectionTests`: once the body has begun, the stream reads into the zone the consumer
/// offers, the pieces it is given lie inside that zone, the bytes are the body's, and the offer
/// ends with the exchange.
@Suite("Read landing")
struct ReadLandingTests {
    /// A consumer keeping the body at the front of its own buffer, as the C ABI's pipe does, and
    /// counting what arrived in place and what had to be copied. Loop thread only.
    final class Keeper: ReadLanding, @unchecked Sendable {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 64)
        var kept = 0
        var zones = 0
        var landings = 0
        var open = false
        var inPlace = 0
        var copied = 0

        deinit { memory.deallocate() }

        func landingZone() -> UnsafeMutableRawBufferPointer? {
            #expect(!open, "a second zone before the first landed")
            zones += 1
            open = true
            return UnsafeMutableRawBufferPointer(rebasing: memory[kept...])
        }

        func landed() {
            #expect(open, "landed without a zone")
            landings += 1
            open = false
        }

        func take(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
            let start = UnsafeRawPointer(memory.baseAddress!)
            if let base = bytes.baseAddress, base >= start, base + bytes.count <= start + memory.count {
                inPlace += bytes.count
            } else {
                copied += bytes.count
            }
            // Kept at the front: a move when the piece landed here (past a chunk header), a copy if not.
            memmove(memory.baseAddress! + kept, bytes.baseAddress!, bytes.count)
            kept += bytes.count
            return .proceed
        }

        var body: [UInt8] { Array(memory[..<kept]) }
    }

    typealias Rig = HTTP1ConnectionTests.Rig

    static func streamed(_ path: String, to keeper: Keeper, decompress: Bool = false) -> Transfer {
        var options = TransferOptions()
        options.decompress = decompress
        let transfer = Transfer(url: try! CourierURL(parsing: "http://test.example" + path), options: options)
        transfer._sink = .stream(StreamSink(landing: keeper) { keeper.take($0) })
        return transfer
    }

    /// A box for what a closure on the loop thread reads out for the test thread.
    final class Box<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// What `body` gives on the loop thread (where the keeper lives).
    static func onLoop<Value>(_ rig: Rig, _ body: @escaping @Sendable () -> Value) -> Value {
        let box = Box<Value?>(nil)
        rig.onLoop { box.value = body() }
        return box.value!
    }

    /// Waits (up to 10 s) until the array keeper holds `count` body bytes.
    static func waitForArrays(holding count: Int, in keeper: ArrayKeeper, rig: Rig) {
        for _ in 0..<10_000 {
            if onLoop(rig, { keeper.body.count }) >= count { return }
            usleep(1_000)
        }
    }

    /// Waits (up to 10 s) until the keeper holds `count` bytes.
    static func wait(for count: Int, in keeper: Keeper, rig: Rig) {
        for _ in 0..<10_000 {
            if onLoop(rig, { keeper.kept }) >= count { return }
            usleep(1000)
        }
    }

    static func piece(_ count: Int, _ seed: Int) -> String {
        String((0..<count).map { Character(Unicode.Scalar(UInt8(97 + ($0 &* 7 &+ seed) % 26))) })
    }

    /// A connection on the rig streaming `path` to a new keeper (off the cooperative pool): the
    /// request head is read, `body` plays the server, the rig is torn down after it.
    func streaming(_ path: String, decompress: Bool = false, _ body: @escaping @Sendable (Rig, Keeper) -> Void) async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            let keeper = Keeper()
            rig.begin(Self.streamed(path, to: keeper, decompress: decompress))
            _ = rig.readRequestHead()
            body(rig, keeper)
            rig.tearDown()
        }
    }

    @Test func readsAfterTheFirstPieceLandInTheConsumersMemory() async throws {
        try await streaming("/body") { rig, keeper in
            let parts = [Self.piece(1000, 1), Self.piece(30_000, 2), Self.piece(5000, 3)]
            rig.send("HTTP/1.1 200 OK\r\nContent-Length: 36000\r\n\r\n" + parts[0])
            Self.wait(for: 1000, in: keeper, rig: rig)
            rig.send(parts[1])
            Self.wait(for: 31_000, in: keeper, rig: rig)
            rig.send(parts[2])
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            let facts = Self.onLoop(rig) { (inPlace: keeper.inPlace, copied: keeper.copied, zones: keeper.zones,
                                            landings: keeper.landings, body: keeper.body) }
            // The head's read went to the loop's buffer; every later one to the keeper's zone.
            #expect(facts.copied == 1000)
            #expect(facts.inPlace == 35_000)
            #expect(facts.zones == facts.landings && facts.zones >= 2)
            #expect(facts.body == Array(parts.joined().utf8))

            // The next exchange on the connection collects in memory: no zone is asked for.
            let next = HTTP1ConnectionTests.transfer("/next")
            rig.begin(next)
            _ = rig.readRequestHead()
            rig.send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            #expect(Self.onLoop(rig) { keeper.zones } == facts.zones)
            #expect(next.responseBody == Array("hello".utf8))
        }
    }

    @Test func chunkFramingIsSqueezedOutInPlace() async throws {
        try await streaming("/chunked") { rig, keeper in
            let first = Self.piece(700, 4)
            rig.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2bc\r\n" + first + "\r\n")
            Self.wait(for: 700, in: keeper, rig: rig)
            // Several chunks in one read, and reads that end inside a size line and inside data.
            let chunks = [Self.piece(5, 5), Self.piece(4093, 6), Self.piece(20_000, 7), Self.piece(1, 8)]
            var wire = chunks.map { String($0.utf8.count, radix: 16) + "\r\n" + $0 + "\r\n" }.joined() + "0\r\n\r\n"
            for cut in [3, 4100, 9] {
                rig.send(String(wire.prefix(cut)))
                wire.removeFirst(cut)
                usleep(20_000)  // (lets each write be a read of its own; any split is correct)
            }
            rig.send(wire)
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            let facts = Self.onLoop(rig) { (inPlace: keeper.inPlace, copied: keeper.copied, body: keeper.body) }
            #expect(facts.body == Array((first + chunks.joined()).utf8))
            #expect(facts.copied == 700)
            #expect(facts.inPlace == facts.body.count - 700)
        }
    }

    /// A consumer that keeps `[UInt8]` pieces: reads go into arrays the stream makes (at most
    /// `readArrayCapacity` each), and a piece that is a whole array is that array.
    final class ArrayKeeper: ReadLanding, @unchecked Sendable {
        var arrival: [UInt8]?
        var arrays = 0
        var largestArray = 0
        var whole = 0
        var partial = 0
        var body: [UInt8] = []

        func landingZone() -> UnsafeMutableRawBufferPointer? { nil }
        func landed() { arrival = nil }
        var readArrayCapacity: Int { 64 << 10 }
        func arrayArrived(_ array: [UInt8]) {
            arrival = array
            arrays += 1
            largestArray = max(largestArray, array.count)
        }

        func take(_ bytes: UnsafeRawBufferPointer) -> BodyVerdict {
            let isWhole = arrival?.withUnsafeBytes { $0.baseAddress == bytes.baseAddress && $0.count == bytes.count } ?? false
            if isWhole { whole += 1 } else { partial += 1 }
            body += bytes
            return .proceed
        }
    }

    @Test func arrayReadsGoUpAsTheArraysTheyFilled() async throws {
        try await HTTP1ConnectionTests().offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            let keeper = ArrayKeeper()
            var options = TransferOptions()
            options.decompress = false
            let transfer = Transfer(url: try! CourierURL(parsing: "http://test.example/arrays"), options: options)
            transfer._sink = .stream(StreamSink(landing: keeper) { keeper.take($0) })
            rig.begin(transfer)
            _ = rig.readRequestHead()
            let parts = [Self.piece(1000, 1), Self.piece(30_000, 2), Self.piece(20_000, 3), Self.piece(150_000, 4)]
            rig.send("HTTP/1.1 200 OK\r\nContent-Length: 201000\r\n\r\n" + parts[0])
            // Each part once the one before it has landed: a read of its own, whatever the load.
            var sent = parts[0].utf8.count
            for part in parts.dropFirst() {
                Self.waitForArrays(holding: sent, in: keeper, rig: rig)
                rig.send(part)
                sent += part.utf8.count
            }
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            let facts = Self.onLoop(rig) { (body: keeper.body, arrays: keeper.arrays, largest: keeper.largestArray,
                                            whole: keeper.whole, partial: keeper.partial) }
            let same = facts.body == Array(parts.joined().utf8)
            #expect(same, "the body in order")
            // The head's read went to the loop's buffer (one piece copied); every later read
            // into an array of at most 64 KiB, delivered whole.
            #expect(facts.partial == 1)
            #expect(facts.whole == facts.arrays && facts.arrays >= 5, "\(facts.arrays) arrays, \(facts.whole) whole")
            #expect(facts.largest <= 64 << 10)
            rig.tearDown()
        }
    }

    @Test func aDecodedBodyIsNotOfferedZones() async throws {
        try await streaming("/gzip", decompress: true) { rig, keeper in
            // "hello, landing" gzip-compressed (the decoder's output is not in any zone, and the
            // compressed input must not be overwritten by it).
            let gzip: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9,
                                 0xc9, 0xd7, 0x51, 0xc8, 0x49, 0xcc, 0x4b, 0xc9, 0xcc, 0x4b, 0x07, 0x00, 0x94, 0xf9,
                                 0x7c, 0xc5, 0x0e, 0x00, 0x00, 0x00]
            rig.send("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(gzip.count)\r\n\r\n")
            gzip.withUnsafeBytes { _ = write(rig.server, $0.baseAddress, 10) }
            usleep(20_000)
            gzip.withUnsafeBytes { _ = write(rig.server, $0.baseAddress! + 10, gzip.count - 10) }
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            let facts = Self.onLoop(rig) { (zones: keeper.zones, body: keeper.body) }
            #expect(facts.zones == 0)
            #expect(facts.body == Array("hello, landing".utf8))
        }
    }
}
