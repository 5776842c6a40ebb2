import CourierCore

extension OwnedCString {
    /// `url` as its `description` spells it, written straight into C memory (see
    /// `CourierURL.appendDescription`): courier_response_url is read for every response by the
    /// bindings (Python's Response carries its URL).
    static func url(_ url: CourierURL) -> OwnedCString {
        var text = RawBuffer(capacity: 128)
        defer { text.free() }
        url.appendDescription(to: &text)
        return OwnedCString(copying: text.bytes)
    }
}
