import CourierCore
import Glibc

/// `-D/--dump-header`: every response head of every transfer, in curl's format (the status line
/// and fields as received, CRLF line ends, a blank line after each head), to a file created or
/// truncated at start, or to stdout for "-". Written on the loop thread as heads arrive.
final class HeaderDump: @unchecked Sendable {
    private let sink: FileSink
    private let lock = Lock()

    init(path: String) throws(CourierError) {
        sink = path == "-" ? FileSink(descriptor: 1, name: "stdout") : try FileSink(path: path)
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        lock.withLock { _ = bytes.withUnsafeMutableBytes { sink.write(UnsafeRawBufferPointer($0)) } }
    }

    func close() { lock.withLock { sink.close() } }
}
