import Glibc

/// Small text files Courier reads and writes whole (a cookie jar, a `.netrc`, an HSTS cache):
/// read up to a limit, a missing file told apart from an unreadable one; written atomically (a
/// temporary file beside it, synced, renamed over it), so a reader never sees half a file.
package enum TextFile {
    /// The file's bytes as text (invalid UTF-8 repaired); nil when there is no such file. A read
    /// error, or a file larger than `limit` bytes, is `.fileRead`.
    package static func read(_ path: String, limit: Int) throws(CourierError) -> String? {
        guard let handle = fopen(path, "r") else {
            if errno == ENOENT { return nil }
            throw CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(handle) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, handle)
            if n > 0 { bytes.append(contentsOf: buffer[0..<n]) }
            guard bytes.count <= limit else { throw CourierError(.fileRead, "\(path): larger than \(limit >> 20) MiB") }
            if n < buffer.count { break }
        }
        // A short read is the end only when it is not an error (a directory, an I/O error): a
        // file half read would otherwise pass for the whole.
        if ferror(handle) != 0 { throw CourierError(.fileRead, "\(path): \(String(cString: strerror(errno)))") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to `path` atomically, readable by its owner only (0600: these files hold
    /// credentials and histories).
    package static func writeAtomically(_ text: String, to path: String) throws(CourierError) {
        let bytes = Array(text.utf8)
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { String(path[...$0]) } ?? ""
        var template = Array("\(directory).courier-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw CourierError(.fileWrite, "\(path): \(String(cString: strerror(errno)))") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(temporary)
                throw CourierError(.fileWrite, "\(path): \(reason)")
            }
            written += n
        }
        _ = fchmod(fd, 0o600)
        let synced = fsync(fd) == 0
        let closed = close(fd) == 0
        guard synced, closed, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CourierError(.fileWrite, "\(path): \(reason)")
        }
    }
}
