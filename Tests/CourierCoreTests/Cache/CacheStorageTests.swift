import Glibc
import Testing
@testable import CourierCore

/// The cache file format and the two tiers, without a network.
@Suite("Cache storage")
struct CacheStorageTests {
    func temporaryDirectory() -> String {
        var template = Array("/tmp/courier-cache-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(cString: made!)
    }

    func files(in directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) } }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    func readFile(_ path: String) -> [UInt8] {
        guard let file = fopen(path, "rb") else { return [] }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }

    func writeFile(_ path: String, _ bytes: [UInt8]) {
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }

    // MARK: File format

    @Test func aStoredResponseRoundTrips() throws {
        let response = storedResponse([("Cache-Control", "max-age=60"), ("ETag", "\"x\"")], status: 203, body: "hello",
                                      requestTime: 5, responseTime: 9, varyNames: ["accept"], variantKey: "accept=a\n", bodyDecoded: true)
        guard case .response(let decoded)? = CacheFileFormat.decode(CacheFileFormat.encode(response)) else {
            Issue.record("did not decode")
            return
        }
        #expect(decoded.key == response.key && decoded.variantKey == response.variantKey && decoded.varyNames == ["accept"])
        #expect(decoded.status == 203 && decoded.body == response.body && decoded.headers == response.headers)
        #expect(decoded.requestTime == 5 && decoded.responseTime == 9 && decoded.bodyDecoded)
        #expect(decoded.freshnessLifetime == 60)
    }

    /// A response that came over HTTP/2 is served from the cache as HTTP/2 ("HTTP/2 200"), from
    /// memory and from its file.
    @Test func anHTTP2ResponseKeepsItsVersion() throws {
        let response = StoredResponse(key: "https://h/", varyNames: [], variantKey: "", status: 200, version: 2, reason: "",
                                      headers: ["Cache-Control": "max-age=60"], body: Array("x".utf8), requestTime: 1, responseTime: 2,
                                      bodyDecoded: false)
        #expect(response.storedHead.versionMajor == 2 && response.storedHead.statusLine == "HTTP/2 200")
        guard case .response(let decoded)? = CacheFileFormat.decode(CacheFileFormat.encode(response)) else {
            Issue.record("did not decode")
            return
        }
        #expect(decoded.storedHead.versionText == "2")
    }

    @Test func aVaryIndexRoundTrips() {
        let index = CacheFileFormat.VaryIndex(key: "http://a/x", names: ["accept", "accept-language"], nonce: 42)
        guard case .varyIndex(let decoded)? = CacheFileFormat.decode(CacheFileFormat.encode(index)) else {
            Issue.record("did not decode")
            return
        }
        #expect(decoded == index)
    }

    /// Strings in a file (the key, names, the reason) must be valid UTF-8: repairing them would
    /// produce a key the cache never stored (found by the cachefile fuzz target).
    @Test func aFileWithAStringThatIsNotUTF8IsRefused() {
        let response = storedResponse([("A", "b")], body: "x")
        var bytes = CacheFileFormat.encode(response)
        let key = Array(response.key.utf8)
        let at = bytes.firstRange(of: key)!.lowerBound + 3
        bytes[at] = 0xA4
        let body = bytes[0..<(bytes.count - 4)]
        let crc = CacheFileFormat.checksum(body)
        bytes = Array(body) + (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * UInt32($0))) }
        #expect(CacheFileFormat.decode(bytes) == nil)
    }

    @Test func everyTruncationAndEveryFlippedByteIsRefused() {
        let bytes = CacheFileFormat.encode(storedResponse([("A", "b")], body: "some body"))
        for length in 0..<bytes.count { #expect(CacheFileFormat.decode(Array(bytes[0..<length])) == nil, "truncated to \(length)") }
        for index in 0..<bytes.count {
            var damaged = bytes
            damaged[index] ^= 0x40
            #expect(CacheFileFormat.decode(damaged) == nil, "byte \(index) flipped")
        }
        #expect(CacheFileFormat.decode(bytes + [0]) == nil, "trailing garbage")
    }

    // MARK: Memory tier

    @Test func theMemoryTierEvictsTheLeastRecentlyUsedByCount() {
        var tier = MemoryTier(byteBudget: 1 << 20, entryLimit: 2)
        tier.insert(storedResponse(key: "a"))
        tier.insert(storedResponse(key: "b"))
        #expect(tier.find("a") { _ in "" } != nil)  // a is now the most recent
        tier.insert(storedResponse(key: "c"))
        #expect(tier.find("b") { _ in "" } == nil)
        #expect(tier.find("a") { _ in "" } != nil && tier.find("c") { _ in "" } != nil)
        #expect(tier.evictions == 1 && tier.count == 2)
    }

    @Test func theMemoryTierEvictsByBytes() {
        let one = storedResponse(body: String(repeating: "x", count: 1000), key: "a")
        var tier = MemoryTier(byteBudget: one.memoryCost * 2 + 10, entryLimit: 100)
        tier.insert(one)
        tier.insert(storedResponse(body: String(repeating: "x", count: 1000), key: "b"))
        tier.insert(storedResponse(body: String(repeating: "x", count: 1000), key: "c"))
        #expect(tier.count == 2 && tier.bytes <= tier.byteBudget)
        #expect(tier.find("a") { _ in "" } == nil)
        // Alone bigger than the budget: not kept, and what was there for the key is gone.
        tier.insert(storedResponse(body: String(repeating: "y", count: 10_000), key: "b"))
        #expect(tier.find("b") { _ in "" } == nil)
    }

    @Test func variantsLiveSideBySideUntilTheVaryNamesChange() {
        var tier = MemoryTier(byteBudget: 1 << 20, entryLimit: 10)
        tier.insert(storedResponse(body: "en", key: "k", varyNames: ["accept-language"], variantKey: "en"))
        tier.insert(storedResponse(body: "de", key: "k", varyNames: ["accept-language"], variantKey: "de"))
        #expect(tier.find("k") { _ in "en" }?.body == Array("en".utf8))
        #expect(tier.find("k") { _ in "de" }?.body == Array("de".utf8))
        tier.insert(storedResponse(body: "en2", key: "k", varyNames: ["accept-language"], variantKey: "en"))
        #expect(tier.find("k") { _ in "en" }?.body == Array("en2".utf8))
        #expect(tier.count == 2)
        tier.insert(storedResponse(body: "any", key: "k", varyNames: ["accept"], variantKey: "x"))
        #expect(tier.count == 1 && tier.find("k") { _ in "de" } == nil)
        tier.removeAll()
        #expect(tier.count == 0 && tier.bytes == 0)
    }

    // MARK: Disk tier

    @Test func theDiskTierStoresAndFindsWithOneFilePerResponse() throws {
        let directory = temporaryDirectory()
        let disk = try DiskTier(directory: directory, capacity: 1 << 20)
        disk.write(storedResponse([("ETag", "\"1\"")], body: "plain", key: "http://a/plain"))
        #expect(files(in: directory).count == 1)
        #expect(disk.find("http://a/plain") { _ in "" }?.body == Array("plain".utf8))
        #expect(disk.find("http://a/other") { _ in "" } == nil)
    }

    @Test func theDiskTierKeepsVariantsBehindAVaryIndex() throws {
        let directory = temporaryDirectory()
        let disk = try DiskTier(directory: directory, capacity: 1 << 20)
        disk.write(storedResponse(body: "en", key: "http://a/v", varyNames: ["accept-language"], variantKey: "en"))
        disk.write(storedResponse(body: "de", key: "http://a/v", varyNames: ["accept-language"], variantKey: "de"))
        #expect(files(in: directory).count == 3, "one index and two variants")
        #expect(disk.find("http://a/v") { names in names == ["accept-language"] ? "de" : "?" }?.body == Array("de".utf8))
        #expect(disk.find("http://a/v") { _ in "fr" } == nil)
        // Invalidated: the index goes, and the variants with it (a new index has a new nonce).
        disk.remove("http://a/v")
        disk.write(storedResponse(body: "en2", key: "http://a/v", varyNames: ["accept-language"], variantKey: "en"))
        #expect(disk.find("http://a/v") { _ in "de" } == nil, "an invalidated variant never comes back")
        #expect(disk.find("http://a/v") { _ in "en" }?.body == Array("en2".utf8))
    }

    @Test func damagedFilesAreMissesAndAreRemoved() throws {
        let directory = temporaryDirectory()
        let disk = try DiskTier(directory: directory, capacity: 1 << 20)
        disk.write(storedResponse(body: "intact", key: "http://a/d"))
        let name = files(in: directory)[0]
        let path = directory + "/" + name
        var bytes = readFile(path)
        bytes[bytes.count / 2] ^= 0xff
        writeFile(path, bytes)
        #expect(disk.find("http://a/d") { _ in "" } == nil)
        #expect(files(in: directory).isEmpty, "the damaged file was removed")
        #expect(disk.statistics.removedCorrupt == 1)

        disk.write(storedResponse(body: "intact", key: "http://a/d"))
        writeFile(path, Array(readFile(path).prefix(30)))
        #expect(disk.find("http://a/d") { _ in "" } == nil)
        #expect(files(in: directory).isEmpty, "the truncated file was removed")

        writeFile(path, [])
        #expect(disk.find("http://a/d") { _ in "" } == nil)
        #expect(files(in: directory).isEmpty, "the empty file was removed")
    }

    /// A request's key hash, computed from the URL's parts, is the stable hash of the key string
    /// (the memory tier's index and the disk tier's file name depend on it), and the string is
    /// the target URI without credentials: default ports left out, IPv6 hosts bracketed.
    @Test func aRequestKeyHashesAsItsString() throws {
        let cases = [("http://a.example/x", "http://a.example/x"), ("https://u:p@a.example:443/x?q=1", "https://a.example/x?q=1"),
                     ("http://a.example:8080/", "http://a.example:8080/"), ("http://[::1]:9/p?", "http://[::1]:9/p?"),
                     ("https://h:65535/a%20b?c=d&e", "https://h:65535/a%20b?c=d&e"), ("http://h:1/", "http://h:1/")]
        for (text, key) in cases {
            let url = try CourierURL(parsing: text)
            let request = CacheKey.Request(authority: url, path: url.path, query: url.query)
            #expect(request.string == key, "\(text)")
            #expect(CacheKey.primary(url) == key)
            #expect(request.hash == CacheKey.stableHash(key), "\(text)")
        }
    }

    @Test func aFileUnderAnotherKeysNameIsNotThatKeysResponse() throws {
        let directory = temporaryDirectory()
        let disk = try DiskTier(directory: directory, capacity: 1 << 20)
        disk.write(storedResponse(body: "mine", key: "http://a/one"))
        let original = directory + "/" + files(in: directory)[0]
        let hex = String(CacheKey.stableHash("http://a/two"), radix: 16)
        let other = directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex
        writeFile(other, readFile(original))
        #expect(disk.find("http://a/two") { _ in "" } == nil)
    }

    @Test func filesTheCacheDidNotNameAreNeverTouched() throws {
        let directory = temporaryDirectory()
        writeFile(directory + "/notes.txt", Array("keep me".utf8))
        writeFile(directory + "/0123456789abcdeg", Array("not hex".utf8))
        let disk = try DiskTier(directory: directory, capacity: 100)
        disk.write(storedResponse(body: String(repeating: "z", count: 500), key: "http://a/big"))
        disk.removeAll()
        #expect(files(in: directory) == ["0123456789abcdeg", "notes.txt"])
    }

    @Test func overCapacityTheLeastRecentlyUsedFilesGo() throws {
        let directory = temporaryDirectory()
        let sample = CacheFileFormat.encode(storedResponse(body: String(repeating: "z", count: 1000), key: "http://a/0")).count
        let disk = try DiskTier(directory: directory, capacity: UInt64(sample * 3 + sample / 2))
        for index in 0..<3 {
            disk.write(storedResponse(body: String(repeating: "z", count: 1000), key: "http://a/\(index)"))
            // Make the recency visible to a one-second clock: older files, older times.
            let name = files(in: directory).first { name in
                guard case .response(let r)? = CacheFileFormat.decode(readFile(directory + "/" + name)) else { return false }
                return r.key == "http://a/\(index)"
            }!
            var times = [timespec(tv_sec: 1_000_000 + index * 100, tv_nsec: 0), timespec(tv_sec: 1_000_000 + index * 100, tv_nsec: 0)]
            utimensat(AT_FDCWD, directory + "/" + name, &times, 0)
        }
        disk.write(storedResponse(body: String(repeating: "z", count: 1000), key: "http://a/3"))
        #expect(disk.find("http://a/0") { _ in "" } == nil, "the oldest went")
        #expect(disk.find("http://a/3") { _ in "" } != nil)
        #expect(disk.statistics.evictions >= 1)
        #expect(disk.statistics.bytes <= UInt64(sample * 3 + sample / 2))
    }

    @Test func leftoverTemporaryFilesOfAKilledWriterAreCleanedUp() throws {
        let directory = temporaryDirectory()
        writeFile(directory + "/.courier-tmp-abcdef", Array("half a file".utf8))
        var times = [timespec(tv_sec: 1_000, tv_nsec: 0), timespec(tv_sec: 1_000, tv_nsec: 0)]
        utimensat(AT_FDCWD, directory + "/.courier-tmp-abcdef", &times, 0)
        writeFile(directory + "/.courier-tmp-uvwxyz", Array("being written now".utf8))
        let disk = try DiskTier(directory: directory, capacity: 1 << 20)
        disk.write(storedResponse(key: "http://a/x"))
        #expect(!files(in: directory).contains(".courier-tmp-abcdef"))
        #expect(files(in: directory).contains(".courier-tmp-uvwxyz"), "a recent one may belong to another process")
    }

    @Test func aDirectoryThatCannotBeMadeIsAnError() {
        #expect(throws: CourierError.self) { _ = try DiskTier(directory: "/proc/courier-cannot-exist/x", capacity: 1) }
        #expect(throws: CourierError.self) { _ = try DiskTier(directory: "/etc/hostname", capacity: 1) }
    }

    @Test func theWriterThreadAppliesJobsInOrderAndFlushWaits() throws {
        let directory = temporaryDirectory()
        let disk = try DiskTier(directory: directory, capacity: 1 << 20)
        let writer = DiskWriter(disk: disk)
        for index in 0..<50 { writer.submit(.store(storedResponse(body: "\(index)", key: "http://a/\(index % 5)"))) }
        writer.submit(.remove("http://a/0"))
        #expect(writer.flush(seconds: 10))
        #expect(disk.find("http://a/0") { _ in "" } == nil)
        #expect(disk.find("http://a/4") { _ in "" }?.body == Array("49".utf8))
    }

    @Test func theWriterDropsStoresBeyondItsPendingLimit() throws {
        let disk = try DiskTier(directory: temporaryDirectory(), capacity: 1 << 30)
        let writer = DiskWriter(disk: disk, pendingLimit: 10)
        for _ in 0..<20 { writer.submit(.store(storedResponse(body: String(repeating: "b", count: 100)))) }
        #expect(writer.flush(seconds: 10))
        #expect(writer.droppedStores >= 1)
    }
}
