import CourierCore

// What `import Courier` names besides the facade's own types: the core's vocabulary, chosen one
// type at a time. The core's other public declarations serve the C ABI and the CLI and are not
// part of the Swift API (the core is no longer re-exported wholesale). `Tests/API/Courier.api`
// lists the whole surface; `make test` fails when it changes without the listing.

// Requests
public typealias HTTPMethod = CourierCore.HTTPMethod
public typealias HTTPHeaders = CourierCore.HTTPHeaders
public typealias CourierURL = CourierCore.CourierURL
public typealias TimeCondition = CourierCore.TimeCondition
public typealias RequestBody = CourierCore.RequestBody
public typealias BodyStream = CourierCore.BodyStream
public typealias MultipartForm = CourierCore.MultipartForm
public typealias ExpectContinue = CourierCore.ExpectContinue

// Responses and errors
public typealias ResponseHead = CourierCore.ResponseHead
public typealias RedirectedResponse = CourierCore.RedirectedResponse
public typealias TransferMetrics = CourierCore.TransferMetrics
public typealias CourierError = CourierCore.CourierError

// Options
public typealias TransferOptions = CourierCore.TransferOptions
public typealias Timeouts = CourierCore.Timeouts
public typealias Nanoseconds = CourierCore.Nanoseconds
public typealias RedirectPolicy = CourierCore.RedirectPolicy
public typealias ResponseLimits = CourierCore.ResponseLimits
public typealias RetryPolicy = CourierCore.RetryPolicy
public typealias RetryReason = CourierCore.RetryReason
public typealias Priority = CourierCore.Priority
public typealias Coalescing = CourierCore.Coalescing
public typealias ConnectRoute = CourierCore.ConnectRoute

// Caching
public typealias CachePolicy = CourierCore.CachePolicy
public typealias CachePhase = CourierCore.CachePhase
public typealias CacheStatistics = CourierCore.CacheStatistics

// Cookies, proxies, TLS
public typealias Cookie = CourierCore.Cookie
public typealias CookieJar = CourierCore.CookieJar
public typealias Proxy = CourierCore.Proxy
public typealias ProxySettings = CourierCore.ProxySettings
public typealias NoProxy = CourierCore.NoProxy
public typealias TLSConfiguration = CourierCore.TLSConfiguration
public typealias PinSet = CourierCore.PinSet
public typealias PinningMode = CourierCore.PinningMode
public typealias TrustEvaluator = CourierCore.TrustEvaluator
public typealias TrustContext = CourierCore.TrustContext

// The shared queue, the network, the outbox
public typealias QueueActivity = CourierCore.QueueActivity
public typealias NetworkStatus = CourierCore.NetworkStatus
public typealias NetworkKind = CourierCore.NetworkKind
public typealias NetworkWidths = CourierCore.NetworkWidths
public typealias HostReachability = CourierCore.HostReachability
public typealias OutboxEntry = CourierCore.OutboxEntry

/// The outbox's limits under their former top-level name.
@available(*, deprecated, renamed: "Outbox.Limits")
public typealias OutboxLimits = CourierCore.OutboxLimits

/// The operation's former name, which collides with Foundation's `Operation` in any file that
/// imports both.
@available(*, deprecated, renamed: "HTTPOperation", message: "renamed HTTPOperation: Operation collides with Foundation's")
public typealias Operation = HTTPOperation
