/// The next hop of a redirect, decided without I/O (RFC 9110 section 15.4).
package enum RedirectDecision: Equatable {
    /// Not a redirect, or redirects are off: the response is the result.
    case deliver
    /// Follow to the next hop.
    case follow(RedirectHop)
    /// Refuse, with this error.
    case fail(CourierError)

    /// Statuses that redirect. 300 (Multiple Choices) and 304 are not followed automatically.
    package static func isRedirect(_ status: Int) -> Bool {
        status == 301 || status == 302 || status == 303 || status == 307 || status == 308
    }

    /// Why going from `current` to `target` is refused: https to http unless the policy allows it.
    package static func downgradeRefusal(from current: CourierURL, to target: CourierURL, policy: RedirectPolicy) -> CourierError? {
        guard current.scheme == .https, target.scheme == .http, !policy.allowsHTTPSDowngrade else { return nil }
        return CourierError(.redirectDowngrade, "\(current) -> \(target)")
    }

    /// Decides what to do with a response.
    /// - Parameters:
    ///   - redirectsSoFar: redirects already followed in this transfer.
    ///   - hsts: the request's HSTS store: an http Location to a host it knows is the https URL
    ///     before any rule judges it (so it is no downgrade, and its origin is the https one).
    package static func decide(status: Int, location: String?, current: CourierURL, method: HTTPMethod,
                               policy: RedirectPolicy, redirectsSoFar: Int, hsts: HSTSStore? = nil) -> RedirectDecision {
        guard policy.follow, isRedirect(status) else { return .deliver }
        guard let location, !location.isEmpty else {
            // RFC 9110 allows a 3xx without Location; it is then just a response.
            return .deliver
        }
        guard redirectsSoFar < policy.maxRedirects else {
            return .fail(CourierError(.tooManyRedirects, "more than \(policy.maxRedirects)"))
        }
        var target: CourierURL
        do {
            target = try current.resolving(location)
        } catch let error where error.code == .unsupportedScheme {
            return .fail(CourierError(.redirectSchemeNotAllowed, location.debugEscaped))
        } catch {
            return .fail(CourierError(.redirectWithoutLocation, "unusable Location \"\(location.debugEscaped)\": \(error.message)"))
        }
        if let upgraded = hsts?.upgrade(target) { target = upgraded }
        if let refusal = downgradeRefusal(from: current, to: target, policy: policy) { return .fail(refusal) }
        // 303 turns everything but HEAD into GET; 301 and 302 turn POST into GET as every browser
        // and curl do (RFC 9110 notes this as allowed); 307 and 308 keep method and body.
        var newMethod = method
        switch status {
        case 303 where method != .head:
            newMethod = .get
        case 301, 302:
            if method == .post { newMethod = .get }
        default:
            break
        }
        return .follow(RedirectHop(url: target, method: newMethod, dropBody: newMethod != method,
                                   crossOrigin: target.origin != current.origin, sendsReferer: policy.autoReferer))
    }

}

/// The next request of a redirect chain, and how the current one is rewritten into it.
package struct RedirectHop: Equatable, Sendable {
    /// Where the next request goes.
    package var url: CourierURL
    /// Its method (POST may have become GET).
    package var method: HTTPMethod
    /// The method changed to GET: the body and the fields describing it go.
    package var dropBody: Bool
    /// The hop leaves the origin: credentials must not follow.
    package var crossOrigin: Bool
    /// The hop sends the URL it comes from as `Referer` (`RedirectPolicy.autoReferer`). A flag, not
    /// the text: the hop travels in every transfer action, and a String in it made each action
    /// dearer to move and destroy (about 40 instructions per request).
    package var sendsReferer: Bool

    package init(url: CourierURL, method: HTTPMethod, dropBody: Bool, crossOrigin: Bool, sendsReferer: Bool = false) {
        self.url = url
        self.method = method
        self.dropBody = dropBody
        self.crossOrigin = crossOrigin
        self.sendsReferer = sendsReferer
    }

    /// Fields that carry credentials and must not be sent to another origin.
    package static let credentialFields = ["Authorization", "Cookie", "Proxy-Authorization"]
    /// Fields that describe a body and go when the body does.
    package static let bodyFields = ["Content-Type", "Content-Encoding", "Content-Language", "Content-Location", "Transfer-Encoding", "Content-Length"]

    /// Rewrites a request into this hop (the caller moves it to `url`): the new method; across
    /// origins no credentials, and no Host the caller set (it named the old origin); without the
    /// body, none of the fields that described it; the automatic Referer (`current`, the URL being
    /// left) when asked for.
    /// `hostSetByCaller` is cleared with the caller's Host.
    package func apply(method: inout HTTPMethod, headers: inout HTTPHeaders,
                       body: inout RequestBody, hostSetByCaller: inout Bool, from current: @autoclosure () -> CourierURL) {
        if crossOrigin {
            for name in Self.credentialFields where headers.contains(name) { headers.remove(name: name) }
            if hostSetByCaller {
                headers.remove(name: "Host")
                hostSetByCaller = false
            }
        }
        if dropBody {
            body = .empty
            for name in Self.bodyFields where headers.contains(name) { headers.remove(name: name) }
        }
        // (CourierURL's description has neither credentials nor fragment.)
        if sendsReferer { headers.replaceOrAdd(name: "Referer", value: current().description) }
        method = self.method
    }
}
