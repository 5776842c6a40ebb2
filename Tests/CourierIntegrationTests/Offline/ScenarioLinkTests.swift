import Foundation
import Testing

/// The slow-network scenarios' machinery in short (benchmarks/scenario/short_test.py): two
/// namespaces joined by a shaped veth, a delay line, the client's end named as a modem so the
/// queue is 2 wide, background uploads the server reads slowly, then a view's thumbnails at high
/// priority. Asserts the order (the thumbnails start beside the uploads and end before the first
/// upload), that every request succeeds and that the namespaces are removed; not times.
@Suite("Scenario link")
struct ScenarioLinkTests {
    static var canShapeALink: Bool {
        NetworkNamespaceTests.canCreateNamespaces && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft")
            && FileManager.default.isExecutableFile(atPath: "/usr/sbin/tc")
    }

    @Test(.enabled(if: canShapeALink, "a shaped link needs root, iproute2 (ip, tc), nftables and network namespaces"))
    func backgroundUploadsDoNotHoldAViewsThumbnails() async throws {
        let run = try await runProcess("/usr/bin/python3", [TestServers.packageRoot + "/benchmarks/scenario/short_test.py"],
                                       environment: ["COURIER_LIBRARY": CABITests.library])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
    }
}
