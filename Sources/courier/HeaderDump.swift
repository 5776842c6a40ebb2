import CourierCore
import Glibc

/// A text file the transfers write to as they go, created or truncated at start ("-" is stdout),
/// written on the loop thread: `-D/--dump-header`'s heads in curl's format (the status line and
/// fields as received, CRLF line ends, a blank line after each head), `--trace-ascii`'s trace.
final class HeaderDump: @unchecked Sendable {
    /// The file; nil for stdout, written through `Terminal` so it keeps its place among bodies.
    private let sink: FileSink?
    private let lock = Lock()

    init(path: String) throws(CourierError) {
        sink = path == "-" ? nil : try FileSink(path: path)
    }

    func write(_ text: String) {
        guard let sink else { return Terminal.write(text) }
        var bytes = Array(text.utf8)
        lock.withLock { _ = bytes.withUnsafeMutableBytes { sink.write(UnsafeRawBufferPointer($0)) } }
    }

    func close() { lock.withLock { sink?.close() } }
}
