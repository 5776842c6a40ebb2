/// A response that sent the request elsewhere (a 3xx followed): where it came from and its head.
/// Its body was read and dropped so the connection could be reused.
public struct RedirectedResponse: Sendable, Equatable {
    /// The URL that answered with the redirect.
    public var url: CourierURL
    /// Its status line and headers (Location among them).
    public var head: ResponseHead

    public init(url: CourierURL, head: ResponseHead) {
        self.url = url
        self.head = head
    }
}
