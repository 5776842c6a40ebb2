/// Opening and closing connections, and what they report: established, failed, idle closed,
/// an exchange finished.
extension Executor {
    // MARK: - Connections

    func openConnections(_ count: Int, key: Int) {
        guard !shuttingDown else { return }
        for _ in 0..<count {
            let origin = keys.origins[key]
            let proxy = keys.proxies[key]
            let choices = keys.connectChoices[key]
            let delay = (choices?.happyEyeballsDelay ?? ConnectChoices.defaultDelay).millisecondsRoundedUp
            var stack = StreamStack(origin: origin, proxy: proxy, route: keys.routes[key], tls: keys.tlsContexts[key],
                                    attemptDelayMillis: delay)
            stack.alpn = keys.versions[key].alpn
            stack.proxyTLS = keys.proxyTLSContexts[key]
            let trace = choices?.traces == true ? ConnectionTrace(connectionID: nextConnectionID) : nil
            let stream = stack.make(resolver: resolver, uvLoop: loop.uvLoop, sessions: sessions, sessionKey: key, trace: trace)
            let connection = HTTP1Connection(id: nextConnectionID, poolKey: key, origin: origin, stream: stream, owner: self,
                                             resources: resources, uvLoop: loop.uvLoop, connectTimeout: keys.connectTimeouts[key],
                                             forwardingProxy: stack.forwardingProxy)
            connection.trace = trace
            nextConnectionID += 1
            connections[connection.id] = connection
            connection.connect()
        }
    }

    func close(_ connection: HTTP1Connection) {
        connections[connection.id] = nil
        connection.closeFromPool()
    }

    func connectionEstablished(_ connection: HTTP1Connection) {
        outcomes.record(.connected, host: keys.hostOfPoolKey[connection.poolKey], nowMillis: loop.nowMillis)
        if _slowPath(keys.multiplexes[connection.poolKey]) || keys.versions[connection.poolKey] == .http2Only {
            guard protocolChosen(connection) else { return }
        }
        switch pool.connected(ConnectionRef(connection), key: connection.poolKey) {
        case .serve(let ref):
            assign(connection, to: ref.transfer)
        case .park:
            connection.becameIdle()
        case .close(let count):
            close(connection)
            openConnections(count, key: connection.poolKey)
        }
    }

    func connectionFailed(_ connection: HTTP1Connection, error: CourierError) {
        outcomes.record(HostOutcomes.outcome(of: error), host: keys.hostOfPoolKey[connection.poolKey], nowMillis: loop.nowMillis)
        connections[connection.id] = nil
        let (failed, served, count) = pool.connectFailed(key: connection.poolKey)
        openConnections(count, key: connection.poolKey)
        if let served { assign(served.connection.connection, to: served.request.transfer) }
        guard let transfer = failed?.transfer else { return }
        // What the attempt learned is the failure's context (curl's ssl_verify_result).
        transfer.metrics.record(connection.timings)
        transfer.metrics.connectionsOpened += 1
        let error = connection.trace.map { error.tracing($0) } ?? error
        execute(transfer.machine.connectFailed(error, retry: retryInput(for: transfer, responseStarted: false)), for: transfer)
    }

    func idleConnectionClosed(_ connection: HTTP1Connection) {
        connections[connection.id] = nil
        pool.idleClosed(ConnectionRef(connection), key: connection.poolKey)
    }

    func exchangeFinished(_ connection: HTTP1Connection, _ transfer: Transfer, outcome: ExchangeOutcome) {
        transfer.carrier = nil
        var reusable = false
        if case .success(let canReuse) = outcome { reusable = canReuse && !shuttingDown }
        if !reusable { connections[connection.id] = nil }
        switch pool.release(ConnectionRef(connection), key: connection.poolKey, reusable: reusable) {
        case .serve(let next):
            assign(connection, to: next.transfer)
        case .park:
            connection.becameIdle()
        case .close(let count):
            if reusable { close(connection) }
            openConnections(count, key: connection.poolKey)
        }
        guard case .failure = outcome else {
            budgets.exchangeSucceeded(host: transfer.poolKey, status: transfer._status)
            execute(transfer.machine.exchangeEnded(outcome, mayReplay: transfer._options.retryStaleConnection,
                                                   shuttingDown: shuttingDown), for: transfer)
            return
        }
        exchangeFailed(transfer, outcome)
    }

    /// The end of an exchange that failed: a resumable download may continue, a retry policy
    /// may send the request again.
    @inline(never)
    func exchangeFailed(_ transfer: Transfer, _ outcome: ExchangeOutcome, unprocessed: Bool = false) {
        var canResume = false
        if case .resumable(let download) = transfer._sink {
            canResume = download.record != nil && download.bytesOnDisk > 0
        }
        execute(transfer.machine.exchangeEnded(outcome, mayReplay: transfer._options.retryStaleConnection, unprocessed: unprocessed,
                                               shuttingDown: shuttingDown, resumeLimit: transfer._options.resumeAttempts,
                                               canResume: canResume, retry: retryInput(for: transfer, responseStarted: transfer._status != 0)),
                for: transfer)
    }
}
