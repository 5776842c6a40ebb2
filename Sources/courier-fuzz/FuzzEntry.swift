import CourierFuzzing
import Glibc

/// Writes to standard error (the C global is not concurrency-safe to name from Swift 6).
func complain(_ text: String) {
    _ = text.withCString { write(2, $0, strlen($0)) }
}

// courier-fuzz: Courier's fuzz targets (Sources/CourierFuzzing) behind one libFuzzer entry point.
//
//   make fuzz                                   every target, FUZZ_SECONDS each (see the Makefile)
//   COURIER_FUZZ_TARGET=response courier-fuzz Tests/Fuzz/response   libFuzzer build (-DFUZZING)
//   courier-fuzz response FILE...               plain build: replay inputs (a crash reproduces)
//   courier-fuzz --seeds cachefile DIR          plain build: write a target's generated seeds

#if FUZZING
nonisolated(unsafe) private var target: ((UnsafeRawBufferPointer) -> Void)?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> Int32 {
    let name = getenv("COURIER_FUZZ_TARGET").map { String(cString: $0) } ?? "response"
    guard let found = FuzzTargets.named(name) else {
        complain("courier-fuzz: no target \(name); targets: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n")
        exit(2)
    }
    target = found
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    target?(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
/// The plain build: replays inputs through a target, so a crash the fuzzer found reproduces
/// under a debugger. (An `@main` type rather than top-level code: the fuzzer build parses this
/// file as a library.)
@main
struct Replay {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.count == 3, arguments[0] == "--seeds" {
            writeSeeds(arguments[1], into: arguments[2])
            return
        }
        guard let name = arguments.first, let run = FuzzTargets.named(name) else {
            complain("usage: courier-fuzz TARGET FILE...\ntargets: \(FuzzTargets.all.map(\.name).joined(separator: ", "))\n")
            exit(2)
        }
        for path in arguments.dropFirst() {
            guard let file = fopen(path, "rb") else {
                complain("courier-fuzz: cannot open \(path)\n")
                exit(1)
            }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = fread(&chunk, 1, chunk.count, file)
                if n <= 0 { break }
                bytes += chunk[0..<n]
            }
            fclose(file)
            bytes.withUnsafeBytes { run($0) }
            print("ok \(path)")
        }
    }

    /// Seeds that are easier to generate than to write by hand (files in the cache's format).
    static func writeSeeds(_ name: String, into directory: String) {
        guard let seeds = FuzzTargets.generatedSeeds(name) else {
            complain("courier-fuzz: \(name) has no generated seeds\n")
            exit(2)
        }
        for (index, seed) in seeds.enumerated() {
            let path = directory + "/generated\(index)"
            guard let file = fopen(path, "wb") else {
                complain("courier-fuzz: cannot write \(path)\n")
                exit(1)
            }
            _ = seed.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
        }
    }
}
#endif
