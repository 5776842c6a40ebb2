import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// Request and response serializers, and the engine hooks (adapt each request, judge each
/// response, decide each redirect, observe each request's metrics), against the scripted
/// server's /echo (which answers with the request as JSON) and /redirect.
@Suite("Serializers and hooks")
struct SerializerAndHookTests {
    let s = TestServers.shared

    struct Echo: Decodable, Sendable {
        var method: String
        var body: String
        var headers: [[String]]
        func header(_ name: String) -> String? { headers.first { $0.first?.lowercased() == name.lowercased() }?.last }
    }

    struct Item: Codable, Sendable, Equatable {
        var name: String
        var tags: [String]
        var created: Date
    }

    @Test func requestSerializers() async throws {
        let api = Engine(host: s.scripted)
        let form = api.operation(path: "/echo", method: .post)
        try form.setBody(FormFields([("tag", "b a"), ("tag", "c&d"), ("first", "1")]))
        let sentForm = try await api.send(form, as: DecodableSerializer<Echo>())
        #expect(sentForm.body == "tag=b+a&tag=c%26d&first=1", "order and repeats kept")
        #expect(sentForm.header("Content-Type") == "application/x-www-form-urlencoded")

        let item = Item(name: "x", tags: ["a", "b"], created: Date(timeIntervalSince1970: 0))
        let json = api.operation(path: "/echo", method: .post)
        try json.setBody(JSONBody(item) { $0.dateEncodingStrategy = .iso8601; $0.outputFormatting = .sortedKeys })
        let sentJSON = try await api.send(json, as: DecodableSerializer<Echo>())
        #expect(sentJSON.body == #"{"created":"1970-01-01T00:00:00Z","name":"x","tags":["a","b"]}"#)
        #expect(sentJSON.header("Content-Type") == "application/json")

        let raw = api.operation(path: "/echo", method: .put)
        raw.headers.add(name: "Content-Type", value: "text/x-own")
        try raw.setBody(RawBody(Array("raw".utf8)))
        let sentRaw = try await api.send(raw, as: DecodableSerializer<Echo>())
        #expect(sentRaw.body == "raw" && sentRaw.header("Content-Type") == "text/x-own", "the request's own type wins")

        struct Unencodable: Encodable, Sendable {
            func encode(to encoder: Encoder) throws { throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no")) }
        }
        #expect(throws: CourierError.self) { try api.operation(path: "/echo", method: .post).setBody(JSONBody(Unencodable())) }
    }

    @Test func responseSerializersWithOptInValidation() async throws {
        let api = Engine(host: s.scripted)
        #expect(try await api.send(api.operation(path: "/echo"), as: BytesSerializer()).count > 10)
        #expect(try await api.send(api.operation(path: "/latin1"), as: StringSerializer()) == "café")
        #expect(try await api.send(api.operation(path: "/echo"), as: JSONSerializer())["method"]?.stringValue == "GET")
        // Without validation a text/plain body is still decoded; with it, it is refused.
        #expect(try await api.send(api.operation(path: "/latin1"), as: StringSerializer().validating(contentTypes: ["text/*"])) == "café")
        do {
            _ = try await api.send(api.operation(path: "/latin1"), as: JSONSerializer().validating(contentTypes: ["application/json"]))
            Issue.record("text/plain accepted as JSON")
        } catch {
            #expect(error.code == .unexpectedContentType, "\(error)")
        }
        let created = api.operation(path: "/status", params: ["code": "203"])
        do {
            _ = try await api.send(created, as: BytesSerializer().validating(statuses: 200..<203))
            Issue.record("203 accepted")
        } catch {
            #expect(error.code == .httpStatus && error.status == 203)
        }
        do {
            _ = try await api.send(api.operation(path: "/echo"), as: DecodableSerializer<Item>())
            Issue.record("an echo decoded as an item")
        } catch {
            #expect(error.code == .decodeMismatch, "\(error)")
        }
    }

    struct BusinessError: Error, Equatable { var code: Int }

    @Test func engineHooks() async throws {
        let seen = Mutex<[CompletedRequest]>([])
        var configuration = Engine.Configuration()
        configuration.hooks.adaptRequest = { request in
            // A signature over what is really sent.
            guard case .bytes(let body) = request.body else { return }
            request.headers.replaceOrAdd(name: "X-Signature", value: "\(request.method.rawValue) \(request.url.path) \(body.count)")
            if request.url.query?.contains("reject=1") == true { throw BusinessError(code: 7) }
        }
        configuration.hooks.validateResponse = { response in
            if response.status == 200, let json = try? response.json(), json["body"]?.stringValue == "fail me" {
                throw BusinessError(code: 42)
            }
        }
        configuration.hooks.redirect = { redirect in
            if redirect.to.path == "/forbidden" { return .refuse }
            if redirect.to.path == "/old" { return .rewrite(try! CourierURL(parsing: redirect.from.description.replacingOccurrences(of: "/redirect", with: "/echo"))) }
            return .follow
        }
        configuration.hooks.observeMetrics = { completed in seen.withLock { $0.append(completed) } }
        let api = Engine(host: s.scripted, configuration: configuration)

        let signed = api.operation(path: "/echo", method: .post)
        signed.body = .bytes(Array("hello".utf8))
        let echo = try await api.send(signed, as: DecodableSerializer<Echo>())
        #expect(echo.header("X-Signature") == "POST /echo 5")

        let rejected = api.operation(path: "/echo", params: ["reject": "1"], method: .post)
        rejected.body = .bytes(Array("x".utf8))
        do {
            _ = try await api.send(rejected)
            Issue.record("the request hook's error was ignored")
        } catch {
            #expect(error.code == .rejected && (error.underlying as? BusinessError) == BusinessError(code: 7))
        }

        let business = api.operation(path: "/echo", method: .post)
        business.body = .bytes(Array("fail me".utf8))
        do {
            _ = try await api.send(business)
            Issue.record("a 200 with an error body succeeded")
        } catch {
            #expect(error.code == .rejected && (error.underlying as? BusinessError) == BusinessError(code: 42))
            #expect(business.response?.status == 200, "the response stays available")
        }

        let refused = api.operation(path: "/redirect", params: ["to": "/forbidden"])
        do {
            _ = try await api.send(refused)
            Issue.record("a refused redirect was followed")
        } catch {
            #expect(error.code == .redirectRefused)
        }
        let rewritten = try await api.send(api.operation(path: "/redirect", params: ["to": "/old"]), as: DecodableSerializer<Echo>())
        #expect(rewritten.method == "GET")
        let followed = try await api.send(api.operation(path: "/redirect", params: ["to": "/echo"]))
        #expect(followed.status == 200)

        let completed = seen.withLock { $0 }
        #expect(completed.count == 5, "every request that reached the network, failed ones too: \(completed.map(\.url))")
        #expect(completed.contains { $0.error?.code == .rejected && $0.status == 200 })
        #expect(completed.allSatisfy { $0.metrics.completedAt > 0 })
    }

    @Test func aRejectedDownloadNeverReachesItsDestination() async throws {
        let directory = s.root + "/hook-download-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = Engine.Configuration()
        configuration.hooks.validateResponse = { _ in throw BusinessError(code: 1) }
        let api = Engine(host: s.scripted, configuration: configuration)
        let op = api.operation(path: "/echo")
        op.downloadPath = directory + "/out.json"
        _ = try? await api.send(op)
        #expect(op.error?.code == .rejected)
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.json"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty, "no staged file left")
    }

    @Test func hooksFromC() async throws {
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/hooks", [s.scripted])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
    }
}
