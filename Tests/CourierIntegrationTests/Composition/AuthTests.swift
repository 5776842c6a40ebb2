import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Basic and Bearer authentication through the Swift API, the C ABI (Tests/CPrograms/auth.c)
/// and the CLI, against the scripted server's /echo (which answers with the request's headers).
@Suite("Authorization")
struct AuthTests {
    let s = TestServers.shared

    /// The Authorization field /echo saw (nil: none).
    func authorization(_ response: Response) throws -> String? {
        let json = try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let headers = (json["headers"] as? [[String]]) ?? []
        return headers.first { $0.first?.lowercased() == "authorization" }?.last
    }

    @Test func basicAndBearerFields() async throws {
        let api = Engine(host: s.scripted)
        let bearer = api.operation(path: "/echo")
        bearer.authorization = .bearer("mF_9.B5f-4.1JqM")
        #expect(try authorization(try await api.send(bearer)) == "Bearer mF_9.B5f-4.1JqM")
        let basic = api.operation(path: "/echo")
        basic.authorization = .basic(user: "Aladdin", password: "open sesame")
        #expect(try authorization(try await api.send(basic)) == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        let own = api.operation(path: "/echo")
        own.authorization = .bearer("ignored")
        own.headers.add(name: "Authorization", value: "Custom x")
        #expect(try authorization(try await api.send(own)) == "Custom x", "a field set by hand wins")
    }

    @Test func badCredentialsFailBeforeAnyIO() async throws {
        let api = Engine(host: s.scripted)
        for bad: Authorization in [.bearer("two words"), .bearer("line\r\nX-Injected: 1"), .bearer(""), .basic(user: "a:b", password: "")] {
            let op = api.operation(path: "/echo")
            op.authorization = bad
            await #expect(throws: CourierError.self) { _ = try await api.send(op) }
            #expect(op.error?.code == .invalidArgument, "\(bad)")
        }
    }

    @Test func credentialsNeverFollowARedirectToAnotherOrigin() async throws {
        let api = Engine(host: s.scripted)
        let same = api.operation(path: "/redirect", params: ["to": "/echo"])
        same.authorization = .bearer("t0k")
        #expect(try authorization(try await api.send(same)) == "Bearer t0k")
        let other = api.operation(path: "/redirect", params: ["to": s.scriptedOtherOrigin + "/echo"])
        other.authorization = .bearer("t0k")
        #expect(try authorization(try await api.send(other)) == nil)
    }

    @Test func cAndTheCLI() async throws {
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/auth", [s.scripted])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
        let cli = try await runProcess(CLITests.binary, ["-s", "--oauth2-bearer", "cli-token", s.scripted + "/echo"])
        #expect(cli.stdout.contains("[\"Authorization\", \"Bearer cli-token\"]"), "\(cli.stdout)")
    }
}
