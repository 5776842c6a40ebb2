import Glibc

/// The outbox's directory: one file per frozen request, written durably before the request is
/// sent and removed when it has been answered.
///
/// - **One owner**: the directory's `lock` file is held with `flock` for the journal's life; a
///   second process (or a second journal in this one) gets `.outboxLocked`, never a shared mess.
///   The lock goes with the process, however it ends.
/// - **Durable**: an entry is written to a temporary file, fsynced, renamed into place and the
///   directory fsynced before `append` returns, so a crash, `kill -9` or power cut either leaves
///   the whole entry or none of it (the caller has sent nothing yet in the second case). Leftover
///   temporary files are removed when the journal opens.
/// - **Damage is visible**: a file that does not decode is renamed `*.corrupt` and listed in
///   `setAside`, never silently dropped or sent.
/// - **Bounded**: `append` fails with `.outboxFull` beyond `limits`; a full disk is `.fileWrite`
///   and leaves nothing behind.
///
/// Thread-safe; each call does its I/O on the caller's thread (never call it on the loop).
package final class Journal: @unchecked Sendable {
    package typealias Limits = OutboxLimits

    package let directory: String
    package let limits: Limits
    private let lock = Lock()
    private let lockDescriptor: Int32
    /// The entries in sequence order with their file sizes.
    @exclusivity(unchecked) private var held: [(entry: OutboxEntry, size: Int)] = []
    @exclusivity(unchecked) private var nextSequence: UInt64 = 1
    @exclusivity(unchecked) private var closed = false
    /// Damaged files found when the journal opened, as renamed (`<name>.corrupt`).
    package let setAside: [String]

    /// Opens (creating it, mode 0700) and takes ownership of `directory`, reading what an earlier
    /// process left there.
    package init(directory: String, limits: OutboxLimits = OutboxLimits()) throws(CourierError) {
        self.directory = directory
        self.limits = limits
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw CourierError(.fileWrite, "\(directory): \(String(cString: strerror(errno)))")
        }
        let descriptor = open(directory + "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CourierError(.fileWrite, "\(directory)/lock: \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            Glibc.close(descriptor)
            if reason == EWOULDBLOCK { throw CourierError(.outboxLocked, "\(directory) is in use by another process (its lock is held)") }
            throw CourierError(.fileWrite, "\(directory)/lock: \(String(cString: strerror(reason)))")
        }
        lockDescriptor = descriptor
        var found: [(entry: OutboxEntry, size: Int)] = []
        var damaged: [String] = []
        for name in Self.names(in: directory) {
            let path = directory + "/" + name
            if name.hasPrefix(".tmp-") {
                unlink(path)  // an append that never returned: nothing was sent
                continue
            }
            guard name.hasSuffix(".entry") else { continue }
            // A file larger than the journal may hold is not one it wrote: set aside unread (a
            // multi-gigabyte stray must not be read into memory).
            if let bytes = Self.read(path, limit: limits.bytes), let entry = OutboxEntryFormat.decode(bytes), Self.fileName(entry) == name {
                found.append((entry, bytes.count))
            } else {
                // Listed even when it cannot be renamed (a read-only directory): never silently dropped.
                damaged.append(rename(path, path + ".corrupt") == 0 ? name + ".corrupt" : name)
            }
        }
        found.sort { $0.entry.sequence < $1.entry.sequence }
        held = found
        nextSequence = (found.last?.entry.sequence ?? 0) + 1
        setAside = damaged
        if !damaged.isEmpty { Self.syncDirectory(directory) }
    }

    deinit { close() }

    /// Gives up the directory (the lock is released; entries stay for the next owner).
    package func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            // Unlocked explicitly: a child forked meanwhile holds a copy of the descriptor until
            // it execs (close-on-exec), and the lock would last as long as that copy.
            flock(lockDescriptor, LOCK_UN)
            Glibc.close(lockDescriptor)
        }
    }

    /// The entries waiting, oldest first.
    package var entries: [OutboxEntry] { lock.withLock { held.map(\.entry) } }

    /// Bytes the entries take on disk.
    package var byteCount: Int { lock.withLock { held.reduce(0) { $0 + $1.size } } }

    /// Writes `entry` durably (its sequence assigned here) and returns it as stored.
    package func append(_ entry: OutboxEntry) throws(CourierError) -> OutboxEntry {
        try lock.withLock { () throws(CourierError) -> OutboxEntry in
            guard !closed else { throw CourierError(.misuse, "the outbox is closed") }
            var stored = entry
            stored.sequence = nextSequence
            guard OutboxEntry.isValidID(stored.id) else { throw CourierError(.invalidArgument, "outbox entry id \(stored.id)") }
            guard !held.contains(where: { $0.entry.id == stored.id }) else {
                throw CourierError(.invalidArgument, "outbox entry \(stored.id) is already waiting")
            }
            let bytes = OutboxEntryFormat.encode(stored)
            guard OutboxEntryFormat.decode(bytes) == stored else {
                throw CourierError(.invalidArgument, "the request cannot be frozen as it is (a field with CR, LF or NUL, a relative file path)")
            }
            let total = held.reduce(0) { $0 + $1.size }
            guard held.count < limits.entries, total + bytes.count <= limits.bytes else {
                throw CourierError(.outboxFull, "\(directory) holds \(held.count) entries, \(total) bytes (limits \(limits.entries), \(limits.bytes))")
            }
            try Self.writeDurably(bytes, to: directory + "/" + Self.fileName(stored), temporary: directory + "/.tmp-" + stored.id)
            Self.syncDirectory(directory)
            nextSequence += 1
            held.append((stored, bytes.count))
            return stored
        }
    }

    /// Removes the entry `id` (answered, or given up by the application); false if none waits.
    @discardableResult
    package func remove(_ id: String) -> Bool {
        lock.withLock {
            // Once closed the directory is another owner's to change.
            guard !closed, let index = held.firstIndex(where: { $0.entry.id == id }) else { return false }
            unlink(directory + "/" + Self.fileName(held[index].entry))
            Self.syncDirectory(directory)
            held.remove(at: index)
            return true
        }
    }

    /// The file an entry lives in: its sequence (zero-padded, so names sort in order) and id.
    static func fileName(_ entry: OutboxEntry) -> String {
        let digits = String(entry.sequence)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + "-" + entry.id + ".entry"
    }

    private static func names(in directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let item = readdir(handle) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The whole file, or nil when it cannot be read or is larger than `limit` bytes.
    private static func read(_ path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size >= 0, status.st_size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            offset += count
        }
        return bytes
    }

    /// Writes `bytes` to `temporary`, fsyncs it and renames it to `path`; on any failure the
    /// temporary file is removed and `path` untouched.
    private static func writeDurably(_ bytes: [UInt8], to path: String, temporary: String) throws(CourierError) {
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CourierError(.fileWrite, "\(temporary): \(String(cString: strerror(errno)))") }
        var offset = 0
        var failure: Int32 = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 {
                failure = count < 0 ? errno : ENOSPC
                break
            }
            offset += count
        }
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        if Glibc.close(descriptor) != 0, failure == 0 { failure = errno }
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw CourierError(.fileWrite, "\(path): \(String(cString: strerror(failure)))")
        }
    }

    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        Glibc.close(descriptor)
    }
}
