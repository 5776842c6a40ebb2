import CourierCore

/// An engine's hooks as its requests carry them: one reference (a nil test for requests of
/// engines without hooks, one retain to hand on), and how a front end (a Swift operation, a C
/// request) applies them to its transfer.
package final class HookSet: Sendable {
    package let hooks: EngineHooks

    /// The set for `hooks`, nil when none is set.
    package static func make(_ hooks: EngineHooks) -> HookSet? { hooks.isEmpty ? nil : HookSet(hooks) }

    private init(_ hooks: EngineHooks) { self.hooks = hooks }

    package var adaptRequest: (@Sendable (inout OutgoingRequest) throws -> Void)? { hooks.adaptRequest }
    package var observesRedirects: Bool { hooks.redirect != nil }

    /// The verdict on a finished transfer with `validateResponse` applied, and the response made
    /// for the hook (nil when none was).
    package func judge(_ transfer: Transfer, accepting acceptable: Range<Int>) -> (TransferVerdict, Response?) {
        guard let validate = hooks.validateResponse else { return (TransferVerdict(transfer, accepting: acceptable), nil) }
        var judged: Response?
        let verdict = TransferVerdict(transfer, accepting: acceptable) { finished in
            let response = Response(finished: finished)
            judged = response
            do {
                try validate(response)
                return nil
            } catch {
                return .rejected(by: error)
            }
        }
        return (verdict, judged)
    }

    /// Tells `observeMetrics` how `transfer` ended.
    package func report(_ transfer: Transfer, error: CourierError?) {
        guard let observeMetrics = hooks.observeMetrics else { return }
        observeMetrics(CompletedRequest(method: transfer.method, url: transfer.url, status: transfer.status,
                                        error: error, metrics: transfer.metrics))
    }

    /// `redirect`'s say on a hop (true: follow it, perhaps changed).
    package func decideRedirect(_ transfer: Transfer, status: Int, hop: inout RedirectHop) -> Bool {
        guard let redirect = hooks.redirect else { return true }
        switch redirect(Redirect(status: status, from: transfer.url, to: hop.url, method: hop.method)) {
        case .follow: return true
        case .refuse: return false
        case .rewrite(let url):
            hop.url = url
            return true
        }
    }
}
