// The facade re-exports the core's public vocabulary (CourierError, HTTPHeaders, HTTPMethod,
// CourierURL, Timeouts, TransferMetrics, ...), so `import Courier` is all an application needs.
@_exported import CourierCore
