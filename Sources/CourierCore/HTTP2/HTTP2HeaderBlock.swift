/// The header block being received on a connection, gathered field by field until it ends and
/// becomes a head's (or trailers') `HTTPHeaders`.
///
/// RFC 9113 section 4.3 keeps a block's frames together on the connection (no other frame comes
/// between them), so one block per connection serves every stream; `clear` starts it again at
/// each HEADERS frame. Names, values and their offsets go into reused `RawBuffer`s (a `memcpy`
/// each, where appending to the headers' own arrays cost some 250 instructions a field) and are
/// copied out once, into two arrays of the exact size, when the block ends.
final class HTTP2HeaderBlock {
    @exclusivity(unchecked) private var bytes = RawBuffer(capacity: 1024)
    /// The fields' `HTTPHeaders.Field` values, one after another.
    @exclusivity(unchecked) private var index = RawBuffer(capacity: 32 * MemoryLayout<HTTPHeaders.Field>.stride)

    deinit {
        bytes.free()
        index.free()
    }

    /// The fields gathered so far.
    var count: Int { index.count / MemoryLayout<HTTPHeaders.Field>.stride }

    /// Starts a new block.
    func clear() {
        bytes.clear()
        index.clear()
    }

    /// Appends a field, its value without surrounding spaces and tabs (as `HTTPHeaders` keeps
    /// values; nghttp2 already refuses such values by RFC 9113's rules, so this stays cheap).
    func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        var lo = 0, hi = value.count
        if hi > 0 {
            let text = value.baseAddress!.assumingMemoryBound(to: UInt8.self)
            while lo < hi, text[lo] == 0x20 || text[lo] == 0x09 { lo += 1 }
            while hi > lo, text[hi - 1] == 0x20 || text[hi - 1] == 0x09 { hi -= 1 }
        }
        let nameStart = UInt32(bytes.count)
        bytes.append(name)
        let valueStart = UInt32(bytes.count)
        if hi > lo { bytes.append(UnsafeRawBufferPointer(start: value.baseAddress! + lo, count: hi - lo)) }
        var field = HTTPHeaders.Field(nameStart: nameStart, nameEnd: valueStart, valueStart: valueStart, valueEnd: UInt32(bytes.count))
        withUnsafeBytes(of: &field) { index.append($0) }
    }

    /// The block's fields as headers; the block starts again.
    func take() -> HTTPHeaders {
        // (Made the ways the compiler specializes: `unsafeUninitializedCapacity` asks the
        // runtime for the array type's metadata on every call.)
        let storage = [UInt8](bytes.bytes)
        var fields: [HTTPHeaders.Field] = []
        fields.reserveCapacity(count)
        fields.append(contentsOf: UnsafeBufferPointer(start: index.base.assumingMemoryBound(to: HTTPHeaders.Field.self), count: count))
        clear()
        return HTTPHeaders(received: storage, fields: fields)
    }
}
