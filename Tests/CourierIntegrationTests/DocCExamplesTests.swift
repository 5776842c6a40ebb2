import Courier
import Foundation
import Testing

/// The catalog's examples (DocCExamples.swift): all there, and run against the local servers.
@Suite("DocC examples")
struct DocCExamplesTests {
    let s = TestServers.shared

    /// Every Swift code block of the catalog is in this file, character for character.
    @Test func everyExampleIsCompiledHere() throws {
        let root = TestServers.packageRoot
        let here = try String(contentsOfFile: root + "/Tests/CourierIntegrationTests/DocCExamples.swift", encoding: .utf8)
        let catalog = root + "/Sources/Courier/Courier.docc"
        let articles = try FileManager.default.contentsOfDirectory(atPath: catalog).filter { $0.hasSuffix(".md") }
        #expect(articles.count >= 8, "a getting-started article and one per concept")
        var checked = 0
        for article in articles {
            let text = try String(contentsOfFile: catalog + "/" + article, encoding: .utf8)
            var rest = Substring(text)
            while let open = rest.range(of: "```swift\n") {
                guard let close = rest[open.upperBound...].range(of: "```") else { break }
                let code = String(rest[open.upperBound..<close.lowerBound])
                #expect(here.contains(code), "\(article): an example not compiled by DocCExamples.swift:\n\(code)")
                checked += 1
                rest = rest[close.upperBound...]
            }
        }
        #expect(checked >= 8)
    }

    @Test func theExamplesRunAgainstTheLocalServers() async throws {
        #expect(try await firstRequest(host: s.scripted) == 200)
        let api = Engine(host: s.scripted)
        #expect(await bodyOfAFailure(api: api) == "gone")
        #expect(shouldTryAgainLater(CourierError(.connectFailed)))
        #expect(!shouldTryAgainLater(CourierError(.cancelled)))
        #expect(configuredEngine(host: s.scripted).defaultHeaders["X-Api-Key"] == "k1")
        #expect(retiredEngine(host: s.scripted, log: { _ in }).invalidation == .invalidated(cancelledRunning: true))
        // The wrapper that replaces MKNetworkKit's operation subclass: a plain answer, and a 200
        // whose body is a business error, typed.
        let weather = WeatherAPI(host: s.scripted, token: "t0k3n")
        #expect(await weather.forecast(city: "Paris") == .success("Paris"))
        #expect(await weather.forecast(city: #"{"error": 42}"#) == .failure(WeatherError(code: 42)))
        #expect(try await upload(api: api).status == 200)
        #expect(watchActivity() >= 0)
        let directory = s.root + "/docc-\(UUID().uuidString.prefix(8))"
        let cached = try cachedEngine(host: s.nginx, directory: directory + "/cache")
        #expect(try await cached.get(path: "small").body.count == 100)
        let save = try freezableSave(host: s.scripted, directory: directory + "/outbox")
        #expect(save.outboxID != nil || save.method == .put)
    }
}
