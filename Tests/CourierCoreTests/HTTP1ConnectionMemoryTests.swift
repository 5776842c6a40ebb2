import CUV
import CourierFuzzing
import Testing
@testable import CourierCore

/// `HTTP1Connection` over a byte stream in memory: the test is the server, on the test's own
/// thread, with no sockets and no timing. What the connection wrote, how each exchange ended,
/// and how a consumer's pause holds the response's end are checked step by step (the socketpair
/// tests, `HTTP1ConnectionTests`, cover the same connection over a real socket).
@Suite("HTTP1Connection in memory")
struct HTTP1ConnectionMemoryTests {
    final class Owner: HTTP1ConnectionDelegate {
        var established = 0
        var outcomes: [String] = []
        var idleClosed = 0

        func connectionEstablished(_ connection: HTTP1Connection) { established += 1 }
        func connectionFailed(_ connection: HTTP1Connection, error: CourierError) { outcomes.append("connect failed \(error.code)") }
        func idleConnectionClosed(_ connection: HTTP1Connection) { idleClosed += 1 }
        func approveStatusRetry(_ transfer: Transfer, status: Int) -> Bool { true }
        func exchangeFinished(_ connection: HTTP1Connection, _ transfer: Transfer, outcome: ExchangeOutcome) {
            switch outcome {
            case .success(let reusable):
                outcomes.append(reusable ? "reusable" : "closed")
                if reusable { connection.becameIdle() }
            case .failure(let error, let replay):
                outcomes.append("failed \(error.code.rawValue)\(replay ? " replay" : "")")
            }
        }
    }

    /// A connection over a memory stream, open, and its owner. Its own loop only holds the
    /// connection's timer (never run but for the close callbacks), so tests run side by side.
    final class Rig {
        let loop: UnsafeMutablePointer<uv_loop_t> = {
            let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
            precondition(uv_loop_init(loop) == 0)
            return loop
        }()
        let owner = Owner()
        let stream = MemoryStream(keepsWrites: true)
        let resources = HTTP1Resources()
        let connection: HTTP1Connection

        init() {
            connection = HTTP1Connection(id: 1, poolKey: 0, origin: Origin(scheme: .http, host: "memory.example", port: 80),
                                         stream: stream, owner: owner, resources: resources, uvLoop: loop, connectTimeout: nil)
            connection.connect()
        }

        deinit {
            connection.closeFromPool()
            uv_run(loop, UV_RUN_NOWAIT)
            uv_loop_close(loop)
            loop.deallocate()
        }

        /// Starts an exchange for `transfer`, its machine where the executor would take it.
        func begin(_ transfer: Transfer) {
            #expect(Admission.check(transfer) == nil)
            _ = transfer.machine.accept(refusal: nil, queueDeadline: .max)
            _ = transfer.machine.started(totalDeadline: .max)
            transfer.machine.connectionAssigned()
            transfer.carrier = connection
            connection.begin(transfer)
        }

        func send(_ text: String) {
            Array(text.utf8).withUnsafeBytes { stream.receive($0) }
        }

        var writtenText: String { String(decoding: stream.written, as: UTF8.self) }
    }

    static func transfer(_ path: String = "/a", method: HTTPMethod = .get, body: RequestBody = .empty) -> Transfer {
        Transfer(url: try! CourierURL(parsing: "http://memory.example" + path), method: method, body: body)
    }

    @Test func anExchangeWritesTheRequestAndKeepsTheConnection() {
        let rig = Rig()
        #expect(rig.owner.established == 1)
        let transfer = Self.transfer()
        rig.begin(transfer)
        #expect(rig.writtenText.hasPrefix("GET /a HTTP/1.1\r\nHost: memory.example\r\n"))
        #expect(rig.writtenText.hasSuffix("\r\n\r\n"))
        // The response in three reads, split inside the head and the body.
        rig.send("HTTP/1.1 200 OK\r\nContent-Le")
        rig.send("ngth: 5\r\n\r\nhel")
        #expect(rig.owner.outcomes.isEmpty)
        rig.send("lo")
        #expect(rig.owner.outcomes == ["reusable"])
        #expect(transfer.status == 200 && transfer.responseBody == Array("hello".utf8))
        // The same connection serves the next request.
        let second = Self.transfer("/b", method: .post, body: .bytes(Array("xyz".utf8)))
        rig.begin(second)
        #expect(rig.writtenText.contains("POST /b HTTP/1.1\r\n") && rig.writtenText.hasSuffix("\r\n\r\nxyz"))
        rig.send("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        #expect(rig.owner.outcomes == ["reusable", "closed"])
        #expect(rig.stream.closed)
    }

    @Test func aCutBodyFailsAndBytesOnAnIdleConnectionCloseIt() {
        let rig = Rig()
        rig.begin(Self.transfer())
        rig.send("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345")
        rig.stream.end(.closed(closeNotify: nil))
        #expect(rig.owner.outcomes == ["failed \(CourierError.Code.truncatedBody.rawValue)"])
        let idle = Rig()
        idle.send("HTTP/1.1 200 OK\r\n\r\n")
        #expect(idle.owner.idleClosed == 1, "nobody asked: the connection cannot be trusted to frame responses")
    }

    @Test func aPausedConsumerHoldsTheResponsesEnd() {
        let rig = Rig()
        let transfer = Self.transfer()
        var taken: [UInt8] = []
        var pausing = true
        let sink = StreamSink(redeliver: { .proceed }) { bytes in
            taken += bytes
            return pausing ? .pause : .proceed
        }
        transfer.sink = .stream(sink)
        rig.begin(transfer)
        rig.send("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab")
        #expect(rig.stream.paused, "the consumer paused: the stream stops reading")
        // The rest arrives in the read already under way: held, and so is the response's end.
        rig.send("cd")
        #expect(rig.owner.outcomes.isEmpty, "the end waits for the held bytes")
        pausing = false
        rig.connection.resumeReadingForConsumer()
        #expect(taken == Array("abcd".utf8))
        #expect(rig.owner.outcomes == ["reusable"])
        #expect(!rig.stream.paused, "an idle connection reads again (it must notice a close)")
    }
}
