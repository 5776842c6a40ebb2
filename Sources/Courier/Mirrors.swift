import CourierCore

// What `dump`, a debugger and a test library's failure message show of the facade's objects: a
// summary read through each object's own accessors (its lock, or fields that no longer change).
// The default mirror walks stored properties instead: a response's body one child per byte (a
// 64 MiB body is 64 million children, seconds of CPU for one failed expectation), and state that
// Courier's loop thread owns, read from another thread without its lock — a race that, in a
// failing test, retained a transfer the loop was deallocating and ended the process.

extension HTTPOperation: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["method": method, "url": urlString, "state": state,
                                "response": response as Any, "error": error as Any], displayStyle: .class)
    }
}

extension Response: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["status": status, "url": url.description, "headers": headers.description,
                                "bodyBytes": body.count, "cacheStatus": cacheStatus, "metrics": metrics],
               displayStyle: .struct)
    }
}

extension Engine: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "baseURL": baseURL?.description as Any,
                                "cached": configuration.cache != nil, "outbox": configuration.outbox != nil],
               displayStyle: .class)
    }
}

extension Cache: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["directory": configuration.directory as Any, "memoryCapacity": configuration.memoryCapacity,
                                "diskCapacity": configuration.diskCapacity], displayStyle: .class)
    }
}

extension Outbox: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["waiting": waiting.count, "retryInterval": retryInterval], displayStyle: .class)
    }
}
