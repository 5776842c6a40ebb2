import Glibc
import Synchronization

/// What `-T -` read from standard input, kept for `--trace-ascii`: stdin cannot be read twice,
/// and the trace's `=> Send data` blocks are written when the response head arrives, after the
/// body went out. The bytes go to an unlinked temporary file (memory stays bounded however large
/// the upload), with each chunk's size, so the dump shows the chunked framing the server got.
final class UploadCopy: Sendable {
    private let fd: Int32
    /// Each chunk's size in order, whether the terminating chunk followed, and whether a write
    /// failed (a full disk): the copy then stops, since later chunks' offsets would be wrong.
    private let chunks = Mutex<(sizes: [Int], ended: Bool, broken: Bool)>(([], false, false))

    /// A copy in $TMPDIR (or /tmp); nil when no file can be made (the trace then gives sizes).
    init?() {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((directory + "/courier-upload-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Appends one chunk (the reading task, before the chunk is handed to the connection). A
    /// chunk that cannot be written ends the copy, not the upload: the trace then gives the
    /// rest by its size.
    func append(_ chunk: [UInt8]) {
        guard !chunks.withLock({ $0.broken }) else { return }
        var written = 0
        chunk.withUnsafeBytes { bytes in
            while written < bytes.count {
                let n = write(fd, bytes.baseAddress! + written, bytes.count - written)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                written += n
            }
        }
        chunks.withLock {
            if written == chunk.count { $0.sizes.append(chunk.count) } else { $0.broken = true }
        }
    }

    /// Standard input ended: the terminating chunk follows.
    func end() { chunks.withLock { $0.ended = true } }

    /// `=> Send data` blocks for the first `count` payload bytes as they were framed: a block per
    /// chunk (its size line, the data, CRLF), then the terminating chunk when the whole input
    /// went out.
    func traceSent(count: UInt64, to write: (String) -> Void) {
        let (sizes, ended, broken) = chunks.withLock { ($0.sizes, $0.ended, $0.broken) }
        var offset: off_t = 0
        var left = count
        var block: [UInt8] = []
        for size in sizes where left > 0 {
            let shown = Int(min(UInt64(size), left))
            let line = Array((String(size, radix: 16) + "\r\n").utf8)
            block.removeAll(keepingCapacity: true)
            block.reserveCapacity(line.count + shown + 2)
            block.append(contentsOf: line)
            let start = block.count
            block.append(contentsOf: repeatElement(0, count: shown))
            var got = 0
            while got < shown {
                let n = block.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + start + got, shown - got, offset + off_t(got)) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return Self.sizeOnly(left, to: write) }
                got += n
            }
            if shown == size { block.append(contentsOf: [13, 10]) }
            block.withUnsafeBytes { write(VerboseLog.traceData($0, title: "=> Send data")) }
            offset += off_t(size)
            left -= UInt64(shown)
        }
        // What the copy does not hold (a write to it failed): its size, as without a copy.
        if left > 0 { return Self.sizeOnly(left, to: write) }
        if ended, !broken, count == sizes.reduce(0, { $0 + UInt64($1) }) {
            write("== Info: Signaling end of chunked upload via terminating chunk.\n")
            Array("0\r\n\r\n".utf8).withUnsafeBytes { write(VerboseLog.traceData($0, title: "=> Send data")) }
        }
    }

    private static func sizeOnly(_ count: UInt64, to write: (String) -> Void) {
        write("=> Send data, \(count) bytes (0x\(String(count, radix: 16)))\n")
    }
}
