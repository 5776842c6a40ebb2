import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

struct EchoReply: Decodable {
    var method: String
    var path: String
    var query: [String: String]
    var headers: [[String]]
    var body: String

    func header(_ name: String) -> String? {
        headers.first { $0[0].lowercased() == name.lowercased() }?[1]
    }
}

/// Engine / Operation / Response as an application uses them.
@Suite("Engine and Operation")
struct FacadeTests {
    let s = TestServers.shared
    var api: Engine { Engine(host: s.scripted, defaultHeaders: ["X-Api-Key": "k1"]) }

    @Test func getWithQueryParametersAndDefaultHeaders() async throws {
        let op = api.operation(path: "echo", params: ["b": "2 3", "a": "1&"])
        let reply = try await api.send(op).decode(EchoReply.self)
        #expect(reply.method == "GET")
        #expect(reply.query == ["a": "1&", "b": "2 3"])
        #expect(reply.header("X-Api-Key") == "k1")
        #expect(reply.header("User-Agent")?.hasPrefix("courier/") == true)
    }

    @Test func postFormAndJSONBodies() async throws {
        let form = api.operation(path: "/echo", params: ["name": "J Doe", "x": "ä"], method: .post)
        let formReply = try await api.send(form).decode(EchoReply.self)
        #expect(formReply.body == "name=J+Doe&x=%C3%A4")
        #expect(formReply.header("Content-Type") == "application/x-www-form-urlencoded")

        let json = api.operation(path: "/echo", params: ["k": "v"], method: .put)
        json.parameterEncoding = .json
        let jsonReply = try await api.send(json).decode(EchoReply.self)
        #expect(jsonReply.method == "PUT")
        #expect(jsonReply.body == "{\"k\":\"v\"}")
        #expect(jsonReply.header("Content-Type") == "application/json")

        let raw = api.operation(path: "/echo", method: .post)
        raw.body = .bytes(Array("raw body".utf8))
        raw.headers.add(name: "Content-Type", value: "text/plain")
        let rawReply = try await api.send(raw).decode(EchoReply.self)
        #expect(rawReply.body == "raw body")
        #expect(rawReply.header("Content-Length") == "8")
    }

    @Test func fileUploadWithProgress() async throws {
        let path = s.root + "/upload-\(UUID().uuidString)"
        let payload = String(repeating: "0123456789", count: 50_000)
        try payload.write(toFile: path, atomically: true, encoding: .utf8)
        let op = api.operation(path: "/echo", method: .post)
        op.body = .file(path: path)
        let progress = Mutex<[TransferProgress]>([])
        op.onUploadProgress { p in progress.withLock { $0.append(p) } }
        let reply = try await api.send(op).decode(EchoReply.self)
        #expect(reply.body.count == payload.utf8.count)
        #expect(reply.body == payload)
        try? await Task.sleep(for: .milliseconds(50))
        let last = progress.withLock { $0.last }
        #expect(last == TransferProgress(completed: UInt64(payload.utf8.count), expected: UInt64(payload.utf8.count)))
    }

    @Test func downloadProgressAndToFile() async throws {
        let engine = Engine(host: s.nginx)
        let op = engine.operation(path: "/large")
        let path = s.root + "/dl-\(UUID().uuidString)"
        op.downloadPath = path
        let updates = Mutex<[TransferProgress]>([])
        op.onDownloadProgress { p in updates.withLock { $0.append(p) } }
        let response = try await engine.send(op)
        #expect(response.body.isEmpty)
        try? await Task.sleep(for: .milliseconds(50))
        let all = updates.withLock { $0 }
        #expect(all.last?.completed == UInt64(TestServers.largeSize))
        #expect(all.last?.fraction == 1)
        #expect(all.count >= 2)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(size == TestServers.largeSize)
        try? FileManager.default.removeItem(atPath: path)
    }

    @Test func callbacksDeliverExactlyOnce() async {
        let op = api.operation(path: "/echo")
        let calls = Mutex<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            op.onCompletion { r in calls.withLock { $0.append("completion \(r.status)") } }
            op.onError { e, _ in calls.withLock { $0.append("error \(e)") } }
            op.onFinish { _ in calls.withLock { $0.append("finish") }; done.resume() }
            api.enqueue(op)
            api.enqueue(op)
        }
        #expect(calls.withLock { $0 } == ["completion 200", "finish"])
        #expect(op.state == .finished)
        // A handler added afterwards runs at once.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            op.onCompletion { _ in done.resume() }
        }
    }

    @Test func httpErrorsGoToTheErrorHandlerWithTheBody() async {
        let op = api.operation(path: "/status", params: ["code": "404", "body": "gone"])
        do {
            _ = try await api.send(op)
            Issue.record("a 404 succeeded")
        } catch {
            #expect(error.code == .httpStatus)
            #expect(error.status == 404)
            #expect(op.response?.text == "gone")
        }
        var lenient = Engine.Configuration()
        lenient.acceptableStatus = 0..<1000
        let engine = Engine(host: s.scripted, configuration: lenient)
        let ok = try? await engine.send(engine.operation(path: "/status", params: ["code": "500"]))
        #expect(ok?.status == 500)
    }

    @Test func responseAccessorsReportWrongFormats() async throws {
        let latin = try await api.send(api.operation(path: "/latin1"))
        #expect(latin.charset == "iso-8859-1")
        #expect(try latin.string() == "café")
        let bad = try await api.send(api.operation(path: "/bad-utf8"))
        #expect(bad.text == nil)
        #expect(throws: CourierError(.invalidText, "body is not valid UTF-8")) { try bad.string() }
        do {
            _ = try bad.json()
            Issue.record("invalid JSON parsed")
        } catch {
            #expect(error.code == .invalidJSON)
        }
        let echo = try await api.send(api.operation(path: "/echo"))
        #expect(try echo.json()["method"]?.stringValue == "GET")
        struct Wrong: Decodable { var method: Int }
        do {
            _ = try echo.decode(Wrong.self)
            Issue.record("mismatched type decoded")
        } catch {
            #expect(error.code == .decodeMismatch)
            #expect(error.detail?.contains("method") == true)
        }
    }

    @Test func invalidURLsFailWhenSent() async {
        let op = Engine.shared.operation(urlString: "not a url")
        do {
            _ = try await Engine.shared.send(op)
            Issue.record("sent")
        } catch {
            #expect(error.code == .invalidURL)
        }
        let badHost = Engine(host: "http://bad host")
        do {
            _ = try await badHost.send(badHost.operation(path: "/x"))
            Issue.record("sent")
        } catch {
            #expect(error.code == .invalidURL)
        }
    }

    @Test func cancellationFromTheTaskAndTheEngine() async {
        let engine = Engine(host: s.scripted)
        let task = Task { try await engine.send(engine.operation(path: "/silence", params: ["s": "5"])) }
        try? await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let result = await task.result
        #expect((try? result.get()) == nil)
        if case .failure(let error as CourierError) = result { #expect(error.code == .cancelled) }

        let a = engine.operation(path: "/silence", params: ["s": "5"])
        let b = engine.operation(path: "/silence", params: ["s": "5"])
        let other = Engine(host: s.scripted)
        let unaffected = other.operation(path: "/slow", params: ["ms": "300"])
        async let ra = try? engine.send(a)
        async let rb = try? engine.send(b)
        async let rc = try? other.send(unaffected)
        try? await Task.sleep(for: .milliseconds(100))
        engine.cancelAll()
        _ = await (ra, rb)
        #expect(a.error?.code == .cancelled && b.error?.code == .cancelled)
        #expect(await rc?.status == 200, "another engine's operation is not cancelled")
    }

    @Test func curlCommandReproducesTheRequest() {
        let op = api.operation(path: "/echo", params: ["q": "a b"], method: .post)
        op.headers.add(name: "X-Trace", value: "it's")
        let command = op.curlCommand
        #expect(command.hasPrefix("curl -X POST \(s.scripted)/echo "))
        #expect(command.contains("-H 'X-Trace: it'\\''s'"))
        #expect(command.contains("--data-binary q=a+b"))
        #expect(command.contains("-H 'Content-Type: application/x-www-form-urlencoded'"))
    }

    @Test func suppressedDefaultHeadersAreNotSentNorInTheCurlCommand() async throws {
        let op = api.operation(path: "/echo")
        op.suppressedHeaders = ["User-Agent"]
        let reply = try JSONValue(parsing: try await api.send(op).body)
        let sent = reply["headers"]?.arrayValue?.compactMap { $0.arrayValue?.first?.stringValue } ?? []
        #expect(sent.contains("Accept"), "other defaults are still sent: \(sent)")
        #expect(!sent.contains("User-Agent"), "\(sent)")
        #expect(op.curlCommand.contains("-H User-Agent:"))
        #expect(!op.curlCommand.contains("courier/"))
    }

    @Test func metricsDescribeTheTransfer() async throws {
        let engine = Engine(host: await s.privateScripted())
        let first = try await engine.send(engine.operation(path: "/echo", params: ["m": "1"]))
        let second = try await engine.send(engine.operation(path: "/echo", params: ["m": "2"]))
        #expect(first.metrics.total.rawValue > 0)
        #expect(first.metrics.timeToFirstByte <= first.metrics.total)
        #expect(second.metrics.reusedConnection)
        #expect(second.metrics.connectionsOpened == 0)
        #expect(first.metrics.connectionsOpened == 1)
        #expect(first.metrics.remoteAddress.hasPrefix("127.0.0.1:"))
        #expect(first.metrics.connect.rawValue > 0)
    }

    @Test func credentialsAreDroppedOnCrossOriginRedirects() async throws {
        // Same origin: Authorization survives.
        let same = api.operation(path: "/redirect", params: ["to": "/echo"])
        same.headers.add(name: "Authorization", value: "Bearer secret")
        let sameReply = try await api.send(same).decode(EchoReply.self)
        #expect(sameReply.header("Authorization") == "Bearer secret")
        // Other origin (another host name): Authorization and Cookie are gone.
        let cross = api.operation(path: "/redirect", params: ["to": s.scriptedOtherOrigin + "/echo"])
        cross.headers.add(name: "Authorization", value: "Bearer secret")
        cross.headers.add(name: "Cookie", value: "session=1")
        let crossReply = try await api.send(cross).decode(EchoReply.self)
        #expect(crossReply.header("Authorization") == nil)
        #expect(crossReply.header("Cookie") == nil)
        #expect(crossReply.header("X-Api-Key") == "k1", "other headers follow")
    }

    @Test func redirectMethodRewriting() async throws {
        let seeOther = api.operation(path: "/redirect", params: ["code": "303", "to": "/echo"], method: .post)
        seeOther.body = .bytes(Array("payload".utf8))
        let a = try await api.send(seeOther).decode(EchoReply.self)
        #expect(a.method == "GET" && a.body.isEmpty)
        let temporary = api.operation(path: "/redirect", params: ["code": "307", "to": "/echo"], method: .post)
        temporary.body = .bytes(Array("payload".utf8))
        let b = try await api.send(temporary).decode(EchoReply.self)
        #expect(b.method == "POST" && b.body == "payload")
    }
}
