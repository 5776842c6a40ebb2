import Courier

// The Swift examples of Sources/Courier/Courier.docc, verbatim (DocCExamplesTests checks that
// every ```swift block of the catalog appears here), so the documentation cannot drift from the
// API: this file does not compile when an example would not. DocCExamplesTests runs them. It
// imports only Courier, as the articles' readers would.

// From Caching.md.
func cachedEngine(host: String, directory: String) throws(CourierError) -> Engine {
    var configuration = Engine.Configuration()
    configuration.cache = try Cache(directory: directory)
    return Engine(host: host, configuration: configuration)
}

// From Engines.md.
func configuredEngine(host: String) -> Engine {
    var configuration = Engine.Configuration()
    configuration.options.timeouts.connect = .seconds(5)
    configuration.acceptableStatus = 200..<300
    return Engine(host: host, defaultHeaders: ["X-Api-Key": "k1"], configuration: configuration)
}

// From Engines.md.
func retiredEngine(host: String, log: @escaping @Sendable (String) -> Void) -> Engine {
    var configuration = Engine.Configuration()
    configuration.onInvalidated = { reason in log("engine gone: \(reason)") }
    let api = Engine(host: host, configuration: configuration)
    api.invalidate(cancellingRunning: true)
    return api
}

// From GettingStarted.md.
func firstRequest(host: String) async throws(CourierError) -> Int {
    let api = Engine(host: host)
    let response = try await api.get(path: "echo", params: ["page": "2"])
    return response.status
}

// From GettingStarted.md.
func bodyOfAFailure(api: Engine) async -> String? {
    do {
        _ = try await api.get(path: "status", params: ["code": "404", "body": "gone"])
        return nil
    } catch {
        return error.response?.text
    }
}

// From GettingStarted.md.
func shouldTryAgainLater(_ error: CourierError) -> Bool {
    if error.isCancelled { return false }
    return error.isRetryable || error.isConnectivity
}

// From Offline.md.
func freezableSave(host: String, directory: String) throws(CourierError) -> HTTPOperation {
    var configuration = Engine.Configuration()
    configuration.outbox = try Outbox(directory: directory)
    let api = Engine(host: host, configuration: configuration)
    let save = api.operation(path: "submit", method: .put)
    save.body = .bytes(Array("draft".utf8))
    save.freeze(kind: "draft")
    return save
}

// From Operations.md.
func upload(api: Engine) async throws(CourierError) -> Response {
    let op = api.operation(path: "echo", method: .post)
    op.body = .bytes(Array("hello".utf8))
    op.headers.replaceOrAdd(name: "Content-Type", value: "text/plain")
    op.timeouts.firstByte = .seconds(10)
    op.onUploadProgress { progress in _ = progress.completed }
    return try await api.send(op)
}

// From TheSharedQueue.md.
func watchActivity() -> Int {
    let observation = SharedQueue.observeActivity { activity in _ = activity.total }
    defer { observation.cancel() }
    return SharedQueue.activity.running
}

// From Engines.md.
struct WeatherError: Error, Equatable {
    let code: Int
}

struct WeatherAPI {
    let engine: Engine

    init(host: String, token: String) {
        var configuration = Engine.Configuration()
        // What a subclass's header preparation did, for every request of the engine.
        configuration.hooks.adaptRequest = { request in
            request.headers.replaceOrAdd(name: "X-Token", value: token)
        }
        // What operationSucceeded decided: a 200 carrying a business error fails, typed.
        configuration.hooks.validateResponse = { response in
            if let code = try? response.json()["error"]?.intValue { throw WeatherError(code: code) }
        }
        engine = Engine(host: host, configuration: configuration)
    }

    /// The forecast's text, or the API's own error (operationFailedWithError's mapping).
    func forecast(city: String) async -> Result<String, WeatherError> {
        do {
            let response = try await engine.get(path: "status", params: ["code": "200", "body": city])
            return .success(try response.string())
        } catch {
            if let business = error.underlying as? WeatherError { return .failure(business) }
            return .failure(WeatherError(code: -(error.response?.status ?? 0)))
        }
    }
}
