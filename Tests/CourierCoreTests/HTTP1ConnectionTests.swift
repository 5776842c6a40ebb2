import Dispatch
import Glibc
import Synchronization
import Testing
@testable import CourierCore

/// One `HTTP1Connection` owned by a fake owner, over a socketpair, on a loop of its own: the
/// connection's I/O half without the runtime, the pool or a server process. The test plays the
/// server on the other end of the pair.
@Suite("HTTP1Connection over a socketpair")
struct HTTP1ConnectionTests {
    /// What the connection told its owner, in order.
    enum Event: Equatable, CustomStringConvertible {
        case established
        case connectFailed(CourierError.Code)
        case idleClosed
        case finished(success: Bool, reusable: Bool, replay: Bool, code: CourierError.Code?)

        var description: String {
            switch self {
            case .established: return "established"
            case .connectFailed(let code): return "connectFailed(\(code.rawValue))"
            case .idleClosed: return "idleClosed"
            case .finished(let ok, let reusable, let replay, let code):
                return "finished(ok: \(ok), reusable: \(reusable), replay: \(replay), code: \(code.map { "\($0.rawValue)" } ?? "-"))"
            }
        }
    }

    /// The owner the connection reports to; events can be awaited one by one.
    final class FakeOwner: HTTP1ConnectionDelegate, @unchecked Sendable {
        private let events = Mutex<[Event]>([])
        private let arrived = DispatchSemaphore(value: 0)

        private func record(_ event: Event) {
            events.withLock { $0.append(event) }
            arrived.signal()
        }

        /// The next event, waiting up to 10 s (nil when none came: a hang).
        func next() -> Event? {
            guard arrived.wait(timeout: .now() + 10) == .success else { return nil }
            return events.withLock { $0.removeFirst() }
        }

        func connectionEstablished(_ connection: HTTP1Connection) { record(.established) }
        func connectionFailed(_ connection: HTTP1Connection, error: CourierError) { record(.connectFailed(error.code)) }
        func idleConnectionClosed(_ connection: HTTP1Connection) { record(.idleClosed) }
        func approveStatusRetry(_ transfer: Transfer, status: Int) -> Bool { true }
        func exchangeFinished(_ connection: HTTP1Connection, _ transfer: Transfer, outcome: ExchangeOutcome) {
            switch outcome {
            case .success(let reusable): record(.finished(success: true, reusable: reusable, replay: false, code: nil))
            case .failure(let error, let replay): record(.finished(success: false, reusable: false, replay: replay, code: error.code))
            }
        }
    }

    /// A loop thread, a connection on one end of a socketpair, the test on the other.
    final class Rig: @unchecked Sendable {
        let loop: EventLoop
        let owner = FakeOwner()
        let resources: HTTP1Resources
        let server: Int32
        private(set) var connection: HTTP1Connection!

        init(connectTimeout: Nanoseconds? = nil) throws {
            var pair: [Int32] = [0, 0]
            precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            server = pair[1]
            loop = try EventLoop { job in
                if case .run(let body) = job { body() }
            }
            try loop.start {}
            resources = HTTP1Resources(post: { [loop] body in loop.enqueue(.run(body)) })
            let client = pair[0]
            onLoop { [self] in
                let stream = SocketStream(adopting: client, uvLoop: loop.uvLoop)
                connection = HTTP1Connection(id: 1, poolKey: 0, origin: Origin(scheme: .http, host: "test.example", port: 80),
                                             stream: stream, owner: owner, resources: resources, uvLoop: loop.uvLoop,
                                             connectTimeout: connectTimeout)
                connection.connect()
            }
        }

        /// Runs `body` on the loop thread and waits for it.
        func onLoop(_ body: @escaping @Sendable () -> Void) {
            let done = DispatchSemaphore(value: 0)
            loop.enqueue(.run {
                body()
                done.signal()
            })
            done.wait()
        }

        /// Starts an exchange for `transfer` (admitted as the runtime would).
        func begin(_ transfer: Transfer) {
            onLoop { [self] in
                #expect(Admission.check(transfer) == nil)
                // The transfer's own machine goes where the executor would take it.
                _ = transfer.machine.accept(refusal: nil, queueDeadline: .max)
                _ = transfer.machine.started(totalDeadline: .max)
                transfer.machine.connectionAssigned()
                transfer.carrier = connection
                connection.begin(transfer)
            }
        }

        /// Reads what the client wrote until the end of a request head.
        func readRequestHead() -> String {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while !bytes.suffix(4).elementsEqual([13, 10, 13, 10]) {
                guard read(server, &byte, 1) == 1 else { break }
                bytes.append(byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            bytes.withUnsafeBytes { _ = write(server, $0.baseAddress, $0.count) }
        }

        /// Closes the connection and stops the loop (every handle closed, the loop joined).
        func tearDown() {
            onLoop { [self] in
                connection.closeFromPool()
                loop.closeWakeup()
            }
            loop.join()
            close(server)
        }
    }

    /// Runs blocking test code (semaphores, socket reads) on a dispatch thread: blocking one of
    /// the few cooperative threads would stall every other test of the process.
    func offTheCooperativePool(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            DispatchQueue.global().async {
                do {
                    try body()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    static func transfer(_ path: String, options: TransferOptions = TransferOptions()) -> Transfer {
        var options = options
        options.decompress = false
        return Transfer(url: try! CourierURL(parsing: "http://test.example" + path), options: options)
    }

    @Test func keepAliveExchangesThenTheServerCloses() async throws {
        try await offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            let first = Self.transfer("/one")
            rig.begin(first)
            let head = rig.readRequestHead()
            #expect(head.hasPrefix("GET /one HTTP/1.1\r\nHost: test.example\r\n"), "\(head)")
            rig.send("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            #expect(first.responseBody == Array("hello".utf8))
            #expect(first.status == 200)

            // The same connection serves the next request.
            let second = Self.transfer("/two?x=1")
            rig.begin(second)
            #expect(rig.readRequestHead().hasPrefix("GET /two?x=1 HTTP/1.1\r\n"))
            rig.send("HTTP/1.1 204 No Content\r\n\r\n")
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            rig.onLoop { rig.connection.becameIdle() }

            // The server closes the idle connection: the owner hears of it at once.
            shutdown(rig.server, Int32(SHUT_WR))
            #expect(rig.owner.next() == .idleClosed)
            rig.tearDown()
        }
    }

    @Test func aStaleReusedConnectionAsksForAReplay() async throws {
        try await offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            rig.begin(Self.transfer("/first"))
            _ = rig.readRequestHead()
            rig.send("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            #expect(rig.owner.next() == .finished(success: true, reusable: true, replay: false, code: nil))
            rig.begin(Self.transfer("/second"))
            _ = rig.readRequestHead()
            // Closed without a byte of the second response: the idempotent request may go again.
            shutdown(rig.server, Int32(SHUT_WR))
            #expect(rig.owner.next() == .finished(success: false, reusable: false, replay: true, code: .emptyReply))
            rig.tearDown()
        }
    }

    @Test func truncatedBodyFailsWithoutReplay() async throws {
        try await offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            let transfer = Self.transfer("/cut")
            rig.begin(transfer)
            _ = rig.readRequestHead()
            rig.send("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")
            shutdown(rig.server, Int32(SHUT_WR))
            #expect(rig.owner.next() == .finished(success: false, reusable: false, replay: false, code: .truncatedBody))
            rig.tearDown()
        }
    }

    @Test func unsolicitedBytesRetireAnIdleConnection() async throws {
        try await offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            rig.onLoop { rig.connection.becameIdle() }
            rig.send("HTTP/1.1 200 OK\r\n\r\n")
            #expect(rig.owner.next() == .idleClosed)
            rig.tearDown()
        }
    }

    @Test func theFirstByteDeadlineFires() async throws {
        try await offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            var options = TransferOptions()
            options.timeouts.firstByte = .milliseconds(50)
            rig.begin(Self.transfer("/silent", options: options))
            _ = rig.readRequestHead()
            #expect(rig.owner.next() == .finished(success: false, reusable: false, replay: false, code: .firstByteTimeout))
            rig.tearDown()
        }
    }

    @Test func aCloseDelimitedBodyEndsAtTheClose() async throws {
        try await offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            let transfer = Self.transfer("/until-close")
            rig.begin(transfer)
            _ = rig.readRequestHead()
            rig.send("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it")
            shutdown(rig.server, Int32(SHUT_WR))
            #expect(rig.owner.next() == .finished(success: true, reusable: false, replay: false, code: nil))
            #expect(transfer.responseBody == Array("all of it".utf8))
            rig.tearDown()
        }
    }

    @Test func abortingTheExchange() async throws {
        try await offTheCooperativePool {
            let rig = try Rig()
            #expect(rig.owner.next() == .established)
            rig.begin(Self.transfer("/slow"))
            _ = rig.readRequestHead()
            rig.onLoop { rig.connection.abort(CourierError(.cancelled)) }
            #expect(rig.owner.next() == .finished(success: false, reusable: false, replay: false, code: .cancelled))
            rig.tearDown()
        }
    }
}
