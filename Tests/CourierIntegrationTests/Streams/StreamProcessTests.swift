import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Streams in processes of their own: the C ABI's callbacks (Tests/CPrograms/streams.c), the CLI's
/// -F, -T, -C -, --limit-rate and --create-dirs, and 2 GiB transfers whose peak RSS is measured.
@Suite("Streams across processes")
struct StreamProcessTests {
    let s = TestServers.shared

    func cli(_ arguments: [String], stdin: Data? = nil) async throws -> ProcessResult {
        try await runProcess(CLITests.binary, arguments, stdin: stdin)
    }

    func temporaryDirectory() throws -> String {
        let directory = NSTemporaryDirectory() + "courier-sp-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The number after `key` in a line of `text` ("peak-rss-kib 17544").
    func number(after key: String, in text: String) -> Int? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard let index = words.firstIndex(where: { $0 == key }), index + 1 < words.count else { return nil }
        return Int(words[index + 1])
    }

    @Test func cCallbacksPauseResumeAndProduce() async throws {
        let bin = try await CExamples.shared.directory()
        let slow = try await runProcess(bin + "/streams", ["slow", s.stream + "/blob/\(200 << 20)", "\(200 << 20)"])
        #expect(slow.status == 0, "\(slow.stdout)\(slow.stderr)")
        let small = try await runProcess(bin + "/streams", ["slow", s.stream + "/blob/\(1 << 20)", "\(1 << 20)"])
        if let big = number(after: "peak-rss-kib", in: slow.stdout), let base = number(after: "peak-rss-kib", in: small.stdout) {
            #expect(big - base < 8 * 1024, "200 MiB through a pausing callback grew the peak by \(big - base) KiB")
        } else {
            Issue.record("no RSS figure: \(slow.stdout)")
        }

        let upload = try await runProcess(bin + "/streams", ["upload", s.stream + "/upload", "3000000"])
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(upload.stdout.contains("\"length\": 3000000") && upload.stdout.contains("\"chunked\": true"), "\(upload.stdout)")

        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/notes.txt"
        try Data("from a file\n".utf8).write(to: URL(fileURLWithPath: file))
        let form = try await runProcess(bin + "/streams", ["form", s.stream + "/upload?echo=1", file])
        #expect(form.status == 0, "\(form.stderr)")
        let boundary = String(form.stdout.split(separator: "\r\n").first?.dropFirst(2) ?? "")
        let expected = "--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\na \"quoted\" value\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        #expect(form.stdoutBytes.starts(with: Array(expected.utf8)), "\(form.stdout)")
        #expect(form.stdout.hasSuffix("name=\"upload\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\nfrom a file\n\r\n--\(boundary)--\r\n"))

        let resume = try await runProcess(bin + "/streams", ["resume", s.stream + "/blob/5000000?cut=2000000", s.stream + "/blob/5000000?via=mirror",
                                                             directory + "/resumed.bin"])
        #expect(resume.status == 0, "\(resume.stdout)\(resume.stderr)")
        let fanout = try await runProcess(bin + "/streams", ["fanout", s.stream + "/blob/3000000", directory + "/fan.bin"])
        #expect(fanout.status == 0, "\(fanout.stdout)\(fanout.stderr)")
        let destination = try await runProcess(bin + "/streams", ["destination", s.stream + "/blob/3000", directory])
        #expect(destination.status == 0, "\(destination.stdout)\(destination.stderr)")
    }

    /// courier_request_read: a slow reader on its own thread with a small buffer gets the same
    /// bytes as the output file beside it, hears AGAIN while the server is silent, and stays
    /// within a few buffers of memory; read alone it gets them through the lent socket reads; a
    /// cancel mid-body reaches the reader as CANCELLED; a reader that never waits is woken by the
    /// readable callback or the readable descriptor.
    @Test func cBodyReaderPullsAtItsOwnPace() async throws {
        let bin = try await CExamples.shared.directory()
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let big = try await runProcess(bin + "/streams", ["pull", s.stream + "/blob/\(100 << 20)?delay=300", "\(100 << 20)", directory + "/big.bin"])
        #expect(big.status == 0, "\(big.stdout)\(big.stderr)")
        let small = try await runProcess(bin + "/streams", ["pull", s.stream + "/blob/\(1 << 20)?delay=300", "\(1 << 20)", directory + "/small.bin"])
        #expect(small.status == 0, "\(small.stdout)\(small.stderr)")
        if let bigPeak = number(after: "peak-rss-kib", in: big.stdout), let base = number(after: "peak-rss-kib", in: small.stdout) {
            #expect(bigPeak - base < 8 * 1024, "100 MiB through a slow reader grew the peak by \(bigPeak - base) KiB")
        } else {
            Issue.record("no RSS figure: \(big.stdout)")
        }
        #expect(big.stdout.contains("first-again 1 end-again 1 same-as-file 1") && big.stdout.contains("cancelled: read 18 "), "\(big.stdout)")
        // Read alone (the socket's reads lent to the reading thread): the file's bytes, whole.
        #expect(big.stdout.contains("alone: read 0, \(100 << 20) bytes, same-as-file 1, done 0"), "\(big.stdout)")
        #expect(small.stdout.contains("alone: read 0, \(1 << 20) bytes, same-as-file 1, done 0"), "\(small.stdout)")
        // Reads that never wait, woken through the readable descriptor in poll().
        #expect(big.stdout.contains("descriptor: read 0, \(100 << 20) bytes,") && big.stdout.contains("poll failed 0, quiet after 1"), "\(big.stdout)")
    }

    @Test func cliFormsAndUploads() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/a.txt"
        try Data("file text".utf8).write(to: URL(fileURLWithPath: file))
        let form = try await cli(["-s", "-F", "name=value", "-F", "doc=@\(file);type=text/x-doc;filename=renamed.txt",
                                  "-F", "inline=<\(file)", "--form-string", "lit=@not-a-file", s.stream + "/upload"])
        #expect(form.status == 0, "\(form.stderr)")
        let answer = try #require(JSONSerialization.jsonObject(with: form.stdoutBytes) as? [String: Any])
        let parts = try #require(answer["parts"] as? [[String: Any]])
        #expect(parts.map { $0["name"] as? String } == ["name", "doc", "inline", "lit"])
        #expect(parts[1]["filename"] as? String == "renamed.txt" && parts[1]["content_type"] as? String == "text/x-doc")
        #expect(parts[2]["filename"] == nil || parts[2]["filename"] is NSNull, "<file is a field, not an upload")
        #expect(parts[2]["length"] as? Int == 9 && parts[3]["length"] as? Int == 11)

        let put = try await cli(["-s", "-T", file, s.stream + "/upload"])
        #expect(put.stdout.contains("\"length\": 9") && put.stdout.contains("\"chunked\": false"), "\(put.stdout)")
        let stdin = try await cli(["-s", "-T", "-", s.stream + "/upload?echo=1"], stdin: Data(repeating: 0x41, count: 300_000))
        #expect(stdin.status == 0 && stdin.stdoutBytes == Data(repeating: 0x41, count: 300_000), "\(stdin.stderr)")
        let missing = try await cli(["-s", "-T", directory + "/nope", s.stream + "/upload"])
        #expect(missing.status == 26, "a file that cannot be read is curl's 26: \(missing.stderr)")
        let badForm = try await cli(["-s", "-F", "novalue", s.stream + "/upload"])
        #expect(badForm.status == 2)
    }

    @Test func cliContinuesDownloads() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let out = directory + "/c.bin"
        let cut = try await cli(["-s", "-C", "-", "-o", out, s.stream + "/blob/4000000?cut=1500000"])
        #expect(cut.status == 18, "a cut body is curl's 18: \(cut.stderr)")
        #expect((try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) == 1_500_000, "-C - keeps what arrived")
        let reset = try await cli(["-s", "-C", "-", "-o", out, s.stream + "/blob/4000000?cut=1000000&reset=1"])
        #expect(reset.status == 56, "a reset is curl's 56: \(reset.stderr)")
        let before = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
        let rest = try await cli(["-s", "-C", "-", "-o", out, "-w", "%{http_code}", "--trace-ascii", directory + "/rest.trace",
                                  s.stream + "/blob/4000000"])
        #expect(rest.status == 0 && rest.stdout == "206", "\(rest.stdout)\(rest.stderr)")
        // --trace-ascii dumps what this run received, read back from the file's end.
        let trace = (try? String(contentsOfFile: directory + "/rest.trace", encoding: .isoLatin1)) ?? ""
        let dumped = trace.split(separator: "\n").filter { $0.hasPrefix("<= Recv data, ") }
            .compactMap { Int($0.dropFirst("<= Recv data, ".count).prefix { $0 != " " }) }
        #expect(before > 0 && dumped.reduce(0, +) == 4_000_000 - before && dumped.count > 1, "\(before) \(dumped.prefix(3))")
        let whole = try await cli(["-s", s.stream + "/blob/4000000"])
        #expect(FileManager.default.contents(atPath: out) == whole.stdoutBytes)
        #expect(!FileManager.default.fileExists(atPath: out + ".courier-resume"))
        let again = try await cli(["-s", "-C", "-", "-o", out, "-w", "%{http_code}", s.stream + "/blob/4000000"])
        #expect(again.status == 0 && again.stdout == "416", "a complete file is left alone: \(again.stdout)")
        let noRanges = try await cli(["-s", "-C", "-", "-o", out, s.stream + "/blob/5000000?noranges=1"])
        #expect(noRanges.status == 33, "a server that ignores ranges is curl's 33: \(noRanges.stderr)")
        #expect(FileManager.default.contents(atPath: out) == whole.stdoutBytes, "and the file is untouched")
        // curl's -C - on a file with no record: continued from its size, without If-Range.
        try Data(whole.stdoutBytes.prefix(1000)).write(to: URL(fileURLWithPath: directory + "/plain.bin"))
        let plain = try await cli(["-s", "-C", "-", "-o", directory + "/plain.bin", s.stream + "/blob/4000000"])
        #expect(plain.status == 0 && FileManager.default.contents(atPath: directory + "/plain.bin") == whole.stdoutBytes)
    }

    @Test func cliCreatesDirectoriesAndLimitsTheRate() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let nested = directory + "/a/b/c/out.bin"
        let made = try await cli(["-s", "--create-dirs", "-o", nested, s.stream + "/blob/1000"])
        #expect(made.status == 0 && FileManager.default.contents(atPath: nested)?.count == 1000)
        let without = try await cli(["-s", "-o", directory + "/x/y/out.bin", s.stream + "/blob/1000"])
        #expect(without.status == 23, "\(without.stderr)")
        // The limit is enforced by pausing reads; what is checked is that every byte arrives
        // (speed is for benchmarks, not tests).
        let limited = try await cli(["-s", "--limit-rate", "4M", "-o", "/dev/null", "-w", "%{size_download}", s.stream + "/blob/2000000"])
        #expect(limited.status == 0 && limited.stdout == "2000000", "\(limited.stdout)\(limited.stderr)")
        let bad = try await cli(["-s", "-C", "100", s.stream + "/blob/10"])
        #expect(bad.status == 2)
    }

    /// 2 GiB up and down, through the CLI, the Swift stream API, the C callback and Python: the
    /// peak RSS of each process is measured and must stay within a few MiB of the same process
    /// moving 1 MiB.
    @Test func twoGibibytesInBoundedMemory() async throws {
        let big = 2 << 30
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sparse = directory + "/sparse", tiny = directory + "/tiny"
        #expect(truncate(sparse, off_t(big)) == 0 || FileManager.default.createFile(atPath: sparse, contents: nil) && truncate(sparse, off_t(big)) == 0)
        FileManager.default.createFile(atPath: tiny, contents: Data(count: 1 << 20))
        let bulk = builtProduct("courier-bulk")
        func peak(_ arguments: [String]) async throws -> (kib: Int, bytes: Int) {
            let run = try await runProcess(bulk, arguments, background: true)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            let object = try JSONSerialization.jsonObject(with: run.stdoutBytes) as? [String: Any]
            return ((object?["peak_rss_kib"] as? Int) ?? 0, (object?["bytes"] as? Int) ?? 0)
        }
        for mode in ["swift-stream", "c-callback"] {
            let base = try await peak(["download", s.stream + "/blob/\(1 << 20)", mode, "--slow"])
            let large = try await peak(["download", s.stream + "/blob/\(big)", mode, "--slow"])
            #expect(large.bytes == big, "\(mode)")
            #expect(large.kib - base.kib < 8 * 1024, "2 GiB downloaded through \(mode): peak \(large.kib) KiB, \(base.kib) KiB for 1 MiB")
        }
        for mode in ["swift-file", "swift-stream"] {
            let base = try await peak(["upload", s.stream + "/upload", mode, tiny])
            let large = try await peak(["upload", s.stream + "/upload", mode, sparse])
            #expect(large.kib - base.kib < 8 * 1024, "2 GiB uploaded through \(mode): peak \(large.kib) KiB, \(base.kib) KiB for 1 MiB")
        }
        // The CLI, under the peak-RSS wrapper (wait4 after a real fork: the child's own figure).
        func cliPeak(_ arguments: [String]) async throws -> Int {
            let run = try await runProcess(pythonPath, [TestServers.packageRoot + "/Tests/Servers/peak_rss.py", CLITests.binary] + arguments, background: true)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            return Int(run.stderr.split(separator: "\n").last { $0.hasPrefix("peak-rss-kib ") }?.dropFirst(13) ?? "") ?? 0
        }
        let cliBase = try await cliPeak(["-s", "-T", tiny, "-o", "/dev/null", s.stream + "/upload"])
        let cliUpload = try await cliPeak(["-s", "-T", sparse, "-o", "/dev/null", s.stream + "/upload"])
        let cliDownload = try await cliPeak(["-s", "-o", "/dev/null", s.stream + "/blob/\(big)"])
        #expect(cliUpload - cliBase < 8 * 1024 && cliDownload - cliBase < 8 * 1024,
                "CLI peaks: \(cliBase) KiB for 1 MiB, \(cliUpload) KiB up, \(cliDownload) KiB down")
        // Python reading 2 GiB slowly through iter_bytes().
        let script = """
        import courier, time
        def peak():
            # VmHWM: this process's own high-water mark (ru_maxrss would include the spawner's).
            for line in open("/proc/self/status"):
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        def run(size):
            with courier.Engine("\(s.stream)") as engine, engine.stream("GET", "/blob/%d" % size) as r:
                n = 0
                for i, chunk in enumerate(r.iter_bytes()):
                    n += len(chunk)
                    if i % 64 == 0:
                        time.sleep(0.001)
                assert n == size, n
            return peak()
        base = run(1 << 20)
        print(base, run(\(big)))
        """
        let python = try await runProcess(pythonPath, ["-c", script],
                                          environment: ["COURIER_LIBRARY": CABITests.library, "PYTHONPATH": TestServers.packageRoot + "/cbindings/python"])
        let figures = python.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(figures.count == 2 && figures[1] - figures[0] < 8 * 1024, "Python: \(python.stdout)\(python.stderr)")
    }
}
