import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Against nginx: connection reuse, many requests through the queue, large bodies, gzip.
@Suite("Keep-alive against nginx")
struct KeepAliveTests {
    let servers = TestServers.shared

    @Test func sequentialRequestsReuseOneConnection() async {
        // 127.0.0.1 spelled as an IPv4-mapped IPv6 literal: an origin (and pool) of this test's own.
        let origin = "http://[::ffff:127.0.0.1]:\(servers.nginxPort)"
        var opened = 0
        for i in 0..<30 {
            let (t, _) = await fetch(origin + "/small?seq=\(i)") { $0.decompress = false }
            #expect(t.error == nil)
            #expect(t.head?.status == 200)
            #expect(t.responseBody.count == 100)
            #expect(t.metrics.reusedConnection == (i > 0), "request \(i)")
            opened += t.metrics.connectionsOpened
        }
        #expect(opened == 1, "30 sequential requests should need one connection")
    }

    @Test func thousandConcurrentRequestsThroughTheQueue() async {
        let count = 1000
        let results = await withTaskGroup(of: (Int?, Int, Int).self) { group in
            for i in 0..<count {
                group.addTask {
                    let (t, _) = await fetch(servers.nginx + "/small?many=\(i)")
                    return (t.head?.status, t.responseBody.count, t.metrics.connectionsOpened)
                }
            }
            var all: [(Int?, Int, Int)] = []
            for await r in group { all.append(r) }
            return all
        }
        #expect(results.count == count)
        #expect(results.allSatisfy { $0.0 == 200 && $0.1 == 100 })
        let connections = results.reduce(0) { $0 + $1.2 }
        #expect(connections <= SharedQueue.defaultHostLimit, "connections opened: \(connections)")
    }

    @Test func largeBodyInMemory() async {
        let (t, _) = await fetch(servers.nginx + "/large")
        #expect(t.error == nil)
        #expect(t.responseBody.count == TestServers.largeSize)
        #expect(t.expectedBodyLength == UInt64(TestServers.largeSize))
        var mismatches = 0
        for offset in stride(from: 0, to: TestServers.largeSize, by: 4093) where t.responseBody[offset] != TestServers.largeFileByte(offset) {
            mismatches += 1
        }
        #expect(mismatches == 0)
    }

    @Test func largeBodyToFile() async throws {
        let path = servers.root + "/download-\(UUID().uuidString)"
        let (t, _) = await fetch(servers.nginx + "/large", sink: .file(try FileSink(path: path)))
        #expect(t.error == nil)
        #expect(t.responseBody.isEmpty)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data.count == TestServers.largeSize)
        #expect(data[12345] == TestServers.largeFileByte(12345))
        #expect(data[TestServers.largeSize - 1] == TestServers.largeFileByte(TestServers.largeSize - 1))
        try? FileManager.default.removeItem(atPath: path)
    }

    @Test func gzipIsDecodedAndAcceptEncodingSent() async {
        let (t, _) = await fetch(servers.nginx + "/gzip/text")
        #expect(t.error == nil)
        #expect(t.head?.headers["Content-Encoding"] == "gzip")
        #expect(t.bodyText == TestServers.gzipText)
        #expect(t.metrics.bodyBytesReceived < UInt64(t.responseBody.count) / 5, "the wire carried the compressed form")
        let (raw, _) = await fetch(servers.nginx + "/gzip/text") { $0.decompress = false }
        #expect(raw.head?.headers["Content-Encoding"] == nil, "no Accept-Encoding, no gzip")
    }

    @Test func headThenGetOnTheSameConnection() async {
        let (head, _) = await fetch(servers.nginx + "/large", method: .head)
        #expect(head.error == nil)
        #expect(head.responseBody.isEmpty)
        #expect(head.head?.headers["Content-Length"] == String(TestServers.largeSize))
        let (get, _) = await fetch(servers.nginx + "/small")
        #expect(get.error == nil && get.responseBody.count == 100)
    }

    @Test func redirectsOnNginx() async {
        let (moved, _) = await fetch(servers.nginx + "/moved")
        #expect(moved.head?.status == 200)
        #expect(moved.url.path == "/small")
        #expect(moved.metrics.redirects == 1)
        // The redirect's own response, kept for the caller (httpx's history): its URL and head.
        #expect(moved.history.map(\.head.status) == [301])
        #expect(moved.history.first?.url.path == "/moved")
        #expect(moved.history.first?.head.headers["Location"]?.hasSuffix("/small") == true)
        let (notFollowed, _) = await fetch(servers.nginx + "/moved") { $0.redirects = .none }
        #expect(notFollowed.head?.status == 301)
        #expect(notFollowed.history.isEmpty)
    }

    @Test func notFoundIsAResponseInTheCore() async {
        let (t, _) = await fetch(servers.nginx + "/no-such-file")
        #expect(t.error == nil)
        #expect(t.head?.status == 404)
    }
}
