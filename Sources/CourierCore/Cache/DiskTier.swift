import Glibc

/// The cache's disk tier: one file per stored response in one directory, found without a scan.
///
/// A response without Vary (and without credentials) lives in the file named by the hash of its
/// primary key, so a disk hit is one `open`, `fstat`, `read` and `close`. A URL whose responses
/// vary has a small *vary index* file there instead, naming the request fields that choose, and
/// one file per variant named by the hash of key, index nonce and variant key.
///
/// Safety across threads and processes comes from the file system, not from locks: every file is
/// written to a temporary name and renamed into place (readers see the old file or the new one,
/// never a mix), every file carries its own key and checksum (a torn, truncated, foreign or
/// colliding file is a miss and is removed), and eviction only unlinks (a reader holding the file
/// open keeps reading it). Several processes may therefore share one directory at once. What
/// they do not share is their memory tiers: a response one process invalidates may still be served
/// from another process's memory until it is stale there.
///
/// Only files the cache names (16 hexadecimal digits, or `.courier-tmp-` followed by six
/// characters) are ever read, evicted or removed: pointing the cache at a directory with other
/// files in it loses none of them.
///
/// Reads run on the caller's thread; writes, removals and eviction on the cache's writer thread
/// (`DiskWriter`).
package final class DiskTier: @unchecked Sendable {
    package let directory: String
    package let capacity: UInt64
    /// Hits refresh a file's modification time (the recency eviction goes by) at most this often.
    private static let touchInterval: Int = 60
    /// Temporary files older than this are leftovers of a killed writer.
    private static let staleTemporaryAge: Int = 600

    // Writer-thread state.
    private var scanned = false
    private var bytes: UInt64 = 0
    private(set) var evictions = 0
    private let countersLock = Lock()
    private var reportedBytes: UInt64 = 0
    private var reportedEvictions = 0
    private var reportedRemovedCorrupt = 0

    /// Creates the directory (and its parents) when missing.
    package init(directory: String, capacity: UInt64) throws(CourierError) {
        var path = directory
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        self.directory = path
        self.capacity = capacity
        try Self.makeDirectories(path)
    }

    private static func makeDirectories(_ path: String) throws(CourierError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw CourierError(.fileWrite, "\(path): not a directory") }
            return
        }
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex {
            try makeDirectories(String(path[..<slash]))
        }
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw CourierError(.fileWrite, "\(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Bytes on disk as this process last counted them, files evicted, corrupt files removed.
    package var statistics: (bytes: UInt64, evictions: Int, removedCorrupt: Int) {
        countersLock.withLock { (reportedBytes, reportedEvictions, reportedRemovedCorrupt) }
    }

    // MARK: Names

    private static func name(_ hash: UInt64) -> String {
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.utf8.count) + hex
    }

    private func path(primary key: String) -> String { path(primaryHash: CacheKey.stableHash(key)) }

    private func path(primaryHash hash: UInt64) -> String { directory + "/" + Self.name(hash) }

    private func path(variant: String, of key: String, nonce: UInt64) -> String {
        directory + "/" + Self.name(CacheKey.stableHash(key + "\u{1}" + String(nonce) + "\u{1}" + variant))
    }

    private static func isCacheFileName(_ name: UnsafePointer<CChar>) -> Bool {
        var length = 0
        while name[length] != 0 {
            guard length < 16, ByteClass.hexValue(UInt8(bitPattern: name[length])) != nil else { return false }
            length += 1
        }
        return length == 16
    }

    private static let temporaryPrefix = ".courier-tmp-"

    // MARK: Reading (any thread)

    /// The stored response for `key` whose variant key `variantKey(varyNames)` computes, or nil.
    /// Files that are not intact are removed.
    package func find(_ key: String, variantKey: ([String]) -> String) -> StoredResponse? {
        find(CacheKey.stableHash(key), key: { key }, variantKey: variantKey)
    }

    /// As `find(_:variantKey:)`, by the key's hash; `key` is asked for only when a file is there.
    package func find(_ hash: UInt64, key makeKey: () -> String, variantKey: ([String]) -> String) -> StoredResponse? {
        guard let contents = read(path(primaryHash: hash)) else { return nil }
        let key = makeKey()
        switch contents {
        case .response(let response):
            guard response.key == key else { return nil }  // another key with the same hash
            return response.variantKey == variantKey([]) ? response : nil
        case .varyIndex(let index):
            guard index.key == key else { return nil }
            let variant = variantKey(index.names)
            guard case .response(let response)? = read(path(variant: variant, of: key, nonce: index.nonce)),
                  response.key == key, response.variantKey == variant, response.varyNames == index.names else { return nil }
            return response
        }
    }

    private func read(_ path: String) -> CacheFileFormat.Contents? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let size = Int(info.st_size)
        guard size >= CacheFileFormat.fixedLength + CacheFileFormat.trailerLength, size < Int(Int32.max) else {
            removeCorrupt(path)
            return nil
        }
        var complete = true
        let file = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var offset = 0
            while offset < size {
                let n = Glibc.read(fd, buffer.baseAddress! + offset, size - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
            complete = offset == size
            initialized = offset
        }
        guard complete, let contents = CacheFileFormat.decode(file) else {
            removeCorrupt(path)
            return nil
        }
        if Int(HTTPDate.now()) - Int(info.st_mtim.tv_sec) > Self.touchInterval { _ = futimens(fd, nil) }
        return contents
    }

    private func removeCorrupt(_ path: String) {
        unlink(path)
        countersLock.withLock { reportedRemovedCorrupt += 1 }
    }

    // MARK: Writing (writer thread)

    /// Stores `response`, under a vary index when it varies or carries credentials.
    package func write(_ response: StoredResponse) {
        countBytesIfNeeded()
        let primary = path(primary: response.key)
        if response.varyNames.isEmpty, response.variantKey.isEmpty {
            place(CacheFileFormat.encode(response), at: primary)
        } else {
            var index = CacheFileFormat.VaryIndex(key: response.key, names: response.varyNames, nonce: 0)
            if case .varyIndex(let existing)? = read(primary), existing.key == response.key, existing.names == response.varyNames {
                index.nonce = existing.nonce
            } else {
                index.nonce = UInt64.random(in: 1...UInt64.max)
                place(CacheFileFormat.encode(index), at: primary)
            }
            place(CacheFileFormat.encode(response), at: path(variant: response.variantKey, of: response.key, nonce: index.nonce))
        }
        evictIfOverCapacity()
    }

    /// Removes what is stored for `key` (its variants become unreachable and age out).
    package func remove(_ key: String) {
        countBytesIfNeeded()
        let primary = path(primary: key)
        var info = stat()
        if stat(primary, &info) == 0, unlink(primary) == 0 { bytes -= min(bytes, UInt64(info.st_size)) }
        publish()
    }

    /// Removes every file the cache wrote in its directory.
    package func removeAll() {
        forEachFile { directory, name, _, _ in unlinkat(directory, name, 0) }
        scanned = false
        bytes = 0
        countBytesIfNeeded()
    }

    /// Writes `contents` to a temporary file beside `path` and renames it into place. A failure
    /// (full disk, permissions) leaves the old file and no temporary file behind.
    private func place(_ contents: [UInt8], at path: String) {
        var template = Array((directory + "/" + Self.temporaryPrefix + "XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        _ = fchmod(fd, 0o600)
        let written = contents.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        close(fd)
        var old = stat()
        let replaced = stat(path, &old) == 0 ? UInt64(old.st_size) : 0
        guard written, rename(temporary, path) == 0 else {
            unlink(temporary)
            return
        }
        bytes = bytes - min(bytes, replaced) + UInt64(contents.count)
    }

    // MARK: Capacity (writer thread)

    /// The first write of a process counts what the directory holds (and removes temporary files
    /// a killed writer left); later writes keep the count up to date.
    private func countBytesIfNeeded() {
        guard !scanned else { return }
        scanned = true
        bytes = 0
        let now = Int(HTTPDate.now())
        forEachFile { directory, name, info, isTemporary in
            if isTemporary {
                if now - Int(info.st_mtim.tv_sec) > Self.staleTemporaryAge { unlinkat(directory, name, 0) }
            } else {
                bytes += UInt64(info.st_size)
            }
        }
        publish()
    }

    /// Over capacity: counts again (other processes write here too), then removes the least
    /// recently used files until 90% of the capacity is left.
    private func evictIfOverCapacity() {
        defer { publish() }
        guard bytes > capacity else { return }
        var files: [(mtime: Int, size: UInt64, name: String)] = []
        var total: UInt64 = 0
        forEachFile { _, name, info, isTemporary in
            guard !isTemporary else { return }
            let mtime = Int(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int(info.st_mtim.tv_nsec)
            files.append((mtime, UInt64(info.st_size), String(cString: name)))
            total += UInt64(info.st_size)
        }
        files.sort { $0.mtime < $1.mtime }
        let target = capacity / 10 * 9
        for file in files where total > target {
            if unlink(directory + "/" + file.name) == 0 {
                total -= file.size
                evictions += 1
            }
        }
        bytes = total
    }

    private func publish() {
        countersLock.withLock {
            reportedBytes = bytes
            reportedEvictions = evictions
        }
    }

    /// Calls `body` with each file the cache named in the directory: the directory's descriptor,
    /// the file's name in it, its status, and whether it is a temporary file.
    private func forEachFile(_ body: (Int32, UnsafePointer<CChar>, stat, Bool) -> Void) {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        let dfd = dirfd(dir)
        while let entry = readdir(dir) {
            let isTemporary: Bool = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { name in
                    strncmp(name, Self.temporaryPrefix, Self.temporaryPrefix.utf8.count) == 0
                }
            }
            withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { name in
                    guard isTemporary || Self.isCacheFileName(name) else { return }
                    var info = stat()
                    guard fstatat(dfd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
                    body(dfd, name, info, isTemporary)
                }
            }
        }
    }
}
