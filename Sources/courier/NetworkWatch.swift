import Courier
import CourierCore
import Dispatch
import Glibc

/// `courier --watch-network`: the status now, then one line per change as netlink reports it
/// (`wired eth0 reachable`, `none - unreachable`), flushed at once so a pipe sees it live.
enum NetworkWatch {
    static func run(seconds: Double?) -> Never {
        let ready = DispatchSemaphore(value: 0)
        Runtime.shared.networkStatus { status in
            Terminal.write("\(status)\n")
            ready.signal()
        }
        ready.wait()
        _ = Runtime.shared.addNetworkObserver { status in Terminal.write("\(status)\n") }
        if let seconds {
            usleep(UInt32(min(seconds, 4000) * 1_000_000))
            Runtime.shared.shutdown()
            exit(0)
        }
        while true { pause() }
    }
}
