import CourierCore

extension RequestDraft {
    /// Takes the credentials an `Authenticator` supplies: for the origin they replace whatever
    /// the request would have sent (a hand-set or default `Authorization` field too: those were
    /// what was refused); for a proxy, Basic credentials become the proxy's own (sent in the
    /// CONNECT request or to the forwarding proxy, never to the origin). Other kinds of proxy
    /// credentials are not applied. Returns false when nothing changed.
    @discardableResult
    package mutating func adopt(_ credentials: Authorization, forProxy: Bool) -> Bool {
        guard forProxy else {
            authorization = credentials
            if headers.contains("Authorization") { headers.remove(name: "Authorization") }
            if defaultHeaders.contains("Authorization") { suppressedHeaders.append("Authorization") }
            return true
        }
        guard case .basic(let user, let password) = credentials else { return false }
        var settings = options.proxy
        guard !settings.isDirect else { return false }
        settings.http?.user = user
        settings.http?.password = password
        settings.https?.user = user
        settings.https?.password = password
        options.proxy = settings
        return true
    }

    /// Before a request is first sent: the authenticator's current credentials, unless the
    /// request brings its own. Returns the generations they belong to.
    package mutating func adoptCurrent(from authenticator: Authenticator) -> (Int, Int) {
        let (origin, proxy, generations) = authenticator.credentials()
        if let origin, authorization == nil { authorization = origin }
        if let proxy { adopt(proxy, forProxy: true) }
        return generations
    }
}
