/// An ordered list of header fields, stored the way they travel.
///
/// The fields live in one byte array in wire format ("Name: value\r\n" after one another) with a
/// small index of offsets beside it. Why: a response's headers are copied once from the read buffer
/// and never turned into one `String` per field unless asked for (each non-tiny `String` is a heap
/// allocation), and a request's headers are written to the socket with one `memcpy`. Lookups are
/// case-insensitive, as RFC 9110 section 5.1 requires, and keep the received order and duplicates.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible, Equatable {
    @usableFromInline
    package struct Field: Sendable, Equatable {
        package var nameStart: UInt32
        package var nameEnd: UInt32
        package var valueStart: UInt32
        package var valueEnd: UInt32

        package init(nameStart: UInt32, nameEnd: UInt32, valueStart: UInt32, valueEnd: UInt32) {
            self.nameStart = nameStart
            self.nameEnd = nameEnd
            self.valueStart = valueStart
            self.valueEnd = valueEnd
        }
    }

    /// The fields in wire format, each ending in CRLF.
    package private(set) var storage: [UInt8] = [] { didSet { preparedSummary = nil } }
    package private(set) var fields: [Field] = [] { didSet { preparedSummary = nil } }
    /// `summarizeForSending()` computed ahead (by `prepareForSending`), so headers shared by many
    /// requests (an engine's defaults) are validated once, not per request. Any change clears it.
    package private(set) var preparedSummary: SendingSummary?
    /// Whether `storage` is exactly the fields as "Name: value\r\n" lines, ready to be written
    /// out as they are. Received heads keep their bytes as received and are not.
    package private(set) var isWireFormat = true

    /// An empty list.
    public init() {}

    /// Fields already laid out (the response decoder's copy of a received head). The storage need
    /// not be in "Name: value" form: the index is authoritative, the bytes are as received.
    package init(received storage: [UInt8], fields: [Field]) {
        self.storage = storage
        self.fields = fields
        isWireFormat = false
    }

    /// Fields whose bytes are already "Name: value\r\n" lines one after another (a cache file's
    /// copy of a stored head): kept in wire format when they are, so appending stays cheap.
    package init(laidOut storage: [UInt8], fields: [Field]) {
        self.storage = storage
        self.fields = fields
        var expected: UInt32 = 0
        var wire = true
        for field in fields {
            let n = Int(field.nameEnd), v = Int(field.valueEnd)
            guard field.nameStart == expected, field.valueStart == field.nameEnd + 2, v + 2 <= storage.count,
                  storage[n] == UInt8(ascii: ":"), storage[n + 1] == UInt8(ascii: " "), storage[v] == 13, storage[v + 1] == 10 else {
                wire = false
                break
            }
            expected = field.valueEnd + 2
        }
        isWireFormat = wire && Int(expected) == storage.count
    }

    /// Builds a list from (name, value) pairs, keeping their order.
    public init(_ pairs: [(String, String)]) {
        for (name, value) in pairs { add(name: name, value: value) }
    }

    /// Builds a list from a dictionary literal, in source order.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name: name, value: value) }
    }

    /// The number of fields (duplicates counted separately).
    public var count: Int { fields.count }
    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// Appends a field. Leading and trailing whitespace of the value is dropped (RFC 9110 section
    /// 5.5). Names and values are not validated here, so building never fails; Courier validates
    /// before sending and fails the request with `.invalidHeader` instead of writing a forbidden byte.
    public mutating func add(name: String, value: String) {
        var name = name
        var value = value
        name.withUTF8 { nameBytes in
            value.withUTF8 { valueBytes in
                appendField(name: UnsafeRawBufferPointer(nameBytes), value: UnsafeRawBufferPointer(valueBytes))
            }
        }
    }

    /// Replaces every field with this name by a single one (or adds it).
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field with this name.
    public mutating func remove(name: String) {
        guard contains(name) else { return }
        var kept = HTTPHeaders()
        for field in fields where !Self.nameMatches(storage, field, name) {
            storage.withUnsafeBytes { raw in
                kept.appendField(name: UnsafeRawBufferPointer(rebasing: raw[Int(field.nameStart)..<Int(field.nameEnd)]),
                                 value: UnsafeRawBufferPointer(rebasing: raw[Int(field.valueStart)..<Int(field.valueEnd)]))
            }
        }
        self = kept
    }

    /// Whether a field with this name exists.
    public func contains(_ name: String) -> Bool { firstFieldIndex(name) != nil }

    /// The first value for a name, or nil.
    public subscript(name: String) -> String? {
        guard let index = firstFieldIndex(name) else { return nil }
        return value(at: index)
    }

    /// Every value for a name, in order (Set-Cookie is the usual reason to want them all).
    public func values(for name: String) -> [String] {
        fields.indices.compactMap { Self.nameMatches(storage, fields[$0], name) ? value(at: $0) : nil }
    }

    /// The values for a name joined with ", " (RFC 9110 section 5.3), for list-valued fields.
    public func combinedValue(for name: String) -> String? {
        let all = values(for: name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    /// The name of field `index`, as received.
    public func name(at index: Int) -> String {
        let f = fields[index]
        return String(decoding: storage[Int(f.nameStart)..<Int(f.nameEnd)], as: UTF8.self)
    }

    /// The value of field `index`.
    public func value(at index: Int) -> String {
        let f = fields[index]
        return String(decoding: storage[Int(f.valueStart)..<Int(f.valueEnd)], as: UTF8.self)
    }

    /// Iterates (name, value) pairs in order.
    public func makeIterator() -> AnyIterator<(name: String, value: String)> {
        var i = 0
        return AnyIterator {
            guard i < self.fields.count else { return nil }
            defer { i += 1 }
            return (self.name(at: i), self.value(at: i))
        }
    }

    /// The fields as "Name: value" lines, each ending in CRLF.
    public var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(storage.count)
        for f in fields {
            out += storage[Int(f.nameStart)..<Int(f.nameEnd)]
            out += [UInt8(ascii: ":"), UInt8(ascii: " ")]
            out += storage[Int(f.valueStart)..<Int(f.valueEnd)]
            out += [13, 10]
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        // (The prepared summary is derived state and takes no part in equality.)
        a.count == b.count && zip(a, b).allSatisfy { $0.name.lowercased() == $1.name.lowercased() && $0.value == $1.value }
    }

    /// Equality that is cheap when the lists share their storage (an engine's defaults) or are
    /// byte-identical, and exact otherwise.
    package func sameFields(as other: HTTPHeaders) -> Bool {
        if storage == other.storage, fields == other.fields { return true }
        return self == other
    }

    // MARK: - Package-level access for the codec

    /// Index of the first field named `name` (ASCII case-insensitive), without creating strings.
    package func firstFieldIndex(_ name: String) -> Int? {
        for index in fields.indices where Self.nameMatches(storage, fields[index], name) { return index }
        return nil
    }

    /// Runs `body` over the raw value bytes of the first field named `name`.
    package func withValueBytes<R>(of name: String, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard let index = firstFieldIndex(name) else { return nil }
        let f = fields[index]
        return storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[Int(f.valueStart)..<Int(f.valueEnd)])) }
    }

    /// Rewrites received storage as wire-format lines, so fields can be appended after it.
    private mutating func normalize() {
        guard !isWireFormat else { return }
        var normalized = HTTPHeaders()
        for f in fields {
            storage.withUnsafeBytes { raw in
                normalized.appendField(name: UnsafeRawBufferPointer(rebasing: raw[Int(f.nameStart)..<Int(f.nameEnd)]),
                                       value: UnsafeRawBufferPointer(rebasing: raw[Int(f.valueStart)..<Int(f.valueEnd)]))
            }
        }
        self = normalized
    }

    /// Appends one field from raw bytes, trimming the value's surrounding whitespace.
    package mutating func appendField(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        if !isWireFormat { normalize() }
        var lo = 0, hi = value.count
        while lo < hi, value[lo] == 0x20 || value[lo] == 0x09 { lo += 1 }
        while hi > lo, value[hi - 1] == 0x20 || value[hi - 1] == 0x09 { hi -= 1 }
        fields.append(Self.writeLine(into: &storage, name: name, value: UnsafeRawBufferPointer(rebasing: value[lo..<hi])))
    }

    /// Appends "name: value\r\n" to `bytes`; the field that indexes it. The line is laid out in
    /// a temporary buffer (on the stack unless it is very long) and appended once: each append
    /// to the observed `storage` ran its observer, and each append has its own fixed cost, which
    /// a head of small fields paid six times a field.
    @inline(__always)
    private static func writeLine(into bytes: inout [UInt8], name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> Field {
        let nameStart = UInt32(bytes.count)
        let nameEnd = nameStart + UInt32(name.count)
        let length = name.count + value.count + 4
        withUnsafeTemporaryAllocation(byteCount: length, alignment: 1) { line in
            let base = line.baseAddress!
            if name.count > 0 { base.copyMemory(from: name.baseAddress!, byteCount: name.count) }
            base.storeBytes(of: UInt8(ascii: ":"), toByteOffset: name.count, as: UInt8.self)
            base.storeBytes(of: UInt8(ascii: " "), toByteOffset: name.count + 1, as: UInt8.self)
            if value.count > 0 { (base + name.count + 2).copyMemory(from: value.baseAddress!, byteCount: value.count) }
            base.storeBytes(of: 13, toByteOffset: length - 2, as: UInt8.self)
            base.storeBytes(of: 10, toByteOffset: length - 1, as: UInt8.self)
            bytes.append(contentsOf: UnsafeRawBufferPointer(line).bindMemory(to: UInt8.self))
        }
        return Field(nameStart: nameStart, nameEnd: nameEnd, valueStart: nameEnd + 2, valueEnd: nameEnd + 2 + UInt32(value.count))
    }

    /// Appends field `index` of `other` byte for byte (values outside ASCII kept as received).
    package mutating func append(fieldAt index: Int, of other: HTTPHeaders) {
        let f = other.fields[index]
        other.storage.withUnsafeBytes { raw in
            appendField(name: UnsafeRawBufferPointer(rebasing: raw[Int(f.nameStart)..<Int(f.nameEnd)]),
                        value: UnsafeRawBufferPointer(rebasing: raw[Int(f.valueStart)..<Int(f.valueEnd)]))
        }
    }

    /// Whether field `index` is named `name` (given in lower case; ASCII case-insensitive, no
    /// string made).
    package func name(at index: Int, is name: String) -> Bool {
        Self.nameMatches(storage, fields[index], name)
    }

    /// Whether field `index` has the same name as field `otherIndex` of `other`.
    package func name(at index: Int, equalsNameAt otherIndex: Int, of other: HTTPHeaders) -> Bool {
        let a = fields[index], b = other.fields[otherIndex]
        let length = Int(a.nameEnd &- a.nameStart)
        guard length == Int(b.nameEnd &- b.nameStart) else { return false }
        return storage.withUnsafeBufferPointer { mine in
            other.storage.withUnsafeBufferPointer { theirs in
                for offset in 0..<length
                where Self.asciiLower(mine[Int(a.nameStart) + offset]) != Self.asciiLower(theirs[Int(b.nameStart) + offset]) {
                    return false
                }
                return true
            }
        }
    }

    /// The raw bytes of field `index`'s name and value.
    package func withFieldBytes<R>(at index: Int, _ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> R) -> R {
        let f = fields[index]
        return storage.withUnsafeBytes { raw in
            body(UnsafeRawBufferPointer(rebasing: raw[Int(f.nameStart)..<Int(f.nameEnd)]),
                 UnsafeRawBufferPointer(rebasing: raw[Int(f.valueStart)..<Int(f.valueEnd)]))
        }
    }

    // Incremental building, for the response decoder: llhttp may hand a name or a value over in
    // several pieces when it straddles two reads.

    /// Starts a new field whose name bytes follow.
    package mutating func beginField() {
        if !isWireFormat { normalize() }
        fields.append(Field(nameStart: UInt32(storage.count), nameEnd: 0, valueStart: 0, valueEnd: 0))
    }

    /// Appends raw bytes to the field being built (a typed buffer, so the append is one memcpy).
    @inline(__always)
    package mutating func appendPartial(_ bytes: UnsafeBufferPointer<UInt8>) {
        storage.append(contentsOf: bytes)
    }

    /// Ends the name of the field being built; its value bytes follow.
    package mutating func beginValue() {
        fields[fields.count - 1].nameEnd = UInt32(storage.count)
        storage.append(UInt8(ascii: ":"))
        storage.append(UInt8(ascii: " "))
        fields[fields.count - 1].valueStart = UInt32(storage.count)
    }

    /// Ends the field being built, trimming whitespace around the value.
    package mutating func endField() {
        var f = fields[fields.count - 1]
        var end = UInt32(storage.count)
        while end > f.valueStart, storage[Int(end) - 1] == 0x20 || storage[Int(end) - 1] == 0x09 { end -= 1 }
        var start = f.valueStart
        while start < end, storage[Int(start)] == 0x20 || storage[Int(start)] == 0x09 { start += 1 }
        storage.removeLast(storage.count - Int(end))
        f.valueStart = start
        f.valueEnd = end
        fields[fields.count - 1] = f
        storage.append(13)
        storage.append(10)
    }

    /// Reserves room so building a typical head allocates once per array.
    package mutating func reserveCapacity(bytes: Int, fields: Int) {
        storage.reserveCapacity(bytes)
        self.fields.reserveCapacity(fields)
    }

    /// What the core needs to know about a request's own headers, found in one pass.
    /// Plain flags, so copying headers (which carry their summary) retains nothing more.
    package struct SendingSummary: Equatable {
        /// Some field may not be sent; `firstInvalidField()` says which.
        package var hasInvalid = false
        package var hasHost = false
        package var hasAcceptEncoding = false
        /// Content-Length or Transfer-Encoding: framing Courier decides, so they are removed.
        package var hasFraming = false
        /// `Connection: close`.
        package var asksToClose = false
        package var hasContentType = false
        /// The caller's own `Expect`: Courier adds none and holds no body back.
        package var hasExpect = false
    }

    /// Computes and keeps the sending summary; copies of this value share it until changed.
    package mutating func prepareForSending() {
        let summary = summarizeForSending()
        preparedSummary = summary
    }

    /// Validates the fields and notes the ones the encoder treats specially, in one pass.
    package func summarizeForSending() -> SendingSummary {
        var summary = SendingSummary()
        if fields.isEmpty { return summary }
        summary.hasInvalid = firstInvalidField() != nil
        for index in fields.indices {
            let f = fields[index]
            switch Int(f.nameEnd - f.nameStart) {
            case 4 where Self.nameMatches(storage, f, "Host"):
                summary.hasHost = true
            case 6 where Self.nameMatches(storage, f, "Expect"):
                summary.hasExpect = true
            case 12 where Self.nameMatches(storage, f, "Content-Type"):
                summary.hasContentType = true
            case 10 where Self.nameMatches(storage, f, "Connection"):
                let value = String(decoding: storage[Int(f.valueStart)..<Int(f.valueEnd)], as: UTF8.self).lowercased()
                if value.contains("close") { summary.asksToClose = true }
            case 14 where Self.nameMatches(storage, f, "Content-Length"):
                summary.hasFraming = true
            case 15 where Self.nameMatches(storage, f, "Accept-Encoding"):
                summary.hasAcceptEncoding = true
            case 17 where Self.nameMatches(storage, f, "Transfer-Encoding"):
                summary.hasFraming = true
            default:
                break
            }
        }
        return summary
    }

    /// Empties the list but keeps its capacity, so a connection can reuse it.
    package mutating func removeAllKeepingCapacity() {
        storage.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
    }

    /// The first field that may not be sent: a name that is not an RFC 9110 token, or a value with
    /// CR, LF, NUL or another control byte (the header-injection class of bug).
    package func firstInvalidField() -> String? {
        for f in fields {
            let name = storage[Int(f.nameStart)..<Int(f.nameEnd)]
            if name.isEmpty || !name.allSatisfy(Self.isTokenByte) {
                return "name \"\(String(decoding: name, as: UTF8.self).debugEscaped)\""
            }
            for b in storage[Int(f.valueStart)..<Int(f.valueEnd)] where (b < 0x20 && b != 0x09) || b == 0x7f {
                return "value of \"\(String(decoding: name, as: UTF8.self))\" contains byte 0x\(String(b, radix: 16))"
            }
        }
        return nil
    }

    @inline(__always)
    static func nameMatches(_ storage: [UInt8], _ field: Field, _ name: String) -> Bool {
        let length = Int(field.nameEnd &- field.nameStart)
        guard name.utf8.count == length else { return false }
        let start = Int(field.nameStart)
        // Both read in place (iterating a String's UTF-8 view costs several times more).
        if let matched = name.utf8.withContiguousStorageIfAvailable({ wanted in
            storage.withUnsafeBufferPointer { bytes in
                for offset in 0..<length where asciiLower(bytes[start + offset]) != asciiLower(wanted[offset]) { return false }
                return true
            }
        }) {
            return matched
        }
        var i = start
        for b in name.utf8 {
            if asciiLower(storage[i]) != asciiLower(b) { return false }
            i += 1
        }
        return true
    }

    @inline(__always)
    package static func asciiLower(_ b: UInt8) -> UInt8 {
        (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) ? b | 0x20 : b
    }

    /// tchar from RFC 9110 section 5.6.2.
    package static func isTokenByte(_ b: UInt8) -> Bool { ByteClass.isToken(b) }
}

extension String {
    /// The string with control characters shown as escapes, for error messages about bad bytes.
    var debugEscaped: String {
        var out = ""
        for scalar in unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7f { out += "\\x" + String(scalar.value, radix: 16) } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}
