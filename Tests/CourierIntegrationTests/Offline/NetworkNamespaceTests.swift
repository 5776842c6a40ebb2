import Foundation
import Testing
@testable import CourierCore

/// Real network changes, in two network namespaces this test creates (and removes, also when it
/// fails): a veth pair with addresses from 198.51.100.0/24 (TEST-NET-2, used only inside them),
/// an Idempotency-Key server on the far end. The link goes down and up: the monitor reports
/// each change, a frozen request waits while it is down and goes out when it returns (its retry
/// interval is an hour: only the network's return can send it), and the width follows the kind
/// of interface (renamed wwan0, it is a modem: width 2; 0 in wifi-only mode, as `courier
/// --wifi-only --watch-network` shows). A connect with the link down fails with
/// "no route", and a retry waits for the link instead of failing again. Needs root (skipped
/// otherwise).
@Suite("Network changes in a namespace", .serialized)
struct NetworkNamespaceTests {
    let s = TestServers.shared
    /// Whether this machine lets the run make a namespace: root, iproute2, and a kernel or
    /// container that allows it (probed once by making and removing one).
    static let canCreateNamespaces: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") else { return false }
        let probe = "courier-probe-\(getpid())"
        guard (try? runProcessBlocking("/usr/sbin/ip", ["netns", "add", probe]))?.status == 0 else { return false }
        _ = try? runProcessBlocking("/usr/sbin/ip", ["netns", "del", probe])
        return true
    }()

    /// Runs `ip` with `arguments`; throws with its stderr when it fails.
    @discardableResult
    func ip(_ arguments: [String]) async throws -> ProcessResult {
        let run = try await runProcess("/usr/sbin/ip", arguments)
        if run.status != 0 { throw NamespaceError(message: "ip \(arguments.joined(separator: " ")): \(run.stderr)") }
        return run
    }

    struct NamespaceError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    @Test(.enabled(if: canCreateNamespaces, "creating network namespaces needs root, iproute2 and a kernel that allows it"))
    func theMonitorTheOutboxAndTheWidthFollowTheLink() async throws {
        let tag = String(getpid() % 100_000)
        let client = "courier-c\(tag)", server = "courier-s\(tag)"
        let clientLink = "cc\(tag)", serverLink = "cs\(tag)"
        var serverProcess: Process?
        do {
            try await ip(["netns", "add", client])
            try await ip(["netns", "add", server])
            try await ip(["link", "add", clientLink, "type", "veth", "peer", "name", serverLink])
            try await ip(["link", "set", clientLink, "netns", client])
            try await ip(["link", "set", serverLink, "netns", server])
            try await ip(["-n", client, "addr", "add", "198.51.100.1/24", "dev", clientLink])
            try await ip(["-n", server, "addr", "add", "198.51.100.2/24", "dev", serverLink])
            for (namespace, link) in [(client, clientLink), (server, serverLink)] {
                try await ip(["-n", namespace, "link", "set", "lo", "up"])
                try await ip(["-n", namespace, "link", "set", link, "up"])
            }
            try await ip(["-n", client, "route", "add", "default", "via", "198.51.100.2"])
            serverProcess = try startServer(in: server)

            try await body(client: client, clientLink: clientLink)
        } catch {
            Issue.record("\(error)")
        }
        if let serverProcess { kill(serverProcess.processIdentifier, SIGKILL) }
        _ = try? await runProcess("/usr/sbin/ip", ["netns", "del", client])
        _ = try? await runProcess("/usr/sbin/ip", ["netns", "del", server])
        let left = try await runProcess("/usr/sbin/ip", ["netns", "list"])
        #expect(!left.stdout.contains(client) && !left.stdout.contains(server), "the namespaces are removed")
    }

    /// The recording server, listening on 198.51.100.2:8080 inside `namespace`.
    func startServer(in namespace: String) throws -> Process {
        let process = TestServers.guardedServer(TestServers.packageRoot + "/Tests/Servers/idempotency_server.py", ["8080", "198.51.100.2"])
        let python = process.executableURL!.path
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = ["netns", "exec", namespace, python] + (process.arguments ?? [])
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        _ = pipe.fileHandleForReading.availableData  // its port line: listening
        return process
    }

    func body(client: String, clientLink: String) async throws {
        let bin = try await CExamples.shared.directory()
        let inClient = ["netns", "exec", client]
        // The monitor, watched by hand: its first line, then one per change. The link goes down
        // only once the first line is out (under load the watcher can start late).
        let watchOutput = FileManager.default.temporaryDirectory.appendingPathComponent("courier-watch-\(UUID().uuidString)").path
        async let watched = runProcess("/bin/sh", ["-c", "exec \"$0\" \"$@\" > \"\(watchOutput)\"", "/usr/sbin/ip"]
                                                  + inClient + [CLITests.binary, "--watch-network", "-m", "12", "http://198.51.100.2:8080/"])
        for _ in 0..<1000 {
            if ((try? String(contentsOfFile: watchOutput, encoding: .utf8)) ?? "").contains("\n") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await ip(["-n", client, "link", "set", clientLink, "down"])

        // Frozen while the link is down: journaled, its attempt fails, and it waits (an hour
        // between retries, so only the network's return sends it). Its debug lines go to a file
        // the test reads as they come: the link comes back once the request said it waits.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-ns-outbox-\(UUID().uuidString)").path
        let heldOutput = directory + ".stderr"
        defer { try? FileManager.default.removeItem(atPath: heldOutput) }
        async let delivered = runProcess("/bin/sh", ["-c", "exec \"$0\" \"$@\" 2> \"\(heldOutput)\"", "/usr/sbin/ip"]
                                                    + inClient + [bin + "/outbox", "wait", "http://198.51.100.2:8080/submit", directory, "3600000"])
        for _ in 0..<1000 {
            if ((try? String(contentsOfFile: heldOutput, encoding: .utf8)) ?? "").contains("held: Waiting in the outbox") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(((try? String(contentsOfFile: heldOutput, encoding: .utf8)) ?? "").contains("held: Waiting in the outbox"),
                "the request never waited in the outbox")
        // The link comes back once the watcher said it went: the monitor reads the state 50 ms
        // after netlink's last message, and a shorter outage (the outbox can be that quick when
        // the test runs alone) is rightly never reported.
        for _ in 0..<1000 {
            if ((try? String(contentsOfFile: watchOutput, encoding: .utf8)) ?? "").contains("none - unreachable") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        // With the link down, from C: a connect fails at once with "no route", and a retry with a
        // 50 ms interval waits for the network instead of failing again. The link stays down a
        // second after the first failure (the outage's length: the retry's interval ends inside it).
        let retryOutput = directory + ".retry"
        defer { try? FileManager.default.removeItem(atPath: retryOutput) }
        async let retried = runProcess("/bin/sh", ["-c", "exec \"$0\" \"$@\" > \"\(retryOutput)\"", "/usr/sbin/ip"]
                                                  + inClient + [bin + "/outbox", "retry", "http://198.51.100.2:8080/submit"])
        for _ in 0..<1000 {
            if ((try? String(contentsOfFile: retryOutput, encoding: .utf8)) ?? "").contains("unrouted") { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .seconds(1))  // (the outage's length, not a wait for a state)
        try await ip(["-n", client, "link", "set", clientLink, "up"])
        try await ip(["-n", client, "route", "add", "default", "via", "198.51.100.2"])

        let sent = try await delivered
        #expect(sent.status == 0 && sent.stdout.hasPrefix("delivered 201 "), "sent when the link came back: \(sent.stdout)\(sent.stderr)")
        let retry = try await retried
        let retryLines = (try? String(contentsOfFile: retryOutput, encoding: .utf8)) ?? ""
        #expect(retry.status == 0 && retryLines.hasPrefix("unrouted\nretried 201 1\n"), "\(retryLines)\(retry.stderr)")
        _ = try await watched
        let output = ((try? String(contentsOfFile: watchOutput, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        let lines = output.filter { !$0.hasPrefix("  ") }
        let hosts = output.filter { $0.hasPrefix("  ") }
        #expect(lines.first == "wired \(clientLink) reachable width 6", "\(output)")
        #expect(lines.contains("none - unreachable width 6"), "the link went down (no network keeps the width): \(output)")
        #expect(lines.last == "wired \(clientLink) reachable width 6", "and came back: \(output)")
        // The host's own line after each: no route while the link is down, routed when it is up.
        #expect(hosts.count == lines.count, "one host line per change: \(output)")
        #expect(hosts.first == "  198.51.100.2 reachable routed \(clientLink)", "\(output)")
        #expect(hosts.contains("  198.51.100.2 unreachable no-route"), "\(output)")
        #expect(hosts.last == "  198.51.100.2 reachable routed \(clientLink)", "\(output)")

        // A modem's name: cellular, and the queue's width follows (2).
        try await ip(["-n", client, "link", "set", clientLink, "down"])
        try await ip(["-n", client, "link", "set", clientLink, "name", "wwan0"])
        try await ip(["-n", client, "link", "set", "wwan0", "up"])
        try await ip(["-n", client, "route", "add", "default", "via", "198.51.100.2"])
        // (The kernel brings a veth's carrier up after the command returns: the status is asked
        // until the link is up, for at most ten seconds.)
        var modem = try await runProcess("/usr/sbin/ip", inClient + [bin + "/outbox", "network"])
        for _ in 0..<200 where modem.stdout != "3 wwan0 2\n" {
            try await Task.sleep(for: .milliseconds(50))
            modem = try await runProcess("/usr/sbin/ip", inClient + [bin + "/outbox", "network"])
        }
        #expect(modem.stdout == "3 wwan0 2\n", "cellular, width 2: \(modem.stdout)\(modem.stderr)")
        // Wifi-only mode through the real monitor: nothing goes on a modem (C, then the CLI).
        let wifiOnly = try await runProcess("/usr/sbin/ip", inClient + [bin + "/outbox", "network", "wifi-only"])
        #expect(wifiOnly.stdout == "3 wwan0 0\n", "cellular in wifi-only mode, width 0: \(wifiOnly.stdout)\(wifiOnly.stderr)")
        let wifiWatch = try await runProcess("/usr/sbin/ip", inClient + [CLITests.binary, "--wifi-only", "--watch-network", "-m", "0.2"])
        #expect(wifiWatch.stdout.hasPrefix("cellular wwan0 reachable width 0\n"), "\(wifiWatch.stdout)\(wifiWatch.stderr)")
        try await ip(["-n", client, "link", "set", "wwan0", "down"])
        let nothing = try await runProcess("/usr/sbin/ip", inClient + [bin + "/outbox", "network"])
        #expect(nothing.stdout == "0 - 6\n", "no network: the width stays: \(nothing.stdout)")
    }
}
