/// What a request sent to an HTTP proxy (an http URL, no tunnel) carries besides its usual head:
/// the target in absolute form (RFC 9112 §3.2.2, `GET http://host:port/path HTTP/1.1`) and the
/// proxy's credentials. Made once per connection, not per request.
package struct ForwardProxy {
    /// `http://host[:port]`, written before the path.
    package let targetPrefix: String
    /// The `Proxy-Authorization` value, nil without credentials.
    package let authorization: String?

    /// For requests to the origin whose `Host` value is `hostHeader`, through `proxy`.
    package init(hostHeader: String, proxy: Proxy) {
        targetPrefix = "http://" + hostHeader
        authorization = proxy.authorization
    }
}
