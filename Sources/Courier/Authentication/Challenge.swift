import CourierCore

/// A 401 from the origin, or a 407 from a proxy, that an `Authenticator` may answer.
public struct Challenge: Sendable {
    /// 401 or 407.
    public let status: Int
    /// The URL of the request that was refused.
    public let url: CourierURL
    /// True for a proxy's 407 (its credentials go to the proxy, as `Proxy-Authorization`).
    public let isProxy: Bool
    /// The `WWW-Authenticate` (or `Proxy-Authenticate`) values, in order (empty for a refused
    /// CONNECT tunnel, whose answer Courier does not keep).
    public let schemes: [String]

    /// The challenge `transfer` ended with, or nil: a 401, a 407 from a proxy forwarding an http
    /// request, or a CONNECT tunnel refused with 407; only for a body that can be sent again.
    package static func of(_ transfer: Transfer) -> Challenge? {
        guard transfer.body.isReplayable else { return nil }
        let status: Int
        var isProxy = false
        if let error = transfer.error {
            guard error.code == .proxyTunnelRefused, error.status == 407 else { return nil }
            status = 407
            isProxy = true
        } else if transfer.status == 401 || transfer.status == 407 {
            status = transfer.status
            isProxy = status == 407
        } else {
            return nil
        }
        let field = isProxy ? "Proxy-Authenticate" : "WWW-Authenticate"
        return Challenge(status: status, url: transfer.url, isProxy: isProxy,
                         schemes: transfer.head?.headers.values(for: field) ?? [])
    }
}
