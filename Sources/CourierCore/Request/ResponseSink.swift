import Glibc

/// Where a response body goes.
package enum ResponseSink {
    /// Collected in memory (`Transfer.responseBody`).
    case memory
    /// Counted and dropped (benchmarks, HEAD-like uses).
    case discard
    /// Written to a file as it arrives.
    case file(FileSink)
    /// Handed to a consumer piece by piece, on the loop thread (see `StreamSink`).
    case stream(StreamSink)
    /// Several destinations at once, paced by the slowest (see `FanOutSink`).
    case fanOut(FanOutSink)
    /// A file chosen from the final response head (AFNetworking's destination block): the
    /// closure returns the path, or nil to keep the body in memory. Replaced by `.file` once
    /// decided.
    case destination(DestinationChooser)
    /// A download that continues where an earlier one stopped (see `ResumableDownload`).
    case resumable(ResumableDownload)

    /// Whether `finish` has files to settle.
    var hasFiles: Bool {
        switch self {
        case .memory, .discard, .stream, .destination: return false
        case .file, .fanOut, .resumable: return true
        }
    }

    /// Settles the files of a finished transfer: staged downloads moved into place on success,
    /// removed otherwise; a resumable download kept for a later attempt when it failed. nil, or
    /// why moving into place failed (the transfer then fails too).
    package func finish(succeeded: Bool) -> CourierError? {
        switch self {
        case .memory, .discard, .stream, .destination:
            return nil
        case .file(let file):
            return file.finish(succeeded: succeeded)
        case .fanOut(let fan):
            return fan.finish(succeeded: succeeded)
        case .resumable(let download):
            return download.finish(succeeded: succeeded)
        }
    }
}

/// The closure of `ResponseSink.destination`, boxed: every payload of the sink is then one
/// reference, so the enum is one word and the hot path's checks for `.memory` stay a compare.
package final class DestinationChooser {
    package let choose: @Sendable (ResponseHead) -> String?
    package init(_ choose: @escaping @Sendable (ResponseHead) -> String?) { self.choose = choose }
}

/// What a streaming consumer says after taking a piece of the body.
package enum BodyVerdict: Equatable {
    /// Keep going.
    case proceed
    /// Taken, but send no more until the transfer is resumed (`Runtime.resume`): reading stops,
    /// so TCP flow control slows the server instead of memory filling up.
    case pause
    /// Stop the transfer (it ends as `.cancelled`).
    case stop
    /// The consumer failed (a C write callback that took fewer bytes than offered); the transfer
    /// ends with this error.
    case fail(CourierError)
}

/// A consumer of body pieces on the loop thread; the bytes are valid only during the call.
///
/// `redeliver` serves consumers with curl's pause contract (the C ABI's write callback may refuse a
/// piece and get it again on resume): the front end keeps the refused piece and answers `.pause`;
/// on resume the transfer calls `redeliver` first, which offers it again and says whether the
/// consumer took it.
///
/// `landing`: a consumer that keeps the pieces in memory of its own may offer it for the socket
/// reads themselves (see `ReadLanding`); its `deliver` then finds pieces already in place. Used
/// only while the body arrives undecoded (no content coding) and the consumer is the only one.
///
/// `leaseTaker`: a consumer on a thread of its own may take the socket's reads themselves for the
/// rest of a long body (see `ReadLease`), under the same conditions and when no one else needs the
/// pieces as they come (a cache, progress reports).
package final class StreamSink {
    let deliver: (UnsafeRawBufferPointer) -> BodyVerdict
    let redeliver: (() -> BodyVerdict)?
    let landing: ReadLanding?
    let leaseTaker: ReadLeaseTaker?

    package init(redeliver: (() -> BodyVerdict)? = nil, landing: ReadLanding? = nil, leaseTaker: ReadLeaseTaker? = nil,
                 _ deliver: @escaping (UnsafeRawBufferPointer) -> BodyVerdict) {
        self.deliver = deliver
        self.redeliver = redeliver
        self.landing = landing
        self.leaseTaker = leaseTaker
    }
}

/// Several destinations for one body (MKNetworkKit's download streams): files and consumers, each
/// given every piece in order. A consumer that pauses pauses the transfer, so the slowest sets
/// the pace and nothing is buffered for it beyond what the others took too.
package final class FanOutSink {
    package enum Target {
        case file(FileSink)
        case stream(StreamSink)
    }
    package let targets: [Target]

    package init(_ targets: [Target]) { self.targets = targets }

    func deliver(_ bytes: UnsafeRawBufferPointer) -> Result<BodyVerdict, CourierError> {
        var verdict = BodyVerdict.proceed
        for target in targets {
            switch target {
            case .file(let file):
                if let error = file.write(bytes) { return .failure(error) }
            case .stream(let sink):
                let said = sink.deliver(bytes)
                switch said {
                case .proceed: break
                case .pause: verdict = .pause
                case .stop, .fail: return .success(said)
                }
            }
        }
        return .success(verdict)
    }

    /// Offers each consumer what it refused before (see `StreamSink.redeliver`).
    func redeliver() -> BodyVerdict {
        var verdict = BodyVerdict.proceed
        for case .stream(let sink) in targets {
            let said = sink.redeliver?() ?? .proceed
            switch said {
            case .proceed: break
            case .pause: verdict = .pause
            case .stop, .fail: return said
            }
        }
        return verdict
    }

    func finish(succeeded: Bool) -> CourierError? {
        var failure: CourierError?
        for case .file(let file) in targets {
            if let error = file.finish(succeeded: succeeded && failure == nil) { failure = failure ?? error }
        }
        return failure
    }

    func rewind() -> CourierError? {
        for case .file(let file) in targets {
            if let error = file.rewind() { return error }
        }
        return nil
    }

    func close() {
        for case .file(let file) in targets { file.close() }
    }
}

/// An open file a body is written to.
///
/// Two kinds. A *staged* sink (a library download to a path) writes to a temporary file beside
/// the destination and moves it into place only when the caller's completion path says the
/// download succeeded (`commit`); on any failure, cancellation or unaccepted status it is removed
/// (`discard`), so the destination is either the whole new body or untouched — AFNetworking's
/// destination contract, and never a partial or error body where a good file was. A *direct*
/// sink writes to the path or descriptor as it is (the CLI's `-o`, stdout), as curl does.
///
/// Writes are synchronous `write(2)` calls on the loop thread, the same choice curl makes in its
/// write callback: to the page cache they cost about what the copy costs, and a body arrives in
/// 256 KiB reads, so the number of calls stays small. Staging does not fsync: the rename makes the
/// switch atomic for other readers, not durable across a power cut.
package final class FileSink {
    /// Where the body ends up.
    package let path: String
    /// The temporary file of a staged sink, until it is committed or discarded.
    package private(set) var stagingPath: String?
    private var fd: Int32
    private let ownsDescriptor: Bool
    private var appending = false
    package private(set) var bytesWritten: UInt64 = 0

    /// Opens `path` directly (creating or truncating it, or appending when `append`).
    package init(path: String, append: Bool = false) throws(CourierError) {
        self.path = path
        appending = append
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC)
        fd = open(path, flags, 0o644)
        ownsDescriptor = true
        if fd < 0 {
            throw CourierError(.fileWrite, "\(path): \(String(cString: strerror(errno)))")
        }
    }

    /// A sink for a download to `destination`. A regular file (or a path where nothing exists
    /// yet) is staged: a new temporary file in the same directory as the file the path leads to
    /// (through symbolic links, so the rename replaces the target and keeps the link), readable as
    /// the destination would be. Anything else that exists (a device such as /dev/null, a FIFO, a
    /// socket) has no "place" to move into and is written directly.
    package convenience init(download destination: String) throws(CourierError) {
        var info = stat()
        guard stat(destination, &info) == 0 else {
            // Nothing there yet (or a dangling link: its target is created).
            try self.init(stagingFor: Self.resolved(destination))
            return
        }
        if (info.st_mode & S_IFMT) == S_IFREG {
            try self.init(stagingFor: Self.resolved(destination))
        } else {
            try self.init(path: destination)
        }
    }

    /// The file a path leads to through symbolic links (the path itself when it is none).
    private static func resolved(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            var info = stat()
            guard lstat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return current }
            var buffer = [UInt8](repeating: 0, count: 4097)
            let count = buffer.withUnsafeMutableBufferPointer { readlink(current, UnsafeMutableRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), 4096) }
            guard count > 0 else { return current }
            let target = String(decoding: buffer[0..<count], as: UTF8.self)
            if target.hasPrefix("/") {
                current = target
            } else {
                let slash = current.utf8.lastIndex(of: UInt8(ascii: "/"))
                current = (slash.map { String(current[...$0]) } ?? "") + target
            }
        }
        return current
    }

    /// Stages a download to `destination`: a new temporary file in the same directory (so the
    /// final rename never crosses file systems), readable as the destination would be.
    package init(stagingFor destination: String) throws(CourierError) {
        path = destination
        let slash = destination.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { String(destination[...$0]) } ?? ""
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        var template = Array("\(directory).\(name).courier-XXXXXX".utf8CString)
        fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        ownsDescriptor = true
        if fd < 0 {
            throw CourierError(.fileWrite, "\(destination): \(String(cString: strerror(errno)))")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fchmod(fd, 0o644 & ~FileSink.umaskValue)
        stagingPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Writes to a descriptor the caller owns (stdout for the CLI).
    package init(descriptor: Int32, name: String) {
        path = name
        fd = descriptor
        ownsDescriptor = false
    }

    deinit {
        close()
        discard()
    }

    /// Whether `rewind` may take back what was written for a new attempt (a retry): a staged
    /// download or a file this sink created or truncated — not a caller's descriptor such as
    /// stdout, nor a file appended to (its earlier bytes are not this transfer's).
    package var canRewind: Bool { ownsDescriptor && (stagingPath != nil || !appending) }

    /// Writes all of `bytes`, retrying short writes and EINTR.
    package func write(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        guard var base = bytes.baseAddress else { return nil }
        var remaining = bytes.count
        while remaining > 0 {
            let n = Glibc.write(fd, base, remaining)
            if n < 0 {
                if errno == EINTR { continue }
                return CourierError(.fileWrite, "\(path): \(String(cString: strerror(errno)))")
            }
            base += n
            remaining -= n
            bytesWritten += UInt64(n)
        }
        return nil
    }

    /// Starts the file over (a stored response replaces a partial one that had begun to arrive).
    /// A descriptor that cannot be rewound (a pipe) with bytes already written is an error.
    package func rewind() -> CourierError? {
        guard bytesWritten > 0 else { return nil }
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            return CourierError(.fileWrite, "\(path): the partial response cannot be replaced: \(String(cString: strerror(errno)))")
        }
        bytesWritten = 0
        return nil
    }

    /// Closes the file (idempotent).
    package func close() {
        if ownsDescriptor, fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Moves a staged download into place (closing it first). A direct sink has nothing to do.
    package func commit() -> CourierError? {
        close()
        guard let staging = stagingPath else { return nil }
        stagingPath = nil
        if rename(staging, path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(staging)
            return CourierError(.fileWrite, "\(path): \(reason)")
        }
        return nil
    }

    /// Settles a staged download once the transfer's outcome is known: moved into place when it
    /// succeeded, removed otherwise. nil, or why the move failed (the transfer then fails too).
    package func finish(succeeded: Bool) -> CourierError? {
        if succeeded { return commit() }
        discard()
        return nil
    }

    /// Removes a staged download, leaving the destination as it was (idempotent).
    package func discard() {
        close()
        guard let staging = stagingPath else { return }
        stagingPath = nil
        unlink(staging)
    }

    /// The process's umask, read once from /proc (umask(2) can only read it by setting it, which
    /// would race with other threads creating files); 022 when /proc says nothing.
    private static let umaskValue: mode_t = {
        guard let file = fopen("/proc/self/status", "r") else { return 0o022 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(cString: line)
            if text.hasPrefix("Umask:"), let value = mode_t(text.dropFirst(6).filter { $0 != " " && $0 != "\t" && $0 != "\n" }, radix: 8) { return value }
        }
        return 0o022
    }()
}
