/// What can be checked before any I/O, so a bad request fails at once with a precise error
/// instead of halfway through a connection.
///
/// Checking also prepares: the caller's framing headers are dropped (framing is Courier's to
/// decide), and what the encoder needs to know about the caller's headers is recorded on the
/// transfer, so no header is searched again on the way out.
package enum Admission {
    /// Why `transfer` cannot be sent, or nil when it can (then it is ready to encode).
    package static func check(_ transfer: Transfer) -> CourierError? {
        guard transfer._method.isValidToken else {
            return CourierError(.invalidArgument, "method \"\(transfer._method.rawValue.debugEscaped)\" is not a token")
        }
        if transfer._method == .connect {
            return CourierError(.invalidArgument, "CONNECT is not supported")
        }
        let summary = transfer._headers.preparedSummary ?? transfer._headers.summarizeForSending()
        if summary.hasInvalid {
            return CourierError(.invalidHeader, transfer._headers.firstInvalidField() ?? "")
        }
        if summary.hasFraming {
            // A caller's Content-Length or Transfer-Encoding that disagreed with the body would
            // desynchronise the connection (request smuggling).
            transfer._headers.remove(name: "Content-Length")
            transfer._headers.remove(name: "Transfer-Encoding")
        }
        transfer.userSetHost = summary.hasHost
        transfer.userSetAcceptEncoding = summary.hasAcceptEncoding
        transfer.requestAsksToClose = summary.asksToClose
        transfer.userSetExpect = summary.hasExpect
        if case .empty = transfer._body {
            transfer.requestBodyLength = 0
            return nil
        }
        return measureBody(of: transfer, summary: summary)
    }

    /// The body's length and framing (a request with a body: kept off the bodiless path).
    @inline(never)
    private static func measureBody(of transfer: Transfer, summary: HTTPHeaders.SendingSummary) -> CourierError? {
        switch transfer._body {
        case .empty:
            transfer.requestBodyLength = 0
        case .bytes(let bytes):
            transfer.requestBodyLength = UInt64(bytes.count)
        case .file(let path):
            switch FileBodySource.size(of: path) {
            case .success(let size): transfer.requestBodyLength = size
            case .failure(let error): return error
            }
        case .multipart(let form):
            switch form.length() {
            case .success(let size): transfer.requestBodyLength = size
            case .failure(let error): return error
            }
            if !summary.hasContentType { transfer._headers.add(name: "Content-Type", value: form.contentType) }
        case .stream(let stream):
            transfer.requestBodyLength = stream.length ?? 0
            transfer.requestBodyChunked = stream.length == nil
            if stream.length == nil, transfer._options.sendsHTTP10 {
                return CourierError(.invalidArgument, "a body of unknown length cannot be sent over HTTP/1.0 (it has no chunked encoding)")
            }
        }
        return nil
    }
}
