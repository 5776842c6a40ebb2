import CourierFoundation
import Foundation
import Testing

/// CourierFoundation: URL, URLRequest, Data and Date in and out, against the real servers.
@Suite("CourierFoundation")
struct FoundationConveniencesTests {
    let s = TestServers.shared

    @Test func aURLRequestIsSentAsItSays() async throws {
        let api = Engine(baseURL: URL(string: s.scripted)!)
        var request = URLRequest(url: URL(string: s.scripted + "/echo?q=1")!)
        request.httpMethod = "PUT"
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        request.setValue("yes", forHTTPHeaderField: "X-From-Foundation")
        request.httpBody = Data("from a URLRequest".utf8)
        let (data, response) = try await api.data(for: request)
        #expect(response.status == 200)
        let reply = try JSONDecoder().decode(EchoReply.self, from: data)
        #expect(reply.method == "PUT" && reply.body == "from a URLRequest" && reply.query == ["q": "1"])
        #expect(reply.header("X-From-Foundation") == "yes" && reply.header("Content-Type") == "text/plain")
        #expect(response.foundationURL == URL(string: s.scripted + "/echo?q=1"))
    }

    @Test func aRequestsTimeoutIntervalLimitsSilence() async {
        let api = Engine(baseURL: URL(string: s.scripted)!)
        var request = URLRequest(url: URL(string: s.scripted + "/silence?s=3")!)
        request.timeoutInterval = 0.3
        do {
            _ = try await api.data(for: request)
            Issue.record("silence succeeded")
        } catch {
            #expect(error.code == .firstByteTimeout)
        }
    }

    @Test func datesAndDataFromNginx() async throws {
        let nginx = Engine(baseURL: URL(string: s.nginx)!)
        let response = try await nginx.send(nginx.operation(url: URL(string: s.nginx + "/small")!))
        #expect(response.data.count == 100)
        let date = try #require(response.date)
        #expect(abs(date.timeIntervalSinceNow) < 120, "nginx's Date is now: \(date)")
        let modified = try #require(response.lastModified)
        #expect(modified <= date)
        #expect(response.headerDate("Content-Type") == nil)
        let posted = try await Engine(baseURL: URL(string: s.scripted)!)
            .post(path: "/echo", body: .data(Data("d".utf8)))
        #expect(try JSONDecoder().decode(EchoReply.self, from: posted.data).body == "d")
        #expect(try CourierURL(URL(string: "http://example.com:8080/a?b=c")!).port == 8080)
    }
}
