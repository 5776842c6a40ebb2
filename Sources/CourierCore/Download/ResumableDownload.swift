import Glibc

/// A download to a file that survives interruptions (OCNet's big-file download): the body goes
/// to `<destination>.courier-partial`, described by a `ResumeRecord` in
/// `<destination>.courier-resume`; a later attempt asks for the rest with `Range` and `If-Range`.
///
/// How each answer is taken (decided in `headArrived`, the one place for it):
/// - 206 whose `Content-Range` starts where the partial file ends, from the same resource: the
///   body is appended;
/// - 200 (the server ignores ranges, or `If-Range` saw a changed resource): the partial file
///   starts over with this body and a new record;
/// - 416 whose complete length is the partial file's: it was already whole; it is finished;
/// - any other 206 or 416: the partial cannot be continued; it is dropped and the resource asked
///   for again without a range;
/// - any other status: the partial file is left as it was (a later attempt may continue it).
/// On success the partial file is moved to the destination and the record removed; on failure
/// both stay for the next attempt. The destination is never a partial or mixed file.
///
/// In place (curl's `-C -`): the destination itself is the partial file, continued from its size
/// even without a record (the user says it is a prefix; with a record `If-Range` still checks),
/// and a server that answers a range with a 200 fails the download (`.rangeError`, curl's 33)
/// instead of overwriting the file.
package final class ResumableDownload {
    package let destination: String
    package let inPlace: Bool
    package let partialPath: String
    package let recordPath: String
    /// Bytes on disk when the current exchange started: where its range begins.
    package private(set) var offset: UInt64 = 0
    package private(set) var record: ResumeRecord?
    private var file: FileSink?
    /// This exchange's body is not the download's (an error status): not written.
    private var ignoresBody = false

    /// The decision for a final response head.
    package enum HeadDecision: Equatable {
        /// Write the body (appending, or from zero after a 200).
        case write
        /// The file is complete; drop this response's body and finish.
        case complete
        /// The partial cannot be continued: ask again without a range.
        case restart
        /// Not the resource (an error status): keep the partial, do not write the body.
        case ignore
    }

    /// Prepares a download to `destination`, reading what an earlier attempt left.
    package init(destination: String, inPlace: Bool = false) {
        self.destination = destination
        self.inPlace = inPlace
        partialPath = inPlace ? destination : destination + ".courier-partial"
        recordPath = destination + ".courier-resume"
        loadRecord()
    }

    /// Reads the record and the partial file's size; any inconsistency means starting over.
    private func loadRecord() {
        offset = 0
        record = nil
        var info = stat()
        guard stat(partialPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 else { return }
        let size = UInt64(info.st_size)
        guard let text = Self.readSmallFile(recordPath), let found = ResumeRecord.decode(text) else {
            if inPlace { offset = size }
            return
        }
        if let length = found.length, size > length {
            if inPlace { offset = size }
            return
        }
        record = found
        offset = size
    }

    /// Headers for the next exchange: a range from the partial file's end, conditional on the
    /// resource being the one it came from. None when starting from zero.
    package func rangeHeaders() -> [(String, String)] {
        guard offset > 0 else { return [] }
        guard let record else { return inPlace ? [("Range", "bytes=\(offset)-")] : [] }
        return [("Range", "bytes=\(offset)-"), ("If-Range", record.validator.headerValue)]
    }

    /// Called before each exchange (the first, and each continuation after a break): the partial
    /// file's size is where the next range begins.
    package func prepareExchange() {
        file?.close()
        file = nil
        ignoresBody = false
        loadRecord()
    }

    /// Takes the final head of an exchange: see the type's rules.
    package func headArrived(status: Int, headers: HTTPHeaders, url: String) -> Result<HeadDecision, CourierError> {
        switch status {
        case 206 where offset > 0:
            guard let range = headers["Content-Range"].flatMap(ContentRange.init), range.first == offset,
                  range.complete == nil || record?.length == nil || range.complete == record?.length,
                  sameResource(headers) else {
                return .success(.restart)
            }
            return open(append: true).map { .write }
        case 200...299 where inPlace && offset > 0:
            return .failure(CourierError(.rangeError, "HTTP server doesn't seem to support byte ranges. Cannot resume."))
        case 200...299:
            // A 206 to a request without a range is as good as a 200 only if it covers everything.
            if status == 206 {
                guard let range = headers["Content-Range"].flatMap(ContentRange.init), range.first == 0 else { return .success(.restart) }
            }
            offset = 0
            let length = headers["Content-Length"].flatMap { UInt64($0) }
            if let validator = ResumeRecord.validator(in: headers) {
                record = ResumeRecord(validator: validator, length: length, url: url)
            } else {
                record = nil
            }
            if let error = writeRecord() { return .failure(error) }
            return open(append: false).map { .write }
        case 416 where offset > 0:
            let range = headers["Content-Range"].flatMap(ContentRange.init)
            // curl (in place) takes any 416 to a resumed request as "already complete".
            if inPlace || (range?.complete ?? record?.length) == offset {
                return .success(.complete)
            }
            return .success(.restart)
        default:
            ignoresBody = true
            return .success(.ignore)
        }
    }

    /// Whether a 206 comes from the resource the record describes (a server that ignored
    /// `If-Range` would send another's bytes): its validator, when it shows one, must match.
    private func sameResource(_ headers: HTTPHeaders) -> Bool {
        guard let record else { return inPlace }
        guard let shown = ResumeRecord.validator(in: headers) else { return true }
        switch (shown, record.validator) {
        case (.etag(let a), .etag(let b)): return a == b
        case (.lastModified(let a), .lastModified(let b)): return a == b
        default: return true
        }
    }

    private func open(append: Bool) -> Result<Void, CourierError> {
        do {
            file = try FileSink(path: partialPath, append: append)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Body bytes of the exchange.
    func write(_ bytes: UnsafeRawBufferPointer) -> CourierError? {
        guard !ignoresBody else { return nil }
        guard let file else { return CourierError(.fileWrite, "\(partialPath): not open") }
        return file.write(bytes)
    }

    /// Bytes of the download on disk so far (for progress).
    package var bytesOnDisk: UInt64 { offset + (file?.bytesWritten ?? 0) }

    /// Ends the download: on success the partial file becomes the destination (or, already
    /// complete, it is moved as it is) and the record goes; on failure both stay, unless there is
    /// nothing to resume from (no validator), when they go.
    package func finish(succeeded: Bool) -> CourierError? {
        file?.close()
        file = nil
        if succeeded, !ignoresBody {
            // The mechanism's last check, whatever each answer said: a file is moved into place
            // only at the length its record gives (a server that answered a shorter range than
            // asked, or a 206 without the whole rest, leaves a partial file to continue from).
            var info = stat()
            if let length = record?.length, stat(partialPath, &info) == 0, UInt64(info.st_size) != length {
                return CourierError(.truncatedBody, "\(partialPath): \(info.st_size) of the \(length) bytes the server announced")
            }
            if !inPlace, rename(partialPath, destination) != 0 {
                return CourierError(.fileWrite, "\(destination): \(String(cString: strerror(errno)))")
            }
            unlink(recordPath)
            return nil
        }
        if record == nil, !inPlace {
            unlink(partialPath)
            unlink(recordPath)
        }
        return nil
    }

    /// Drops the partial file and record (the resource changed, or cannot be continued).
    package func discardPartial() {
        file?.close()
        file = nil
        if inPlace {
            // The user's file: emptied, not removed (it is rewritten from zero).
            truncate(partialPath, 0)
        } else {
            unlink(partialPath)
        }
        unlink(recordPath)
        offset = 0
        record = nil
    }

    private func writeRecord() -> CourierError? {
        guard let record else {
            unlink(recordPath)
            return nil
        }
        let temporary = recordPath + ".tmp"
        do {
            let sink = try FileSink(path: temporary)
            let text = Array(record.encoded().utf8)
            if let error = text.withUnsafeBytes({ sink.write($0) }) { return error }
            sink.close()
        } catch {
            return error
        }
        if rename(temporary, recordPath) != 0 {
            return CourierError(.fileWrite, "\(recordPath): \(String(cString: strerror(errno)))")
        }
        return nil
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 16 * 1024 + 1)
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            filled += n
        }
        guard filled <= 16 * 1024 else { return nil }
        return String(validating: bytes[0..<filled], as: UTF8.self)
    }
}
