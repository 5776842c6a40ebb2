import COpenSSL
import Glibc

/// The size and SHA-256 of a file, read in 256 KiB pieces: what a frozen request remembers of a
/// file body it refers to, and checks again before sending it.
package enum FileDigest {
    package static func of(_ path: String) throws(CourierError) -> (size: UInt64, sha256: [UInt8]) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard let context = EVP_MD_CTX_new() else { throw CourierError(.noMemory, "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var size: UInt64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            _ = buffer.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, count) }
            size += UInt64(count)
        }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return (size, digest)
    }

    /// Fails with `.fileChanged` unless `path` still has this size and digest.
    package static func verify(_ path: String, size: UInt64, sha256: [UInt8]) throws(CourierError) {
        let now = try of(path)
        guard now.size == size, now.sha256 == sha256 else {
            throw CourierError(.fileChanged, "\(path) is not the file that was frozen (\(now.size) bytes now, \(size) then)")
        }
    }
}
