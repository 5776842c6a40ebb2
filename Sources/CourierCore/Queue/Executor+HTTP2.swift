/// HTTP/2 in the executor: which connections speak it, handing a negotiated connection's stream
/// to an `HTTP2Connection`, starting streams on it, and what its connections report.
extension Executor {
    /// A new connection of a key that may speak HTTP/2 is up: it becomes an HTTP/2 connection
    /// when ALPN chose h2 (or prior knowledge says so). Returns true when it stays HTTP/1 and
    /// the caller goes on with it; false when it was handed over or refused.
    func protocolChosen(_ connection: HTTP1Connection) -> Bool {
        let key = connection.poolKey
        let version = keys.versions[key]
        let speaksHTTP2: Bool
        if connection.origin.scheme == .https {
            speaksHTTP2 = connection.tlsDetails?.alpn == "h2"
        } else {
            speaksHTTP2 = version == .http2Only && keys.proxies[key] == nil
        }
        if speaksHTTP2 {
            upgrade(connection)
            return false
        }
        if version == .http2Only {
            // The server would not agree to h2: HTTP/2 or nothing was asked.
            connection.closeFromPool()
            let alpn = connection.tlsDetails?.alpn ?? ""
            connectionFailed(connection, error: CourierError(.http2NotNegotiated,
                alpn.isEmpty ? "the server chose no protocol by ALPN" : "the server chose \(alpn) by ALPN"))
            return false
        }
        openConnections(pool.learnedHTTP1(key: key), key: key)
        return true
    }

    /// Hands `connection`'s stream to a new HTTP/2 connection, which serves the waiting requests.
    private func upgrade(_ connection: HTTP1Connection) {
        let key = connection.poolKey
        connections[connection.id] = nil
        let stream = connection.retireForHandOver()
        let ping = keys.pingIntervals[key]?.millisecondsRoundedUp
        let limits = HTTP2ConnectionStateMachine.Limits(idle: HTTP2Connection.idleLimitMillis, keepAlivePingInterval: ping.map { max(1, $0) } ?? .max)
        let http2 = HTTP2Connection(id: connection.id, poolKey: key, origin: connection.origin, stream: stream, owner: self,
                                    uvLoop: loop.uvLoop, limits: limits)
        http2.trace = connection.trace
        http2Connections[http2.id] = http2
        let limit = http2.machine.peerStreamLimit
        let (served, count) = pool.connectedMultiplexed(HTTP2Ref(http2), key: key, limit: limit)
        for ref in served { assignStream(on: http2, to: ref.transfer) }
        openConnections(count, key: key)
        streamsPerConnectionChanged(limit, key: key)
    }

    /// The host's operations may run `limit` per connection now.
    private func streamsPerConnectionChanged(_ limit: Int, key: Int) {
        for started in scheduler.setStreamsPerConnection(limit, for: keys.hostOfPoolKey[key]) { start(started.transfer) }
    }

    /// Starts `transfer` as a stream of `connection`.
    func assignStream(on connection: HTTP2Connection, to transfer: Transfer) {
        prepareExchange(of: transfer, reused: connection.streamsBegun > 0, timings: connection.timings,
                        remoteEndpoint: connection.remoteEndpoint)
        connection.begin(transfer)
    }

    // MARK: - HTTP2ConnectionDelegate

    func http2CapacityChanged(_ connection: HTTP2Connection, limit: Int) {
        let served = pool.streamLimitChanged(HTTP2Ref(connection), key: connection.poolKey, limit: limit)
        for ref in served { assignStream(on: connection, to: ref.transfer) }
        streamsPerConnectionChanged(limit, key: connection.poolKey)
    }

    func http2ConnectionDraining(_ connection: HTTP2Connection) {
        openConnections(pool.multiplexedGone(HTTP2Ref(connection), key: connection.poolKey), key: connection.poolKey)
    }

    func http2ConnectionClosed(_ connection: HTTP2Connection) {
        http2Connections[connection.id] = nil
        openConnections(pool.multiplexedGone(HTTP2Ref(connection), key: connection.poolKey), key: connection.poolKey)
    }

    func http2StreamFinished(_ connection: HTTP2Connection, _ transfer: Transfer, outcome: ExchangeOutcome) {
        transfer.carrier = nil
        if !transfer._options.reuseConnection || transfer.requestAsksToClose {
            // (curl's FORBID_REUSE on HTTP/2: the connection ends with its last stream.)
            openConnections(pool.multiplexedGone(HTTP2Ref(connection), key: connection.poolKey), key: connection.poolKey)
            connection.closeAfterStreams()
        }
        if case .serve(let next) = pool.streamEnded(on: HTTP2Ref(connection), key: connection.poolKey), !shuttingDown {
            assignStream(on: connection, to: next.transfer)
        }
        switch outcome {
        case .success:
            budgets.exchangeSucceeded(host: transfer.poolKey, status: transfer._status)
            execute(transfer.machine.exchangeEnded(outcome, mayReplay: true, shuttingDown: shuttingDown), for: transfer)
        case .failure(let error, let replay):
            if replay, error.code == .http2NotNegotiated {
                // HTTP_1_1_REQUIRED: this origin gets HTTP/1.1 from now on.
                keys.rememberHTTP1(connection.origin)
            }
            // A stream the server did not process, on a connection where it answered others
            // (nginx ending a connection after keepalive_requests with a GOAWAY): it goes again
            // as often as that happens, without spending the request's one replay; a server
            // that answers nothing and refuses gets the one replay only.
            let unprocessed = replay && error.code == .http2StreamReset && connection.streamsCompleted > 0
            exchangeFailed(transfer, outcome, unprocessed: unprocessed)
        }
    }
}
