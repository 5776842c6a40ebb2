import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Downloads through the Swift API against Tests/Servers/stream_server.py: bodies as async
/// sequences with back-pressure, streams beside files, destinations from the head, resumable
/// downloads.
@Suite("Streamed downloads")
struct DownloadTests {
    let s = TestServers.shared

    func engine() -> Engine { Engine(host: s.stream) }

    /// The server's bytes for /blob/SIZE?seed=SEED, fetched whole (the reference to compare with).
    func reference(_ size: Int, seed: String = "0") async throws -> [UInt8] {
        let body = try await engine().send(engine().operation(path: "/blob/\(size)?seed=\(seed)")).body
        #expect(body.count == size)
        return body
    }

    func temporaryDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "courier-dl-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    func contents(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    @Test func theBodyStreamsAtTheReadersPace() async throws {
        let api = engine()
        let size = 48 << 20
        let response = try await api.stream(api.operation(path: "/blob/\(size)"))
        #expect(response.status == 200)
        #expect(response.headers["ETag"] == "\"blob-\(size)-0\"", "headers come before the body")
        var total = 0
        var pieces = 0
        for try await chunk in response.body {
            total += chunk.count
            pieces += 1
            // A slow reader: the socket is paused instead of buffering the body.
            if pieces % 8 == 0 { try await Task.sleep(nanoseconds: 2_000_000) }
        }
        #expect(total == size)
        let (peak, pauses, _) = response.body.channel.statistics
        #expect(pauses > 0, "the reader was slower than loopback: the transfer must have paused")
        #expect(peak <= BodyChannel.pauseAbove + LoopReadBuffers.socketSize + (64 << 10),
                "at most the pause threshold and one read wait for the reader (\(peak) bytes)")
        let finished = try await response.finished()
        #expect(finished.body.isEmpty, "the body went to the stream, not to memory")
        #expect(finished.metrics.bodyBytesReceived == UInt64(size))
    }

    @Test func streamedBytesAreTheServersBytes() async throws {
        let expected = try await reference(3_000_000, seed: "x")
        let api = engine()
        // Plain: the socket reads reach the reader as the arrays they went into; chunked: read
        // into arrays too, the pieces between the framing copied out of them; gzip: decoded.
        for path in ["/blob/3000000?seed=x", "/blob/3000000?seed=x&chunked=200000", "/blob/3000000?seed=x&gzip=1"] {
            let response = try await api.stream(api.operation(path: path))
            var body: [UInt8] = []
            var index = 0
            for try await chunk in response.body {
                body += chunk
                index += 1
                if index % 3 == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
            }
            let same = body == expected
            #expect(same, "\(path): \(body.count) bytes")
            let kept = response.body.channel.statistics.keptReads
            if path.hasSuffix("gzip=1") {
                #expect(kept == 0, "a decoded body is copied")
            } else if !path.contains("chunked") {
                #expect(kept > 0, "\(path): no read reached the reader as its own array")
            }
        }
    }

    /// A reset after the body's first megabyte (the server waits 50 ms, so every byte before it
    /// has been read): the reader gets those bytes, then the reset itself, not a short body — also
    /// when the reset was taken by the `recv` that fills a read's array, which libuv then sees as
    /// an end.
    @Test func aResetMidBodyReachesTheReaderAsAReset() async throws {
        let expected = try await reference(3_000_000)
        let api = engine()
        for _ in 0..<3 {
            let response = try await api.stream(api.operation(path: "/blob/3000000?cut=1000000&reset=1"))
            var body: [UInt8] = []
            do {
                for try await chunk in response.body { body += chunk }
                Issue.record("the body ended without the reset")
            } catch {
                #expect(error.code == .connectionReset, "\(error)")
            }
            let prefix = body.count <= 1_000_000 && body[...] == expected.prefix(body.count)
            #expect(prefix, "\(body.count) bytes, the server's first ones")
        }
    }

    @Test func leavingTheBodyEarlyCancels() async throws {
        let api = engine()
        let op = api.operation(path: "/blob/\(1 << 30)")
        let response = try await api.stream(op)
        for try await _ in response.body { break }
        #expect(await waitUntil { op.state == .finished })
        #expect(op.error?.code == .cancelled)
    }

    @Test func droppingTheResponseUnreadCancels() async throws {
        let api = engine()
        let op = api.operation(path: "/blob/\(1 << 30)")
        do {
            let response = try await api.stream(op)
            #expect(response.status == 200)
        }
        // Paused with nobody to read, the transfer would hold its connection for ever.
        #expect(await waitUntil { op.state == .finished })
        #expect(op.error?.code == .cancelled)
    }

    @Test func aFailureBeforeTheHeadThrowsFromStream() async throws {
        let api = Engine(host: "http://127.0.0.1:\(s.blackholePort)")
        let op = api.operation(path: "/x")
        op.options.timeouts.connect = .milliseconds(200)
        await #expect(throws: CourierError.self) { _ = try await api.stream(op) }
    }

    final class SlowCounter: DownloadStream, @unchecked Sendable {
        let lock = NSLock()
        var bytes = 0
        var pauses = 0
        weak var operation: Courier.HTTPOperation?
        func write(_ bytes: UnsafeRawBufferPointer) -> StreamVerdict {
            lock.withLock { self.bytes += bytes.count }
            // Pause after every piece; resume from another thread a moment later.
            lock.withLock { pauses += 1 }
            let op = operation
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { op?.resume() }
            return .pause
        }
    }

    @Test func fanOutToAFileAndASlowStream() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let api = engine()
        let op = api.operation(path: "/blob/6000000")
        op.downloadPath = directory + "/fan.bin"
        let counter = SlowCounter()
        counter.operation = op
        op.addDownloadStream(counter)
        let response = try await api.send(op)
        #expect(response.status == 200)
        #expect(counter.bytes == 6_000_000)
        #expect(counter.pauses > 1)
        let expected = try await reference(6_000_000)
        let same = contents(directory + "/fan.bin") == expected
        #expect(same)
    }

    @Test func theDestinationIsChosenFromTheHead() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let api = engine()
        let op = api.operation(path: "/blob/5000")
        op.downloadDestination = { head in
            head.status == 200 ? directory + "/" + (head.headers["ETag"] ?? "none").filter { $0 != "\"" } : nil
        }
        let response = try await api.send(op)
        #expect(response.body.isEmpty)
        #expect(contents(directory + "/blob-5000-0")?.count == 5000)
        // nil keeps the body in memory.
        let kept = api.operation(path: "/blob/100")
        kept.downloadDestination = { _ in nil }
        #expect(try await api.send(kept).body.count == 100)
    }

    @Test func aBrokenDownloadIsContinuedFromAnotherURL() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/big.bin"
        let api = engine()
        let first = api.operation(path: "/blob/5000000?cut=1500000")
        first.resumableDownloadPath = path
        await #expect(throws: CourierError.self) { _ = try await api.send(first) }
        #expect(!FileManager.default.fileExists(atPath: path), "the destination is never partial")
        #expect(contents(path + ".courier-partial")?.count == 1_500_000)
        #expect(ResumeRecord.decode(String(decoding: contents(path + ".courier-resume") ?? [], as: UTF8.self))?.length == 5_000_000)

        // Later, from a mirror (another URL for the same resource), reporting whole-file progress.
        let second = api.operation(path: "/blob/5000000?mirror=2")
        second.resumableDownloadPath = path
        let seen = Mutex_<[TransferProgress]>([])
        second.onDownloadProgress { progress in seen.mutate { $0.append(progress) } }
        let response = try await api.send(second)
        #expect(response.status == 206)
        #expect(seen.value.last?.completed == 5_000_000 && seen.value.last?.expected == 5_000_000)
        let expected = try await reference(5_000_000)
        let same = contents(path) == expected
        #expect(same)
        #expect(!FileManager.default.fileExists(atPath: path + ".courier-partial"))
        #expect(!FileManager.default.fileExists(atPath: path + ".courier-resume"))
    }

    @Test func aResetMidBodyIsContinuedFromWhatReachedTheDisk() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/reset.bin"
        let api = engine()
        let op = api.operation(path: "/blob/4000000?cut=2500000&reset=1&cutonce=\(UUID().uuidString)")
        op.resumableDownloadPath = path
        op.options.resumeAttempts = 1
        let response = try await api.send(op)
        #expect(response.metrics.resumes == 1)
        let same = contents(path) == (try await reference(4_000_000))
        #expect(same)
    }

    @Test func aDownloadContinuesItselfWithinItsAttempts() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/self.bin"
        let api = engine()
        let op = api.operation(path: "/blob/4000000?cut=1000000&cutonce=\(UUID().uuidString)")
        op.resumableDownloadPath = path
        op.options.resumeAttempts = 2
        let response = try await api.send(op)
        #expect(response.metrics.resumes == 1)
        let same = contents(path) == (try await reference(4_000_000))
        #expect(same)
    }

    @Test func aChangedResourceStartsOver() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/changed.bin"
        let api = engine()
        let first = api.operation(path: "/blob/3000000?seed=old&cut=1000000")
        first.resumableDownloadPath = path
        _ = try? await api.send(first)
        #expect(contents(path + ".courier-partial")?.count == 1_000_000)
        // The same name now serves other bytes (another ETag): If-Range fails, a 200 restarts.
        let second = api.operation(path: "/blob/3000000?seed=new")
        second.resumableDownloadPath = path
        let response = try await api.send(second)
        #expect(response.status == 200)
        let same = contents(path) == (try await reference(3_000_000, seed: "new"))
        #expect(same)
    }

    @Test func aDamagedRecordRestartsAndACompleteFileFinishes() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/d.bin"
        let api = engine()
        let first = api.operation(path: "/blob/2000000?cut=500000")
        first.resumableDownloadPath = path
        _ = try? await api.send(first)
        // One flipped byte in the record: never trusted, the download restarts from zero.
        var record = try #require(contents(path + ".courier-resume"))
        record[record.count / 2] ^= 0x01
        try Data(record).write(to: URL(fileURLWithPath: path + ".courier-resume"))
        let second = api.operation(path: "/blob/2000000")
        second.resumableDownloadPath = path
        #expect(try await api.send(second).status == 200)
        let same = contents(path) == (try await reference(2_000_000))
        #expect(same)

        // A partial file that is already whole: the server's 416 finishes it.
        try FileManager.default.moveItem(atPath: path, toPath: path + ".courier-partial")
        try Data(ResumeRecord(validator: .etag("\"blob-2000000-0\""), length: 2_000_000, url: "x").encoded().utf8)
            .write(to: URL(fileURLWithPath: path + ".courier-resume"))
        let third = api.operation(path: "/blob/2000000")
        third.resumableDownloadPath = path
        let finished = try await api.send(third)
        #expect(finished.status == 200, "a 416 for a complete file counts as done")
        #expect(contents(path)?.count == 2_000_000)
        #expect(!FileManager.default.fileExists(atPath: path + ".courier-resume"))
    }

    /// nginx's own Range and If-Range: a partial file of its /large (with a record naming nginx's
    /// ETag) is continued with a 206; a record with another ETag makes nginx send the whole file.
    @Test func nginxContinuesAPartialFile() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let api = Engine(host: s.nginx)
        let head = try await api.send(api.operation(path: "/large", method: .head))
        let etag = try #require(head.head.headers["ETag"])
        let whole = try #require(FileManager.default.contents(atPath: s.root + "/html/large"))
        for (tag, status) in [(etag, 206), ("\"other\"", 200)] {
            let path = directory + "/large-\(status)"
            try whole.prefix(10_000_000).write(to: URL(fileURLWithPath: path + ".courier-partial"))
            try Data(ResumeRecord(validator: .etag(tag), length: UInt64(whole.count), url: "x").encoded().utf8)
                .write(to: URL(fileURLWithPath: path + ".courier-resume"))
            let op = api.operation(path: "/large")
            op.resumableDownloadPath = path
            let response = try await api.send(op)
            #expect(response.status == status)
            let same = FileManager.default.contents(atPath: path) == whole
            #expect(same, "\(status)")
        }
    }

    /// Cut at offsets chosen by a seeded generator (the seed is in the failure message), each
    /// continued by a new operation: the file ends whole.
    @Test func cutsAtRandomOffsetsAreEachContinued() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix(seed: seed)
        let size = 6_000_000
        let path = directory + "/random.bin"
        let api = engine()
        var offset = 0
        for round in 0..<5 {
            let cut = Int(random.next() % 1_200_000) + 1
            let reset = random.next() % 2 == 0
            let op = api.operation(path: "/blob/\(size)?cut=\(cut)\(reset ? "&reset=1" : "")&round=\(round)")
            op.resumableDownloadPath = path
            _ = try? await api.send(op)
            let onDisk = (try? FileManager.default.attributesOfItem(atPath: path + ".courier-partial")[.size] as? Int) ?? 0
            #expect(onDisk >= offset, "seed \(seed): the partial file shrank")
            offset = onDisk
        }
        let last = api.operation(path: "/blob/\(size)")
        last.resumableDownloadPath = path
        _ = try await api.send(last)
        let same = contents(path) == (try await reference(size))
        #expect(same, "seed \(seed)")
    }

    @Test func aResourceWithoutValidatorsCannotBeResumed() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/weak.bin"
        let api = engine()
        let op = api.operation(path: "/blob/2000000?weak=1&cut=500000")
        op.resumableDownloadPath = path
        _ = try? await api.send(op)
        #expect(!FileManager.default.fileExists(atPath: path + ".courier-partial"),
                "with nothing to check a resume against, the partial file is not kept")
    }
}

/// SplitMix64, for offsets a failing run can replay from its seed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Polls `condition` (up to 10 s).
func waitUntil(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
    for _ in 0..<1000 {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}
