import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Uploads through the Swift API against Tests/Servers/stream_server.py: forms byte for byte,
/// bodies from async sequences, `Expect: 100-continue`.
@Suite("Streamed uploads")
struct UploadTests {
    let s = TestServers.shared

    func engine() -> Engine {
        var configuration = Engine.Configuration()
        configuration.acceptableStatus = 200..<600
        return Engine(host: s.stream, configuration: configuration)
    }

    func json(_ response: Response) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func multipartFormIsSentByteForByteWithItsLength() async throws {
        let path = NSTemporaryDirectory() + "courier-form-\(UUID().uuidString.prefix(8)).json"
        try Data("{\"k\": 1}\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let api = engine()
        let op = api.operation(path: "/upload?echo=1", method: .post)
        op.addField("note", value: "line one\r\nline \"two\"")
        op.addData([0, 1, 2, 255], forKey: "bytes", mimeType: "application/x-raw", fileName: "b.bin")
        op.addFile(path, forKey: "doc")
        let boundary = try #require(op.form?.boundary)
        let response = try await api.send(op)
        let name = String(path.split(separator: "/").last!)
        var expected = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nline one\r\nline \"two\"\r\n".utf8)
        expected += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"bytes\"; filename=\"b.bin\"\r\nContent-Type: application/x-raw\r\n\r\n".utf8)
        expected += [0, 1, 2, 255] + Array("\r\n".utf8)
        expected += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"\(name)\"\r\nContent-Type: application/json\r\n\r\n{\"k\": 1}\n\r\n--\(boundary)--\r\n".utf8)
        #expect(response.body == expected)
        #expect(response.metrics.bytesSent > UInt64(expected.count), "head and body went out")

        // The same form, parsed by Python's email package on the server.
        let parsed = api.operation(path: "/upload", method: .post)
        parsed.addField("note", value: "v")
        parsed.addFile(path, forKey: "doc", mimeType: "text/x-custom", fileName: "renamed.txt")
        let answer = try json(try await api.send(parsed))
        let parts = try #require(answer["parts"] as? [[String: Any]])
        #expect(parts.map { $0["name"] as? String } == ["note", "doc"])
        #expect(parts[1]["filename"] as? String == "renamed.txt")
        #expect(parts[1]["content_type"] as? String == "text/x-custom")
        #expect(parts[1]["length"] as? Int == 9)
        #expect(answer["chunked"] as? Bool == false, "a form's length is known from the file sizes")
    }

    @Test func aFileFormPartThatCannotBeReadFailsBeforeSending() async throws {
        let api = engine()
        let op = api.operation(path: "/upload", method: .post)
        op.addFile("/no/such/file", forKey: "f")
        await #expect(throws: CourierError.self) { try await api.send(op) }
        #expect(op.error?.code == .fileRead)
    }

    struct Pieces: AsyncSequence, Sendable {
        typealias Element = [UInt8]
        let count: Int
        let size: Int
        struct AsyncIterator: AsyncIteratorProtocol {
            var left: Int
            let size: Int
            var index = 0
            mutating func next() async throws -> [UInt8]? {
                guard left > 0 else { return nil }
                left -= 1
                index += 1
                // A producer that takes its time now and then.
                if index % 7 == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
                return [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size)
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(left: count, size: size) }
    }

    /// A producer slower than the idle limit, after the server's 100 Continue: the server is
    /// silent because it waits for the body, which keeps coming; that is not silence.
    @Test func aSlowUploadAfterAHundredIsNotSilence() async throws {
        struct Slow: AsyncSequence, Sendable {
            typealias Element = [UInt8]
            struct AsyncIterator: AsyncIteratorProtocol {
                var left = 8
                mutating func next() async throws -> [UInt8]? {
                    guard left > 0 else { return nil }
                    left -= 1
                    try await Task.sleep(nanoseconds: 150_000_000)
                    return [UInt8](repeating: 7, count: 10_000)
                }
            }
            func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
        }
        let api = engine()
        let op = api.operation(path: "/upload", method: .put)
        op.options.timeouts.idle = .milliseconds(500)
        op.body = .stream(BodyStream(Slow()))
        let answer = try json(try await api.send(op))
        #expect(answer["length"] as? Int == 80_000)
        #expect(answer["expect"] as? String == "100-continue", "the body waited for a 100")
    }

    @Test func anAsyncSequenceBodyIsChunkedOrSized() async throws {
        let api = engine()
        // (The server echoes bodies up to 1 MiB.)
        let expected = (1...20).flatMap { [UInt8](repeating: UInt8($0), count: 50_000) }
        let chunked = api.operation(path: "/upload?echo=1", method: .post)
        chunked.body = .stream(BodyStream(Pieces(count: 20, size: 50_000)))
        let echoed = try await api.send(chunked)
        let same = echoed.body == expected
        #expect(same, "\(echoed.body.count) bytes echoed")
        let info = api.operation(path: "/upload", method: .put)
        info.body = .stream(BodyStream(Pieces(count: 40, size: 50_000)))
        #expect(try json(try await api.send(info))["chunked"] as? Bool == true)
        let sized = api.operation(path: "/upload", method: .put)
        sized.body = .stream(BodyStream(Pieces(count: 40, size: 50_000), length: 2_000_000))
        let answer = try json(try await api.send(sized))
        #expect(answer["chunked"] as? Bool == false)
        #expect(answer["length"] as? Int == 2_000_000)
        // HTTP/1.0 has no chunked encoding: a body of unknown length is refused before any I/O,
        // one of known length goes out with its Content-Length.
        let old = api.operation(path: "/upload", method: .put)
        old.options.sendsHTTP10 = true
        old.body = .stream(BodyStream(Pieces(count: 2, size: 10)))
        await #expect(throws: CourierError.self) { try await api.send(old) }
        #expect(old.error?.code == .invalidArgument, "\(String(describing: old.error))")
        let oldSized = api.operation(path: "/upload", method: .put)
        oldSized.options.sendsHTTP10 = true
        oldSized.body = .stream(BodyStream(Pieces(count: 2, size: 10), length: 20))
        #expect(try json(try await api.send(oldSized))["length"] as? Int == 20)
    }

    @Test func aStreamThatBreaksItsLengthFails() async throws {
        let api = engine()
        let short = api.operation(path: "/upload", method: .post)
        short.body = .stream(BodyStream(Pieces(count: 3, size: 1_000), length: 5_000))
        await #expect(throws: CourierError.self) { try await api.send(short) }
        #expect(short.error?.code == .bodySource)
        let long = api.operation(path: "/upload", method: .post)
        long.body = .stream(BodyStream(Pieces(count: 3, size: 1_000), length: 2_000))
        await #expect(throws: CourierError.self) { try await api.send(long) }
        #expect(long.error?.code == .bodySource)
        // A one-shot stream cannot be sent twice.
        let stream = BodyStream(Pieces(count: 1, size: 10))
        _ = stream.take()
        #expect(stream.take() == nil)
    }

    @Test func largeBodiesWaitForTheHundred() async throws {
        let api = engine()
        let path = NSTemporaryDirectory() + "courier-expect-\(UUID().uuidString.prefix(8))"
        try Data(count: 3 << 20).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let op = api.operation(path: "/upload", method: .put)
        op.body = .file(path: path)
        let answer = try json(try await api.send(op))
        #expect(answer["expect"] as? String == "100-continue")
        #expect(answer["length"] as? Int == 3 << 20)

        // A server that never says 100 gets the body after the wait.
        let silent = api.operation(path: "/upload?no100=1", method: .put)
        silent.body = .file(path: path)
        silent.options.continueTimeout = .milliseconds(100)
        #expect(try json(try await api.send(silent))["length"] as? Int == 3 << 20)

        // Small bodies and `.never` do not wait.
        let never = api.operation(path: "/upload", method: .put)
        never.body = .file(path: path)
        never.options.expectContinue = .never
        #expect(try json(try await api.send(never))["expect"] as? String == "")
    }

    @Test func anEarlyRefusalStopsTheUploadAndIsDelivered() async throws {
        let api = engine()
        let path = NSTemporaryDirectory() + "courier-413-\(UUID().uuidString.prefix(8))"
        try Data(count: 64 << 20).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        for expect in [ExpectContinue.automatic, .never] {
            let op = api.operation(path: "/upload?reject=413", method: .put)
            op.body = .file(path: path)
            op.options.expectContinue = expect
            let response = try await api.send(op)
            #expect(response.status == 413)
            #expect(response.body == Array("rejected".utf8))
            #expect(response.metrics.bytesSent < 64 << 20, "the body was not sent whole (\(response.metrics.bytesSent) bytes, \(expect))")
        }
    }

    /// nginx's client_max_body_size: a body over the limit is answered 413 before nginx reads it.
    @Test func nginxRefusesAnOversizedBodyEarly() async throws {
        var configuration = Engine.Configuration()
        configuration.acceptableStatus = 200..<600
        let api = Engine(host: s.nginx, configuration: configuration)
        let path = NSTemporaryDirectory() + "courier-nginx-413-\(UUID().uuidString.prefix(8))"
        try Data(count: 16 << 20).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        for expect in [ExpectContinue.automatic, .never] {
            let op = api.operation(path: "/limited/upload", method: .post)
            op.body = .file(path: path)
            op.options.expectContinue = expect
            let response = try await api.send(op)
            #expect(response.status == 413, "\(expect)")
            // With 100-continue the body never leaves; without it, nginx drains what arrives after
            // its 413 (lingering close), so over loopback the whole body may well be gone before
            // the answer is read: only the answer itself is certain then.
            if expect == .automatic {
                #expect(response.metrics.bytesSent < 16 << 20, "\(expect): \(response.metrics.bytesSent) bytes sent")
            }
        }
    }

    @Test func uploadProgressCountsBodyBytes() async throws {
        let api = engine()
        let op = api.operation(path: "/upload", method: .post)
        op.body = .bytes([UInt8](repeating: 7, count: 300_000))
        let seen = Mutex_<[TransferProgress]>([])
        op.onUploadProgress { progress in seen.mutate { $0.append(progress) } }
        _ = try await api.send(op)
        let last = try #require(seen.value.last)
        #expect(last.completed == 300_000 && last.expected == 300_000)
        let chunked = api.operation(path: "/upload", method: .post)
        chunked.body = .stream(BodyStream(Pieces(count: 5, size: 10_000)))
        let streamed = Mutex_<[TransferProgress]>([])
        chunked.onUploadProgress { progress in streamed.mutate { $0.append(progress) } }
        _ = try await api.send(chunked)
        #expect(streamed.value.last?.expected == nil, "a chunked body has no known total")
    }
}

/// A value behind a lock, for handlers that run on other threads.
final class Mutex_<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
