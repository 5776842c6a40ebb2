import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// A resource on the scripted server whose answer a test chooses, and the count of requests that
/// reached it (`/res/<name>`, configured with `POST /res-config`).
struct ScriptedResource {
    let name: String

    /// A resource with a name no other test uses.
    init(_ label: String = "r") {
        name = "\(label)-\(UUID().uuidString.prefix(8))"
    }

    var url: String { TestServers.shared.scripted + "/res/" + name }
    var path: String { "/res/" + name }

    /// Sets how it answers: status, header fields, body, and more (see scripted_server.py).
    func configure(status: Int = 200, headers: [(String, String)] = [], body: String = "", dateOffset: Int? = nil,
                   echo: String? = nil, fail: String? = nil, headers304: [(String, String)] = [], delayMillis: Int? = nil,
                   held: Bool = false, ranges: Bool = false, cut: Int? = nil) async {
        var config: [String: Any] = ["status": status, "headers": headers.map { [$0.0, $0.1] }, "body": body,
                                     "headers_304": headers304.map { [$0.0, $0.1] }]
        if let dateOffset { config["date_offset"] = dateOffset }
        if let echo { config["echo"] = echo }
        if let fail { config["fail"] = fail }
        if let delayMillis { config["delay_ms"] = delayMillis }
        if held { config["hold"] = true }
        if ranges { config["ranges"] = true }
        if let cut { config["cut"] = cut }
        let json = try! JSONSerialization.data(withJSONObject: config)
        let t = await control(TestServers.shared.scripted + "/res-config?name=\(name)", body: .bytes(Array(json)))
        if t.status != 200 { Issue.record("the scripted server did not take the configuration: \(String(describing: t.error))") }
    }

    /// A POST to the scripted server's control paths. They are idempotent, so one that met a
    /// keep-alive connection the server had just closed (a POST is never replayed by itself) is
    /// sent again.
    private func control(_ url: String, body: RequestBody = .empty) async -> Transfer {
        var last: Transfer?
        for _ in 0..<3 {
            let (t, _) = await fetch(url, method: .post, body: body)
            if t.error?.code != .emptyReply, t.error?.code != .connectionReset { return t }
            last = t
        }
        return last!
    }

    /// Lets the answers of a `held` resource go (those waiting and every later one).
    func release() async {
        let t = await control(TestServers.shared.scripted + "/res-release?name=\(name)")
        if t.status != 200 { Issue.record("the scripted server did not release the resource: \(String(describing: t.error))") }
    }

    /// Requests that reached the server since the last `configure`.
    func requests() async -> Int { await scriptedStats("res-" + name).seen }
}

/// An engine on the scripted server with its own memory cache (and the cache, to inspect).
func cachedEngine(_ configuration: Cache.Configuration = Cache.Configuration()) -> (Engine, Cache) {
    let cache = try! Cache(configuration)
    var settings = Engine.Configuration()
    settings.cache = cache
    settings.callbackQueue = .loopThread
    settings.acceptableStatus = 0..<1000
    return (Engine(host: TestServers.shared.scripted, configuration: settings), cache)
}

extension Engine {
    /// GET `path` with `headers` under `policy`; the response (any status).
    func get(_ path: String, headers: [(String, String)] = [], policy: CachePolicy = .useProtocol,
             method: HTTPMethod = .get) async throws(CourierError) -> Response {
        let op = operation(path: path, method: method)
        for (name, value) in headers { op.headers.add(name: name, value: value) }
        op.cachePolicy = policy
        return try await send(op)
    }
}

extension Response {
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}
