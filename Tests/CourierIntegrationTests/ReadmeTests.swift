import Foundation
import Testing

/// The README's quick start as a newcomer meets it: the C program compiles as written (with the
/// warnings a careful user turns on) and runs against a local server; the `Package.swift` lines
/// (a path dependency on this checkout, its identity the directory's name) build the Swift example.
@Suite("README quick start")
struct ReadmeTests {
    let s = TestServers.shared

    /// The README's code block in `language` that contains `marker`.
    static func block(_ language: String, containing marker: String) throws -> String {
        let text = try String(contentsOfFile: TestServers.packageRoot + "/README.md", encoding: .utf8)
        var blocks: [String] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```\(language)" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else if current != nil {
                current!.append(String(line))
            }
        }
        return try #require(blocks.first { $0.contains(marker) }, "README.md has no ```\(language) block with \(marker)")
    }

    /// The Python example runs as a script, as written (hosts replaced by the suite's servers).
    @Test func thePythonExampleRunsAsAScript() async throws {
        let scripted = await s.privateScripted()
        let script = try Self.block("python", containing: "import courier")
            .replacingOccurrences(of: "\"https://example.com/\"", with: "\"\(s.nginx)/small\"")
            .replacingOccurrences(of: "\"https://api.example.com\"", with: "\"\(scripted)\"")
            .replacingOccurrences(of: "\"/items\"", with: "\"/echo\"")
        let run = try await runProcess(pythonPath, ["-c", script],
                                       environment: ["PYTHONPATH": TestServers.packageRoot + "/cbindings/python", "COURIER_LIBRARY": CABITests.library])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("200 application/octet-stream ssss") && run.stdout.contains("['HTTP/1.1'"), "\(run.stdout)")
    }

    @Test func theCProgramCompilesAsWrittenAndRuns() async throws {
        let program = try Self.block("c", containing: "int main(")
        let directory = NSTemporaryDirectory() + "courier-readme-c-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try program.write(toFile: directory + "/app.c", atomically: true, encoding: .utf8)
        let libraries = try await CExamples.shared.directory()
        let compiler = ProcessInfo.processInfo.environment["CC"] ?? "cc"
        let built = try await runProcess("/usr/bin/env", [compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", TestServers.packageRoot + "/include",
                                                          directory + "/app.c", "-L", libraries, "-lcourier", "-Wl,-rpath," + libraries,
                                                          "-o", directory + "/app"])
        #expect(built.status == 0, "\(built.stderr)")
        let run = try await runProcess(directory + "/app", [s.nginx])
        #expect(run.status == 0 && run.stdout.hasPrefix("200 OK\n"), "\(run.stdout)\(run.stderr)")
    }

    @Test func thePackageLinesBuildTheSwiftExample() async throws {
        let manifest = try Self.block("swift", containing: "Package.swift of your package")
        let example = try Self.block("swift", containing: "let api = Engine(host: \"api.example.com\")")
        let directory = NSTemporaryDirectory() + "courier-readme-swift-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory + "/App/Sources/App", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The checkout beside the package, under the name the manifest's identity expects.
        try FileManager.default.createSymbolicLink(atPath: directory + "/courier", withDestinationPath: TestServers.packageRoot)
        try manifest.write(toFile: directory + "/App/Package.swift", atomically: true, encoding: .utf8)
        try example.write(toFile: directory + "/App/Sources/App/main.swift", atomically: true, encoding: .utf8)
        let build = try await runProcess("/usr/bin/env", ["swift", "build", "--package-path", directory + "/App"], background: true)
        #expect(build.status == 0, "\(build.stdout.suffix(3000))\(build.stderr.suffix(3000))")
    }
}
