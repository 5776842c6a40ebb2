/// The fuzz targets by name: what `courier-fuzz` runs, what `make fuzz` runs each for a while, and
/// what the tests replay over the committed corpora (`Tests/Fuzz/<name>/`).
package enum FuzzTargets {
    package static let all: [(name: String, run: @Sendable (UnsafeRawBufferPointer) -> Void)] = [
        ("response", ResponsePath.run),
        ("url", URLParsing.run),
        ("chunked", ChunkedDecoding.run),
        ("headers", HeaderEncoding.run),
        ("cachefile", CacheFileReading.run),
        ("cachefields", CacheFieldReading.run),
        ("cabi", CABIScript.run),
        ("tls", TLSHandshake.run),
        ("resume", ResumeReading.run),
        ("multipart", MultipartWriting.run),
        ("retryafter", RetryAfterReading.run),
        ("cookies", CookieReading.run),
        ("proxy", ProxyReading.run),
        ("outbox", OutboxReading.run),
        ("codings", ContentDecoding.run),
        ("json", JSONReading.run),
        ("certinfo", CertificateReading.run),
        ("leasedbody", LeasedBodyDecoding.run),
        ("h2response", HTTP2ResponsePath.run),
        ("logins", LoginReading.run),
    ]

    package static func named(_ name: String) -> (@Sendable (UnsafeRawBufferPointer) -> Void)? {
        all.first { $0.name == name }?.run
    }

    /// Starting inputs a target builds itself (`courier-fuzz --seeds`), for formats nobody types.
    package static func generatedSeeds(_ name: String) -> [[UInt8]]? {
        switch name {
        case "cachefile": CacheFileReading.seeds()
        case "outbox": OutboxReading.seeds()
        default: nil
        }
    }
}
