import Courier
import Dispatch
import Glibc
import Synchronization

// `make demo`'s library half: one engine per API, every operation through the one shared queue,
// an activity indicator fed by the queue, callbacks and async/await side by side.

struct Item: Decodable {
    var id: Int
    var name: String
}

/// MKNetworkKit's YahooEngine pattern: the engine knows paths and models, callers do not.
final class CatalogAPI: Sendable {
    let engine: Engine

    init(base: String) {
        engine = Engine(host: base, defaultHeaders: ["Accept": "application/json"])
    }

    func items() async throws(CourierError) -> [Item] {
        try await engine.send(engine.operation(path: "items.json")).decode([Item].self)
    }

    func fetchPage(_ n: Int, completion: @escaping @Sendable (Result<Response, CourierError>) -> Void) {
        engine.enqueue(engine.operation(path: "pages/\(n).txt").onFinish(completion))
    }
}

guard CommandLine.arguments.count > 1 else {
    print("usage: courier-demo BASE_URL")
    exit(2)
}
let base = CommandLine.arguments[1]
let api = CatalogAPI(base: base)

SharedQueue.width = 4
print("shared queue width: \(SharedQueue.width)")
let peak = Mutex(QueueActivity(running: 0, queued: 0))
let indicator = SharedQueue.observeActivity { activity in
    peak.withLock { if activity.total > $0.total { $0 = activity } }
    print("  [activity] \(activity)")
}

let pages = 12
let done = DispatchSemaphore(value: 0)
let started = ContinuousClock.now
for n in 1...pages {
    api.fetchPage(n) { result in
        switch result {
        case .success(let response):
            let m = response.metrics
            print("  page \(n): \(response.status), \(response.body.count) bytes, "
                  + "queue \(m.queueWait), total \(m.total), \(m.reusedConnection ? "reused connection" : "new connection")")
        case .failure(let error):
            print("  page \(n): \(error)")
        }
        done.signal()
    }
}
for _ in 1...pages { done.wait() }
print("\(pages) pages in \(ContinuousClock.now - started); busiest moment: \(peak.withLock { $0 })")

let items = try await api.items()
print("async/await + Decodable: \(items.count) items, first \"\(items.first?.name ?? "-")\"")

let missing = api.engine.operation(path: "no-such-page")
do {
    _ = try await api.engine.send(missing)
} catch {
    print("a 404 is an error with the body kept: \(error.message), body \(missing.response?.body.count ?? 0) bytes")
}
print("curl equivalent of the last request: \(missing.curlCommand)")
indicator.cancel()

// The cache: an engine with one answers repeated GETs from storage, and says so.
var cached = Engine.Configuration()
cached.cache = try Cache()
let news = Engine(host: base, configuration: cached)
for attempt in 1...2 {
    let response = try await news.send(news.operation(path: "fresh/news.json"))
    print("cache, GET #\(attempt) of fresh/news.json: \(response.cachePhase) (\(response.cacheStatus))")
}
// Cached-then-fresh (MKNetworkKit's favourite): the stored response at once, then the origin's.
_ = try await news.send(news.operation(path: "revalidate/feed.json"))
let feed = news.operation(path: "revalidate/feed.json")
feed.cachePolicy = .cachedThenFresh
for try await response in news.responses(feed) {
    print("cached-then-fresh: \(response.isPreview ? "preview" : "final  "), \(response.cachePhase)")
}

// Streams: the body of a 300 MB file as an AsyncSequence, read at this loop's pace (a slow reader
// pauses the socket instead of buffering), and the same file to disk beside a counting stream.
let streamed = try await api.engine.stream(api.engine.operation(path: "big.bin"))
var streamedBytes = 0
var pieces = 0
var largest = 0
for try await chunk in streamed.body {
    streamedBytes += chunk.count
    pieces += 1
    largest = max(largest, chunk.count)
    if pieces % 64 == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
}
// (A piece is everything that waited for the reader: the largest is the most ever held.)
print("streamed \(streamed.status), \(streamedBytes) bytes in \(pieces) pieces, at most \(largest >> 10) KiB waiting at any time")
SharedQueue.shutdown()
