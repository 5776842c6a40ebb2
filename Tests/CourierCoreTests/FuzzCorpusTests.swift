import Foundation
import Testing
import CourierFuzzing

/// Every fuzz target over its committed corpus (`Tests/Fuzz/<target>/`): the inputs the fuzzers
/// started from and every crash, hang or trap they ever found, kept as regression tests. The
/// targets check their own properties (they trap on a violation), so a run that returns passed.
@Suite("Fuzz corpora")
struct FuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz").path

    @Test(arguments: FuzzTargets.all.map(\.name))
    func replay(_ target: String) throws {
        let directory = Self.root + "/" + target
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(!files.isEmpty, "no corpus for \(target)")
        let run = FuzzTargets.named(target)!
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + file)))
            bytes.withUnsafeBytes { run($0) }
        }
    }
}
