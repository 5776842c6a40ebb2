import Courier
import Glibc

final class D: TransferDelegate, @unchecked Sendable {
    var sem = DispatchSemaphoreLite()
    func transferDidReceiveHead(_ transfer: Transfer) {}
    func transferDidProgress(_ transfer: Transfer) {}
    func transferDidComplete(_ t: Transfer) {
        print(t.head?.status ?? -1, t.responseBody.count, t.error?.message ?? "ok", t.metrics.reusedConnection, t.metrics.total)
        sem.signal()
    }
}
struct DispatchSemaphoreLite: @unchecked Sendable {
    let s = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    init() { sem_init(s, 0, 0) }
    func signal() { sem_post(s) }
    func wait() { sem_wait(s) }
}
let d = D()
for u in CommandLine.arguments.dropFirst() {
    let t = Transfer(url: try! CourierURL(parsing: u))
    t.delegate = d
    Runtime.shared.submit(t)
    d.sem.wait()
}
Runtime.shared.shutdown()
print("shutdown ok")
