import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// `engine.get/post/...` returning the response, `engine.send(operation)`, and what an error tells the
/// caller (its predicates, the failed response) against the real servers.
@Suite("Engine requests and error predicates")
struct EngineRequestTests {
    let s = TestServers.shared
    var api: Engine { Engine(host: s.scripted, defaultHeaders: ["X-Api-Key": "k1"]) }

    @Test func getReturnsTheResponseWithParamsAndHeaders() async throws {
        let response = try await api.get(path: "/echo", params: ["q": "a b"], headers: ["X-Extra": "1"])
        #expect(response.status == 200)
        let reply = try response.decode(EchoReply.self)
        #expect(reply.method == "GET")
        #expect(reply.query == ["q": "a b"])
        #expect(reply.header("X-Extra") == "1")
        #expect(reply.header("X-Api-Key") == "k1")
    }

    @Test func postPutPatchSendTheirBodyWithItsType() async throws {
        for (method, call) in [("POST", api.post), ("PUT", api.put), ("PATCH", api.patch)] as [(String, (String, RequestBody, String?, [String: String]) async throws(CourierError) -> Response)] {
            let response = try await call("/echo", .bytes(Array("{\"k\":1}".utf8)), "application/json", [:])
            let reply = try response.decode(EchoReply.self)
            #expect(reply.method == method)
            #expect(reply.body == "{\"k\":1}")
            #expect(reply.header("Content-Type") == "application/json")
        }
    }

    @Test func headAndDeleteUseTheirMethods() async throws {
        let deleted = try await api.delete(path: "/echo").decode(EchoReply.self)
        #expect(deleted.method == "DELETE")
        let head = try await api.head(path: "/echo")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
    }

    @Test func sendingTwiceWaitsForTheSameTransfer() async throws {
        let op = api.operation(path: "/echo", method: .post)
        op.body = .bytes(Array("x".utf8))
        let response = try await api.send(op)
        #expect(try response.decode(EchoReply.self).body == "x")
        let again = try await api.send(op)
        #expect(again.body == response.body && again.metrics.enqueuedAt == response.metrics.enqueuedAt, "one transfer")
    }

    /// `HTTPOperation.send()` is deprecated (one way per task: `engine.send`), and works for a
    /// release.
    @available(*, deprecated)
    @Test func theDeprecatedSendStillSends() async throws {
        let op = api.operation(path: "/echo", method: .post)
        op.body = .bytes(Array("y".utf8))
        #expect(try await op.send().decode(EchoReply.self).body == "y")
    }

    @Test func aFailedStatusCarriesItsResponseInTheError() async {
        do {
            _ = try await api.get(path: "/status", params: ["code": "404", "body": "gone"])
            Issue.record("a 404 succeeded")
        } catch {
            #expect(error.code == .httpStatus)
            #expect(error.status == 404)
            #expect(error.response?.status == 404)
            #expect(error.response?.text == "gone")
            #expect(!error.isRetryable)
            #expect(!error.isConnectivity)
        }
        do {
            _ = try await api.get(path: "/status", params: ["code": "503"])
            Issue.record("a 503 succeeded")
        } catch {
            #expect(error.isRetryable)
            #expect(error.response?.status == 503)
        }
    }

    @Test func errorsWithoutAResponseCarryNone() async {
        let refused = Engine(host: "http://127.0.0.1:1")
        do {
            _ = try await refused.get(path: "/")
            Issue.record("a connection to port 1 succeeded")
        } catch {
            #expect(error.code == .connectFailed)
            #expect(error.response == nil)
            #expect(error.isConnectivity)
            #expect(error.isRetryable)
            #expect(!error.isTimeout && !error.isTLS && !error.isCancelled)
        }
    }

    @Test func timeoutsTLSAndCancellationAreTold() async {
        let silent = api.operation(path: "/silence", params: ["s": "10"])
        silent.timeouts.firstByte = .milliseconds(300)
        do {
            _ = try await api.send(silent)
            Issue.record("silence succeeded")
        } catch {
            #expect(error.isTimeout)
            #expect(error.isRetryable)
            #expect(!error.isConnectivity)
        }

        let mismatch = Engine(host: "https://127.0.0.1:\(s.tlsPorts["valid"]!)")
        do {
            _ = try await mismatch.get(path: "/small")
            Issue.record("a certificate for another name was accepted")
        } catch {
            #expect(error.isTLS)
            #expect(!error.isRetryable)
        }

        let hanging = api.operation(path: "/silence", params: ["s": "10"])
        let waiting = Task { try await api.send(hanging) }
        // Cancelled once the request is on its way (the state, not a guess at the time).
        while hanging.state != .enqueued { try? await Task.sleep(for: .milliseconds(5)) }
        waiting.cancel()
        do {
            _ = try await waiting.value
            Issue.record("a cancelled request succeeded")
        } catch let error as CourierError {
            #expect(error.isCancelled)
            #expect(!error.isRetryable)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

/// Error equality and predicates as values, without sockets.
@Suite("CourierError values")
struct CourierErrorValueTests {
    @Test func equalityIsByCodeNotByWording() {
        #expect(CourierError(.connectTimeout, "after 1 s to 10.0.0.1") == CourierError(.connectTimeout))
        #expect(CourierError(.httpStatus, "404 Not Found", status: 404) == CourierError(.httpStatus, "500", status: 500))
        #expect(CourierError(.connectTimeout) != CourierError(.firstByteTimeout))
        #expect(Set([CourierError(.tlsUntrusted, "a"), CourierError(.tlsUntrusted, "b")]).count == 1)
    }

    @Test func predicatesFollowTheCodeFamilies() {
        #expect(CourierError(.tlsPinMismatch).isTLS)
        #expect(CourierError(.idleTimeout).isTimeout)
        #expect(CourierError(.cancelled).isCancelled)
        for code in [CourierError.Code.dnsFailure, .connectFailed, .connectionReset, .emptyReply, .truncatedBody, .sendFailed, .proxyConnect] {
            #expect(CourierError(code).isConnectivity, "\(code)")
        }
        for code in [CourierError.Code.malformedResponse, .badChunk, .tlsUntrusted, .connectTimeout, .fileWrite, .invalidURL] {
            #expect(!CourierError(code).isConnectivity, "\(code)")
        }
        #expect(CourierError(.httpStatus, status: 429).isRetryable)
        #expect(!CourierError(.httpStatus, status: 400).isRetryable)
        #expect(CourierError(.connectTimeout).isRetryable)
        #expect(!CourierError(.totalTimeout).isRetryable)
        #expect(!CourierError(.malformedResponse).isRetryable)
        #expect(!CourierError(.loopUnavailable).isConnectivity, "no descriptor or thread here is not the network")
        let head = Response(head: ResponseHead(), body: [], url: try! CourierURL(parsing: "http://h/"))
        #expect(CourierError(.connectionReset).isRetryable, "a reset before any response")
        #expect(!CourierError(.connectionReset).attaching(head).isRetryable, "a reset after the head: the server may have acted")
    }

    @Test func anAttachmentSurvivesAndIsNotPartOfEquality() {
        let response = Response(head: ResponseHead(), body: Array("b".utf8), url: try! CourierURL(parsing: "http://h/"))
        let error = CourierError(.httpStatus, "404", status: 404).attaching(response)
        #expect(error.response?.body == Array("b".utf8))
        #expect(error.detail == "404")
        #expect(error.status == 404)
        #expect(error == CourierError(.httpStatus))
        #expect(CourierError(.httpStatus).response == nil)
    }
}
