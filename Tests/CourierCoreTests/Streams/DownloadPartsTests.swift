import Glibc
import Testing
@testable import CourierCore

/// The pure parts of downloads and uploads: Content-Range, the resume record, multipart layout,
/// and the decoder that stops for a paused consumer.
@Suite("Download and upload parts")
struct DownloadPartsTests {
    @Test func contentRanges() {
        #expect(ContentRange("bytes 0-99/100") == ContentRange(first: 0, last: 99, complete: 100))
        #expect(ContentRange("bytes 5-9/*") == ContentRange(first: 5, last: 9, complete: nil))
        #expect(ContentRange("bytes */100") == ContentRange(first: nil, last: nil, complete: 100))
        #expect(ContentRange(" Bytes 1-1/2 ") == ContentRange(first: 1, last: 1, complete: 2))
        for bad in ["bytes 9-5/10", "bytes 0-10/10", "bytes */*", "bytes -1-5/9", "items 0-1/2", "bytes 0-1", "bytes a-b/c",
                    "bytes 0-99999999999999999999999/1", ""] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test func resumeRecordsRoundTripAndRejectDamage() {
        let record = ResumeRecord(validator: .etag("\"abc\""), length: 1234, url: "http://h/x?y=1")
        let text = record.encoded()
        #expect(ResumeRecord.decode(text) == record)
        let dated = ResumeRecord(validator: .lastModified("Tue, 01 Dec 2026 10:00:00 GMT"), length: nil, url: "u")
        #expect(ResumeRecord.decode(dated.encoded()) == dated)
        // Every single-byte change is caught (by the line checks or the hash).
        var bytes = Array(text.utf8)
        for index in bytes.indices {
            let original = bytes[index]
            bytes[index] = original == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
            #expect(ResumeRecord.decode(String(decoding: bytes, as: UTF8.self)) == nil, "byte \(index)")
            bytes[index] = original
        }
        #expect(ResumeRecord.decode(String(text.dropLast())) == nil, "a cut record")
        #expect(ResumeRecord.decode("") == nil)
        #expect(ResumeRecord.decode(String(repeating: "a", count: 20_000) + "\n") == nil)
    }

    @Test func recordsAreReadAsBytes() {
        // Found by the resume fuzz target: a combining mark after the opening quote merged with it
        // into one Character, so a record the writer produced could not be read back.
        #expect(ResumeRecord.validator(in: ["ETag": "\"\u{07A8}g-1\""]) == nil, "non-ASCII validators are not used")
        let record = ResumeRecord(validator: .etag("\"v\""), length: 1, url: "http://h/\u{301}x")
        #expect(ResumeRecord.decode(record.encoded()) == record)
    }

    @Test func validatorsForResuming() {
        #expect(ResumeRecord.validator(in: ["ETag": "\"v1\""]) == .etag("\"v1\""))
        #expect(ResumeRecord.validator(in: ["ETag": "W/\"v1\""]) == nil, "a weak tag cannot be used with If-Range")
        #expect(ResumeRecord.validator(in: ["ETag": "W/\"v1\"", "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"])
                    == .lastModified("Tue, 01 Dec 2026 10:00:00 GMT"))
        #expect(ResumeRecord.validator(in: ["Last-Modified": "yesterday"]) == nil)
        #expect(ResumeRecord.validator(in: [:]) == nil)
    }

    @Test func multipartLayoutIsExact() throws {
        var form = MultipartForm(boundary: "XyZ")
        form.addField("a\"b", value: "v\r\n1")
        form.addData([1, 2, 3], forKey: "d", mimeType: "application/x-test", fileName: "f\".bin")
        let path = FileManager_temporaryFile(contents: Array("file body".utf8))
        defer { unlink(path) }
        form.addFile(path, forKey: "up")
        let expected = "--XyZ\r\nContent-Disposition: form-data; name=\"a%22b\"\r\n\r\nv\r\n1\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"d\"; filename=\"f%22.bin\"\r\nContent-Type: application/x-test\r\n\r\n\u{1}\u{2}\u{3}\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"up\"; filename=\"\(path.split(separator: "/").last!)\"\r\nContent-Type: text/plain\r\n\r\nfile body\r\n"
            + "--XyZ--\r\n"
        let source = MultipartBodySource(form: form, length: UInt64(expected.utf8.count))
        var sent: [UInt8] = []
        reading: while true {
            switch source.read() {
            case .bytes(let piece): sent += piece
            case .array(let piece): sent += piece
            case .end: break reading
            case .pending, .failed: Issue.record("the form did not read"); break reading
            }
        }
        #expect(String(decoding: sent, as: UTF8.self) == expected)
        #expect(try form.length().get() == UInt64(expected.utf8.count), "the length is computed without reading the file")
        #expect(form.contentType == "multipart/form-data; boundary=XyZ")
    }

    @Test func aFileThatChangedSizeFailsTheForm() {
        var form = MultipartForm()
        let path = FileManager_temporaryFile(contents: [1, 2, 3])
        defer { unlink(path) }
        form.addFile(path, forKey: "f")
        let admitted = try! form.length().get()
        let grown = FileManager_temporaryFile(contents: [1, 2, 3, 4], at: path)
        _ = grown
        guard case .failed(let error) = MultipartBodySource(form: form, length: admitted).read() else {
            Issue.record("a changed file was sent")
            return
        }
        #expect(error.code == .fileRead)
    }

    @Test func generatedBoundariesAvoidTheContent() {
        var form = MultipartForm()
        let first = form.boundary
        #expect(first.hasPrefix("courier-") && first.utf8.count == 40)
        form.addData(Array("xx\(first)yy".utf8), forKey: "d")
        #expect(form.boundary != first, "a boundary found in a part is drawn again")
        #expect(MultipartForm().boundary != MultipartForm().boundary)
        #expect(MultipartForm.mimeType(forExtensionOf: "a.JSON") == "application/json")
        #expect(MultipartForm.mimeType(forExtensionOf: "noext") == "application/octet-stream")
    }

    @Test func aFileThatGrewWhileBeingSentFails() throws {
        let path = FileManager_temporaryFile(contents: [1, 2, 3])
        defer { unlink(path) }
        let source = try FileBodySource.open(path: path, length: 3).get()
        _ = FileManager_temporaryFile(contents: [1, 2, 3, 4], at: path)
        guard case .failed(let error) = source.read() else {
            Issue.record("a file that grew was sent cut at its old length")
            return
        }
        #expect(error.code == .fileRead)
    }

    /// The rest of a file offered to sendfile: the same growth check before the last bytes as
    /// `read` makes, the count kept, and nothing offered once sent.
    @Test func aFileSentElsewhereKeepsItsCountAndItsChecks() throws {
        let path = FileManager_temporaryFile(contents: [1, 2, 3, 4, 5, 6])
        defer { unlink(path) }
        let source = try FileBodySource.open(path: path, length: 6).get()
        #expect(source.nextFile === source)
        #expect(source.checkBeforeSending(4) == nil, "not the last bytes: no check yet")
        #expect(source.checkBeforeSending(6) == nil, "the last bytes of a file of the admitted size")
        var moved: off_t = 0
        #expect(lseek(source.descriptor, 4, SEEK_SET) == 4)
        source.sentElsewhere(4)
        #expect(source.remaining == 2)
        _ = FileManager_temporaryFile(contents: [1, 2, 3, 4, 5, 6, 7], at: path)
        #expect(source.checkBeforeSending(2)?.code == .fileRead, "a file that grew is not sent cut at its old length")
        moved = lseek(source.descriptor, 0, SEEK_CUR)
        #expect(moved == 4, "the check does not move the offset")
        source.sentElsewhere(2)
        #expect(source.nextFile == nil)
        #expect(source.shrank.code == .fileRead)
    }

    /// A form offers its file part to sendfile once the part is open (its first piece read), and
    /// never its heads.
    @Test func aFormOffersOnlyTheFilePartBeingSent() throws {
        let path = FileManager_temporaryFile(contents: [UInt8](repeating: 9, count: 200_000))
        defer { unlink(path) }
        var form = MultipartForm()
        form.addField("a", value: "b")
        form.addFile(path, forKey: "f")
        let source = MultipartBodySource(form: form, length: try form.length().get())
        #expect(source.nextFile == nil)
        guard case .array = source.read() else {
            Issue.record("the heads before the file")
            return
        }
        #expect(source.nextFile == nil, "the file is not open yet")
        guard case .bytes(let first) = source.read() else {
            Issue.record("the file's first piece")
            return
        }
        #expect(first.count == FileBodySource.pieceSize)
        #expect(source.nextFile?.remaining == UInt64(200_000 - FileBodySource.pieceSize))
        source.close()
        #expect(source.nextFile == nil)
    }

    @Test func aPartialFileShorterThanItsRecordIsNotMovedIntoPlace() throws {
        let directory = "/tmp/courier-short-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        mkdir(directory, 0o755)
        defer { _ = try? FileManager_removeTree(directory) }
        let download = ResumableDownload(destination: directory + "/f")
        _ = try download.headArrived(status: 200, headers: ["ETag": "\"v\"", "Content-Length": "10"], url: "u").get()
        _ = [UInt8](repeating: 7, count: 4).withUnsafeBytes { download.write($0) }
        let error = download.finish(succeeded: true)
        #expect(error?.code == .truncatedBody, "4 of 10 bytes must not become the file")
        #expect(access(directory + "/f", F_OK) != 0)
        #expect(access(directory + "/f.courier-partial", F_OK) == 0, "the partial file stays to be continued")
    }

    @Test func aChosenBoundaryInTheContentIsRefused() {
        // Found by the multipart fuzz target: a caller's boundary inside a part would end the
        // part early on the server; the form fails before anything is sent.
        var form = MultipartForm(boundary: "b")
        form.addField("a", value: "x\r\n--b\r\ny")
        guard case .failure(let error) = form.length() else {
            Issue.record("a colliding boundary was accepted")
            return
        }
        #expect(error.code == .invalidArgument)
    }

    @Test func theDecoderStopsForAPausedConsumerAndGoesOn() throws {
        // 1 MiB of varied text gzipped: it decodes to many 64 KiB pieces from one input.
        let text = (0..<40_000).map { "line \($0) of the text\n" }.joined()
        let original = Array(text.utf8)
        let compressed = compress(original, windowBits: 31)
        let decoder = ContentDecoder.make(.gzip, limit: .max)
        var out: [UInt8] = []
        var pieces = 0
        var pending = compressed
        var rounds = 0
        while rounds < 10_000 {
            rounds += 1
            var stop = false
            let error = pending.withUnsafeBytes { input in
                decoder.decode(input, stopping: { stop }) { piece in
                    out += piece
                    pieces += 1
                    stop = pieces % 2 == 0
                    return nil
                }
            }
            #expect(error == nil)
            pending = Array(pending.suffix(decoder.unconsumedInput))
            if pending.isEmpty, !decoder.hasPendingOutput { break }
        }
        #expect(out == original)
        #expect(pieces > 4)
        #expect(decoder.finish() == nil)
    }
}

/// Removes a directory and what is in it (one level, as the tests make them).
func FileManager_removeTree(_ directory: String) throws {
    if let handle = opendir(directory) {
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != ".", name != ".." { unlink(directory + "/" + name) }
        }
        closedir(handle)
    }
    rmdir(directory)
}

/// A temporary file with `contents` (at `path` when given), for tests.
func FileManager_temporaryFile(contents: [UInt8], at path: String? = nil) -> String {
    let name = path ?? "/tmp/courier-test-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).txt"
    let fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = contents.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    return name
}
