import Courier
import CourierCore
import Dispatch
import Glibc

/// `courier --watch-network [URL...]`: the status now, then one line per change as netlink
/// reports it, with the queue's width it leads to (`wired eth0 reachable width 6`, `cellular
/// wwan0 reachable width 0` with `--wifi-only`, `none - unreachable width 6`: no network keeps the
/// width), flushed at once so a pipe sees it live. With URLs, each status line is followed by one per URL's host saying whether it can be
/// reached and why (`  198.51.100.2 unreachable no-route`, `  example.com reachable routed eth0`).
enum NetworkWatch {
    static func run(seconds: Double?, urls: [String]) -> Never {
        let hosts = urls.compactMap { (try? CourierURL(parsing: $0))?.host }
        let ready = DispatchSemaphore(value: 0)
        // The observer first, then the status: a change between the two is in the status, and
        // none is lost (a link that went down right after the first line was once missed).
        // Both run on the loop thread, so the flag needs no lock.
        let started = LoopFlag()
        _ = Runtime.shared.addNetworkObserver { status in
            if started.on { report(status, hosts: hosts) }
        }
        Runtime.shared.networkStatus { status in
            report(status, hosts: hosts)
            started.on = true
            ready.signal()
        }
        ready.wait()
        if let seconds {
            usleep(UInt32(min(seconds, 4000) * 1_000_000))
            Runtime.shared.shutdown()
            exit(0)
        }
        while true { pause() }
    }

    /// A flag only the loop thread reads and writes.
    private final class LoopFlag: @unchecked Sendable {
        var on = false
    }

    /// The status line, then the hosts' lines, one host after the other (each answer may wait
    /// for a name lookup; the loop thread runs this and the answers).
    private static func report(_ status: NetworkStatus, hosts: [String]) {
        // (The width for the new network applies before observers hear of it.)
        Terminal.write("\(status) width \(Runtime.shared.width)\n")
        ask(hosts[...])
    }

    private static func ask(_ hosts: ArraySlice<String>) {
        guard let host = hosts.first else { return }
        Runtime.shared.hostReachability(host) { answer in
            Terminal.write("  \(answer)\n")
            ask(hosts.dropFirst())
        }
    }
}
