import Foundation
import Testing
@testable import CourierCore

/// The outbox journal on a real directory: durable, ordered, one owner, damage set aside, bounded,
/// and a full disk that loses nothing.
@Suite("Outbox journal")
struct JournalTests {
    /// Whether a tmpfs can be mounted here (probed once: mount and unmount one).
    static let canMountTmpfs: Bool = {
        guard getuid() == 0 else { return false }
        let point = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tmpfs-probe-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: point) }
        func run(_ tool: String, _ arguments: [String]) -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", point]) else { return false }
        return run("/bin/umount", [point])
    }()

    func scratch() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func entry(_ n: Int, body: OutboxEntry.Body = .bytes(Array("payload".utf8))) -> OutboxEntry {
        OutboxEntry(kind: "draft", method: "POST", url: "http://127.0.0.1:1/items/\(n)",
                    headers: [.init(name: "Content-Type", value: "text/plain")], body: body, created: 1_700_000_000 + Int64(n))
    }

    @Test func entriesSurviveTheProcessInOrder() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var stored: [OutboxEntry] = []
        do {
            let journal = try Journal(directory: directory)
            for n in 0..<5 { stored.append(try journal.append(entry(n))) }
            let file = try journal.append(entry(9, body: .file(path: "/etc/hostname", size: 3, sha256: Array(repeating: 7, count: 32))))
            stored.append(file)
            #expect(journal.remove(stored[1].id))
            #expect(!journal.remove(stored[1].id), "removed once")
            journal.close()
        }
        let reopened = try Journal(directory: directory)
        var expected = stored
        expected.remove(at: 1)
        #expect(reopened.entries == expected)
        #expect(reopened.entries.map(\.sequence) == [1, 3, 4, 5, 6])
        #expect(try reopened.append(entry(7)).sequence == 7, "sequences continue after the last one")
        #expect(reopened.setAside.isEmpty)
    }

    @Test func oneOwnerAtATime() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let owner = try Journal(directory: directory)
        #expect(throws: CourierError.self) { _ = try Journal(directory: directory) }
        do { _ = try Journal(directory: directory) } catch { #expect(error.code == .outboxLocked) }
        owner.close()
        _ = try Journal(directory: directory)
    }

    @Test func damagedEntriesAreSetAsideAndTornWritesForgotten() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var kept: OutboxEntry
        do {
            let journal = try Journal(directory: directory)
            let damaged = try journal.append(entry(1))
            kept = try journal.append(entry(2))
            journal.close()
            let path = directory + "/" + Journal.fileName(damaged)
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[bytes.count / 2] ^= 0x40
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: directory + "/.tmp-0123"))
        let reopened = try Journal(directory: directory)
        #expect(reopened.entries == [kept])
        #expect(reopened.setAside.count == 1 && reopened.setAside[0].hasSuffix(".entry.corrupt"))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!names.contains { $0.hasPrefix(".tmp-") }, "\(names)")
        #expect(names.contains(reopened.setAside[0]), "the damaged file is kept for inspection")
    }

    /// A stray file far larger than the journal may hold is set aside without being read, and a
    /// closed journal no longer changes the directory (its next owner's).
    @Test func strayGiantsAreNotReadAndAClosedJournalTouchesNothing() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let giant = directory + "/0000000000000001-0123456789abcdef0123456789abcdef.entry"
        FileManager.default.createFile(atPath: giant, contents: nil)
        #expect(truncate(giant, 8 << 30) == 0, "an 8 GiB sparse file")
        let journal = try Journal(directory: directory, limits: .init(entries: 10, bytes: 1 << 20))
        #expect(journal.entries.isEmpty && journal.setAside == ["0000000000000001-0123456789abcdef0123456789abcdef.entry.corrupt"])
        let kept = try journal.append(entry(1))
        journal.close()
        #expect(!journal.remove(kept.id), "closed: nothing removed")
        #expect(try Journal(directory: directory).entries == [kept])
    }

    @Test func theLimitsAreEnforcedAndSaidSo() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = try Journal(directory: directory, limits: .init(entries: 3, bytes: 1 << 20))
        for n in 0..<3 { _ = try journal.append(entry(n)) }
        do {
            _ = try journal.append(entry(3))
            Issue.record("a fourth entry was taken")
        } catch { #expect(error.code == .outboxFull) }
        let small = try Journal(directory: try scratch(), limits: .init(entries: 10, bytes: 200))
        do {
            _ = try small.append(entry(0, body: .bytes(Array(repeating: 1, count: 500))))
            Issue.record("500 bytes fit in 200")
        } catch { #expect(error.code == .outboxFull) }
        #expect(small.entries.isEmpty)
    }

    @Test func requestsThatCannotBeStoredFaithfullyAreRefused() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = try Journal(directory: directory)
        var bad = entry(0)
        bad.headers = [.init(name: "X", value: "a\r\nInjected: 1")]
        #expect(throws: CourierError.self) { _ = try journal.append(bad) }
        #expect(throws: CourierError.self) { _ = try journal.append(entry(1, body: .file(path: "relative", size: 0, sha256: Array(repeating: 0, count: 32)))) }
        let first = try journal.append(entry(2))
        var again = entry(3)
        again.id = first.id
        #expect(throws: CourierError.self) { _ = try journal.append(again) }
    }

    @Test func everyTruncationOrBitFlipIsRefused() {
        var sample = entry(1, body: .bytes(Array(0..<40)))
        sample.sequence = 12
        let bytes = OutboxEntryFormat.encode(sample)
        #expect(OutboxEntryFormat.decode(bytes) == sample)
        for length in 0..<bytes.count { #expect(OutboxEntryFormat.decode(Array(bytes[0..<length])) == nil) }
        for index in stride(from: 0, to: bytes.count, by: 3) {
            var flipped = bytes
            flipped[index] ^= 0x01
            #expect(OutboxEntryFormat.decode(flipped) == nil, "byte \(index)")
        }
    }

    /// A full disk: the append that does not fit fails with `.fileWrite`, leaves no temporary
    /// file, and every entry before it is still whole. Needs a small tmpfs (root).
    @Test(.enabled(if: canMountTmpfs, "mounting a small tmpfs needs root (and a kernel or container that allows it)"))
    func aFullDiskLosesNothing() throws {
        let mountPoint = try scratch()
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let mounted = Process()
        mounted.executableURL = URL(fileURLWithPath: "/bin/mount")
        mounted.arguments = ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint]
        try mounted.run()
        mounted.waitUntilExit()
        try #require(mounted.terminationStatus == 0, "mount tmpfs")
        defer {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            unmount.arguments = [mountPoint]
            try? unmount.run()
            unmount.waitUntilExit()
        }
        let directory = mountPoint + "/outbox"
        let journal = try Journal(directory: directory, limits: .init(entries: 1000, bytes: 1 << 30))
        var stored: [OutboxEntry] = []
        var failure: CourierError?
        for n in 0..<100 {
            do { stored.append(try journal.append(entry(n, body: .bytes(Array(repeating: UInt8(n), count: 6000))))) } catch {
                failure = error
                break
            }
        }
        #expect(failure?.code == .fileWrite, "\(String(describing: failure))")
        #expect(stored.count > 3 && stored.count < 100)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(!names.contains { $0.hasPrefix(".tmp-") }, "\(names)")
        journal.close()
        let reopened = try Journal(directory: directory)
        #expect(reopened.entries == stored && reopened.setAside.isEmpty)
    }
}
