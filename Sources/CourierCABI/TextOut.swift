import CourierCore

/// Writes `text` into a caller's buffer as snprintf does (the C ABI's text outputs:
/// courier_json_pretty, courier_request_curl_command, the network's interface names): at most
/// `capacity` bytes, always NUL-terminated when capacity > 0, and the whole length (without the
/// NUL) in *needed when asked, so a first call with capacity 0 sizes the buffer.
func writeText(_ text: String, _ out: UnsafeMutablePointer<CChar>?, _ capacity: Int, _ needed: UnsafeMutablePointer<Int>? = nil) {
    let bytes = Array(text.utf8)
    needed?.pointee = bytes.count
    guard let out, capacity > 0 else { return }
    let copied = min(bytes.count, capacity - 1)
    bytes.withUnsafeBytes { raw in
        if copied > 0 { UnsafeMutableRawPointer(out).copyMemory(from: raw.baseAddress!, byteCount: copied) }
    }
    out[copied] = 0
}
