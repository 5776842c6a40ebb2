import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// curl's -z against nginx (which answers If-Modified-Since at the file's exact time with 304,
/// and If-Unmodified-Since before it with 412): Swift's setTimeCondition, C's
/// courier_request_set_time_condition (Tests/CPrograms/timecond.c), the CLI's -z with a date, a
/// file and a bad argument. (Python: test_time_condition.py.)
@Suite("Time conditions against nginx")
struct TimeConditionIntegrationTests {
    let s = TestServers.shared

    /// /small's modification time, as nginx's Last-Modified says.
    func modified() async throws -> Int64 {
        let api = Engine(host: s.nginx)
        let response = try await api.send(api.operation(path: "/small"))
        return try #require(response.headers["Last-Modified"].flatMap { HTTPDate.parse($0) })
    }

    @Test func fromSwift() async throws {
        let time = try await modified()
        var configuration = Engine.Configuration()
        configuration.acceptableStatus = 0..<1000
        let api = Engine(host: s.nginx, configuration: configuration)
        for (condition, status) in [(TimeCondition.modifiedSince(time), 304), (.modifiedSince(time - 3600), 200),
                                    (.unmodifiedSince(time - 3600), 412), (.unmodifiedSince(time), 200)] {
            let op = api.operation(path: "/small")
            op.setTimeCondition(condition)
            #expect(try await api.send(op).status == status, "\(condition)")
        }
        let cleared = api.operation(path: "/small")
        cleared.setTimeCondition(.modifiedSince(time))
        cleared.setTimeCondition(nil)
        #expect(try await api.send(cleared).status == 200, "nil removes the field")
    }

    @Test func fromC() async throws {
        let time = try await modified()
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/timecond", [s.nginx + "/small", String(time)])
        #expect(run.status == 0 && run.stdout.contains("all checks passed"), "\(run.stdout)\(run.stderr)")
    }

    @Test func theCLIsTimeCond() async throws {
        let time = try await modified()
        let date = HTTPDate.format(time)
        // Not modified since: curl writes nothing and succeeds.
        let same = try await runProcess(CLITests.binary, ["-s", "-z", date, "-w", "%{http_code}", s.nginx + "/small"])
        #expect(same.status == 0 && same.stdout == "304", "\(same.stdout)\(same.stderr)")
        // The served file itself as the reference: its own time.
        let file = try await runProcess(CLITests.binary, ["-s", "--time-cond", s.root + "/html/small", "-w", "%{http_code}", s.nginx + "/small"])
        #expect(file.status == 0 && file.stdout == "304", "\(file.stdout)\(file.stderr)")
        let older = try await runProcess(CLITests.binary, ["-s", "-z", "-" + HTTPDate.format(time - 3600), "-o", "/dev/null",
                                                           "-w", "%{http_code}", s.nginx + "/small"])
        #expect(older.stdout == "412", "\(older.stdout)\(older.stderr)")
        // Neither a date nor a file: curl's warning, and the transfer without a condition.
        let bad = try await runProcess(CLITests.binary, ["-z", "not-a-date-nor-a-file", "-o", "/dev/null", "-w", "%{http_code}",
                                                         s.nginx + "/small"])
        #expect(bad.status == 0 && bad.stdout == "200", "\(bad.stdout)")
        #expect(bad.stderr.contains("Warning: Illegal date format for -z, --time-cond (and not a file name)."), "\(bad.stderr)")
    }
}
